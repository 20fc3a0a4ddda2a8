/* alloc_past_limit: the timeline allocates 64 MiB blocks (without touching
 * them) until malloc returns NULL, which RLIMIT_AS makes it do, then
 * reports WH_STATUS_ERROR with code ENOMEM and how far it got. */
#define FX_NAME "alloc_past_limit"
#include "hostile.h"

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    (void)ctx;
    size_t mib = 0;
    while (mib < 1024u * 1024u) { /* 1 TiB: far past any limit */
        if (!malloc(64u << 20)) break;
        mib += 64;
    }
    static char message[128];
    snprintf(message, sizeof message, "malloc returned NULL after %zu MiB", mib);
    hx_error(complete, completion_context, ENOMEM, message);
}

HX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
