/* plugin_error: timeline answers WH_STATUS_ERROR, error_code 42, message
 * "upstream returned 503" (a well-formed failure, not a fault). */
#define FX_NAME "plugin_error"
#include "fixture.h"

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    wh_result result = fx_result(NULL, 0, 0, 0.0);
    (void)ctx;
    result.status = WH_STATUS_ERROR;
    result.error_code = 42;
    result.error_message = "upstream returned 503";
    complete(completion_context, &result);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
