/* grandchild: the timeline forks a child that sleeps for an hour, then
 * completes normally. The call succeeds; the host must still kill the
 * whole process group so the sleeping grandchild does not outlive it. */
#define FX_NAME "grandchild"
#include "fixture.h"

#include <unistd.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    pid_t pid = fork();
    if (pid == 0) {
        sleep(3600);
        _exit(0);
    }
    fx_timeline_ok(ctx, complete, completion_context);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
