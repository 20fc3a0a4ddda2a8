/* content_not_object: the timeline's only entry has valid JSON content that
 * is an array, "[1,2]", not an object. */
#define FX_NAME "content_not_object"
#include "fixture.h"

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    wh_entry entry = fx_entry(ctx->now, "[1,2]");
    wh_result result = fx_result(&entry, 1, WH_POLICY_AT_END, 0.0);
    complete(completion_context, &result);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
