/* escape_sequences: every string the plugin gives the host carries
 * terminal control sequences: its name, id and kind name (an OSC that
 * retitles the window, a CSI that clears the screen), its entries, its
 * error message and its log. A report printed to a terminal must show them
 * escaped, never send them raw. */
#define FX_NAME "escape_sequences\x1b]0;pwned\x07\x1b[2J"
#include "fixture.h"

#include <stdio.h>
#include <string.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    (void)ctx;
    fprintf(stderr, "log line \x1b[31mred\x1b[0m \x9b" "2J\n");
    wh_result result;
    memset(&result, 0, sizeof result);
    result.struct_size = sizeof result;
    result.status = WH_STATUS_ERROR;
    result.error_code = 7;
    result.error_message = "failed \x1b]0;owned\x07 \x1b[2J";
    complete(completion_context, &result);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
