/* hang_sometimes: every tenth call a process makes spins forever; the
 * others answer at once. In a warm worker the count goes on across calls,
 * so the tenth call times out, the worker is killed and the standby takes
 * the next call: `bench` shows what that next call costs ("after a
 * failure"). */
#define FX_NAME "hang_sometimes"
#include "fixture.h"

static unsigned calls;

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    if (++calls % 10 == 0)
        for (volatile unsigned spin = 0;; spin++) {
        }
    fx_timeline_ok(ctx, complete, completion_context);
}

static void snapshot(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    timeline(ctx, complete, completion_context);
}

FX_PLUGIN(fx_placeholder_ok, snapshot, timeline)
