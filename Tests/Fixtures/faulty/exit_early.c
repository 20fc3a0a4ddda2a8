/* exit_early: calls exit(0) in timeline, in the middle of the call. */
#define FX_NAME "exit_early"
#include "fixture.h"

#include <stdlib.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    FX_UNUSED(ctx, complete, completion_context);
    exit(0);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
