/* warm_up_threads: BAD — its warm_up starts a thread and leaves it running,
 * so the fork server cannot fork it safely. The host must run the plugin
 * without the warm-up and say why. */
#include <pthread.h>
#include <unistd.h>

static void *fx_sleeper(void *arg) {
    (void)arg;
    for (;;) pause();
    return NULL;
}

static void fx_start_thread(void) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, fx_sleeper, NULL) == 0) pthread_detach(thread);
}

#define FX_NAME "warm_up_threads"
#define FX_WARM_UP_BEHAVIOUR fx_start_thread()
#include "warm_up.h"
