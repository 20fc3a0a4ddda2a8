/* unsorted_dates: timeline entries at now, now+2h, now+1h (not sorted). */
#define FX_NAME "unsorted_dates"
#include "fixture.h"

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    wh_entry entries[3];
    wh_result result;
    entries[0] = fx_entry(ctx->now, "{\"index\":0}");
    entries[1] = fx_entry(ctx->now + 2 * FX_HOUR, "{\"index\":1}");
    entries[2] = fx_entry(ctx->now + FX_HOUR, "{\"index\":2}");
    result = fx_result(entries, 3, WH_POLICY_AT_END, 0.0);
    complete(completion_context, &result);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
