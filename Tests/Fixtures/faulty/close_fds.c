/* close_fds: the timeline writes to and closes every fd from 4 to 1023
 * (none should be open), closes stdin, stdout and stderr, and reports how
 * many of 4..1023 were open: {"open": n}. */
#define FX_NAME "close_fds"
#include "hostile.h"

#include <fcntl.h>
#include <unistd.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    int open_count = 0;
    for (int fd = 4; fd < 1024; fd++) {
        if (fcntl(fd, F_GETFD) != -1) open_count++;
        ssize_t n = write(fd, "x", 1);
        (void)n;
        close(fd);
    }
    close(0);
    close(1);
    close(2);
    static char json[32];
    snprintf(json, sizeof json, "{\"open\":%d}", open_count);
    hx_report(ctx, complete, completion_context, json);
}

HX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
