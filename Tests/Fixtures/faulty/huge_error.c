/* huge_error: the timeline fails with a 20 MiB error message. The runner
 * cuts it to 64 KiB, so it stays a pluginError (not a broken frame counted
 * as a crash); the host says it was cut. */
#define FX_NAME "huge_error"
#include "fixture.h"

#include <stdlib.h>
#include <string.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    (void)ctx;
    size_t size = 20u << 20;
    char *message = malloc(size + 1);
    if (message) {
        memset(message, 'e', size);
        message[size] = 0;
    }
    wh_result result;
    memset(&result, 0, sizeof result);
    result.struct_size = sizeof result;
    result.status = WH_STATUS_ERROR;
    result.error_code = 42;
    result.error_message = message;
    complete(completion_context, &result);
    free(message);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
