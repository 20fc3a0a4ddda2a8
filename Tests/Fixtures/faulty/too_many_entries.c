/* too_many_entries: a timeline of 401 entries (the limit is 400), one hour
 * apart, otherwise valid. */
#define FX_NAME "too_many_entries"
#include "fixture.h"

#define COUNT 401

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    static wh_entry entries[COUNT];
    wh_result result;
    int i;
    for (i = 0; i < COUNT; i++) entries[i] = fx_entry(ctx->now + i * FX_HOUR, "{\"fixture\":\"too_many_entries\"}");
    result = fx_result(entries, COUNT, WH_POLICY_AT_END, 0.0);
    complete(completion_context, &result);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
