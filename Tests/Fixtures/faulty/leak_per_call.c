/* leak_per_call: every timeline call allocates 1 MiB, touches every page
 * and never frees it, then answers. A warm worker's resident memory grows
 * by about 1 MiB a call; the host replaces it past its RSS cap. */
#define FX_NAME "leak_per_call"
#include "fixture.h"

#include <stdlib.h>
#include <string.h>
#include <stdio.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    char *leak = malloc(1u << 20);
    if (leak) {
        memset(leak, 0x5a, 1u << 20);
        /* The compiler must not drop the writes: the memory is "used". */
        __asm__ volatile("" : : "r"(leak) : "memory");
    } else {
        fprintf(stderr, "leak_per_call: malloc failed\n");
    }
    fx_timeline_ok(ctx, complete, completion_context);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
