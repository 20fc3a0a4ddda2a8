/* write_fd3: the timeline writes garbage on fd 3, the host's protocol
 * channel, then answers. The host reports protocolViolation. */
#define FX_NAME "write_fd3"
#include "fixture.h"

#include <unistd.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    ssize_t n = write(3, "GARBAGE!GARBAGE!GARBAGE!", 24);
    (void)n;
    fx_timeline_ok(ctx, complete, completion_context);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
