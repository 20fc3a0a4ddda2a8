/* nan_date: the timeline's only entry has date NaN. */
#define FX_NAME "nan_date"
#include "fixture.h"

#include <math.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    wh_entry entry = fx_entry(NAN, "{\"index\":0}");
    wh_result result = fx_result(&entry, 1, WH_POLICY_AT_END, 0.0);
    (void)ctx;
    complete(completion_context, &result);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
