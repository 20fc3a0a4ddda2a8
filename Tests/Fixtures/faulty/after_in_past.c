/* after_in_past: a valid timeline with policy AFTER(now - 1 hour), a date in
 * the past (a warning, not an error). */
#define FX_NAME "after_in_past"
#include "fixture.h"

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    fx_answer_three(ctx, complete, completion_context, FX_HOUR, WH_POLICY_AFTER, ctx->now - FX_HOUR);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
