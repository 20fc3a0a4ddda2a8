/* sleep_forever: sleeps one hour in timeline and never completes. */
#define FX_NAME "sleep_forever"
#include "fixture.h"

#include <unistd.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    FX_UNUSED(ctx, complete, completion_context);
    sleep(3600);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
