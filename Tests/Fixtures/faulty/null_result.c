/* null_result: timeline calls complete(completion_context, NULL). */
#define FX_NAME "null_result"
#include "fixture.h"

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    (void)ctx;
    complete(completion_context, NULL);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
