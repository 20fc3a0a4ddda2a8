/* duplicate_key: the timeline's only entry has content with the key "mood"
 * twice; which one a reader takes is up to the reader, so the host refuses it. */
#define FX_NAME "duplicate_key"
#include "fixture.h"

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    wh_entry entry = fx_entry(ctx->now, "{\"mood\": \"calm\",\n \"mood\": \"storm\"}");
    wh_result result = fx_result(&entry, 1, WH_POLICY_AT_END, 0.0);
    complete(completion_context, &result);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
