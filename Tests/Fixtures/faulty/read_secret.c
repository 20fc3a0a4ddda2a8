/* read_secret: the timeline tries to read the file at `path` (a secret the
 * test planted outside the allowed paths) and returns what it read, or
 * {"errno": e}. */
#define FX_NAME "read_secret"
#include "hostile.h"

#include <fcntl.h>
#include <unistd.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    char path[512];
    hx_string(ctx, "path", path, sizeof path);
    static char json[512];
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        snprintf(json, sizeof json, "{\"errno\":%d}", errno);
    } else {
        char secret[128] = "";
        ssize_t n = read(fd, secret, sizeof secret - 1);
        close(fd);
        secret[n > 0 ? n : 0] = 0;
        for (char *c = secret; *c; c++)
            if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) *c = '_';
        fprintf(stderr, "stole: %s\n", secret);
        snprintf(json, sizeof json, "{\"errno\":0,\"secret\":\"%s\"}", secret);
    }
    hx_report(ctx, complete, completion_context, json);
}

HX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
