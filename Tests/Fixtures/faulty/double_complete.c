/* double_complete: timeline calls complete twice: first with a valid
 * three-entry result, then again with another one (which must be ignored). */
#define FX_NAME "double_complete"
#include "fixture.h"

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    fx_timeline_ok(ctx, complete, completion_context);
    fx_answer_one(ctx, complete, completion_context);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
