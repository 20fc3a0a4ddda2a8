/* late_write_fd3: the timeline answers at once, and a thread it leaves
 * behind writes a forged RESULT-looking frame on fd 3 (the channel) 50 ms
 * later, between calls. A warm worker that speaks out of turn is retired
 * before its next call; no call fails for it. */
#define FX_NAME "late_write_fd3"
#include "fixture.h"

#include <pthread.h>
#include <unistd.h>

static void *later(void *unused) {
    (void)unused;
    usleep(50 * 1000);
    static const unsigned char frame[16] = {'W', 'H', 'W', '1', 7, 0, 103, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    ssize_t n = write(3, frame, sizeof frame);
    (void)n;
    return NULL;
}

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, later, NULL) == 0) pthread_detach(thread);
    fx_timeline_ok(ctx, complete, completion_context);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
