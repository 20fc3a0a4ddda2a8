/* read_stdin: the timeline reads stdin until EOF (it is /dev/null, so at
 * once) and reports {"bytes": n, "errno": e}. */
#define FX_NAME "read_stdin"
#include "hostile.h"

#include <unistd.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    char buffer[256];
    long total = 0;
    ssize_t n;
    while ((n = read(0, buffer, sizeof buffer)) > 0) total += n;
    static char json[64];
    snprintf(json, sizeof json, "{\"bytes\":%ld,\"errno\":%d}", total, n < 0 ? errno : 0);
    hx_report(ctx, complete, completion_context, json);
}

HX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
