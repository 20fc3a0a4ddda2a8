/* abort: calls abort() in timeline (SIGABRT). */
#define FX_NAME "abort"
#include "fixture.h"

#include <stdlib.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    FX_UNUSED(ctx, complete, completion_context);
    abort();
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
