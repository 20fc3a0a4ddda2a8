/* ticking: a well-behaved timeline whose entries come 2 s apart (for the
 * daemon's `entry` events and relevance), policy never. The second entry
 * carries a relevance (score 50 while displayed). */
#define FX_NAME "ticking"
#include "fixture.h"

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    wh_entry entries[3];
    wh_result result;
    entries[0] = fx_entry(ctx->now, "{\"fixture\":\"ticking\",\"index\":0}");
    entries[1] = wh_make_relevant_entry(ctx->now + 2.0, "{\"fixture\":\"ticking\",\"index\":1}", 50.0, 0.0);
    entries[2] = fx_entry(ctx->now + 4.0, "{\"fixture\":\"ticking\",\"index\":2}");
    result = fx_result(entries, 3, WH_POLICY_NEVER, 0.0);
    complete(completion_context, &result);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
