/* hang: an infinite busy loop in timeline (burns CPU, never completes). */
#define FX_NAME "hang"
#include "fixture.h"

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    volatile unsigned long spins = 0;
    FX_UNUSED(ctx, complete, completion_context);
    for (;;) spins++;
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
