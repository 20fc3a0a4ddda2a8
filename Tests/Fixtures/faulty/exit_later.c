/* exit_later: the timeline answers at once, and a thread it leaves behind
 * ends the whole process 50 ms later, between calls. The host notices
 * before the next call (the worker's pidfd) and gives it to a fresh
 * worker; no call fails for it. */
#define FX_NAME "exit_later"
#include "fixture.h"

#include <pthread.h>
#include <unistd.h>

static void *later(void *unused) {
    (void)unused;
    usleep(50 * 1000);
    _exit(3);
}

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, later, NULL) == 0) pthread_detach(thread);
    fx_timeline_ok(ctx, complete, completion_context);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
