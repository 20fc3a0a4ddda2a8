/* write_outside: the timeline tries to create the file at `path` (outside
 * its data directory) and one inside its data directory (its cwd), and
 * reports both errnos: {"outside": errno, "inside": errno} (0 = written). */
#define FX_NAME "write_outside"
#include "hostile.h"

#include <fcntl.h>
#include <unistd.h>

static int try_write(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return errno;
    ssize_t n = write(fd, "pwned\n", 6);
    close(fd);
    return n == 6 ? 0 : EIO;
}

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    char path[512];
    hx_string(ctx, "path", path, sizeof path);
    int outside = try_write(path);
    int inside = try_write("inside.txt");
    static char json[128];
    snprintf(json, sizeof json, "{\"outside\":%d,\"inside\":%d}", outside, inside);
    hx_report(ctx, complete, completion_context, json);
}

HX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
