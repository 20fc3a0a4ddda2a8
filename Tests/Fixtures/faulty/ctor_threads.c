/* ctor_threads: a constructor starts four detached threads that sleep
 * forever, then the plugin answers normally. The call succeeds; the
 * threads die with the process group. */
#define FX_NAME "ctor_threads"
#include "fixture.h"

#include <pthread.h>
#include <unistd.h>

static void *sleeper(void *arg) {
    (void)arg;
    for (;;) sleep(3600);
    return NULL;
}

__attribute__((constructor)) static void start_threads(void) {
    for (int i = 0; i < 4; i++) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, sleeper, NULL) == 0) pthread_detach(thread);
    }
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, fx_timeline_ok)
