/* unix_connect (issue 14, item 4): the timeline connects to the pathname
 * Unix socket at `path` (the test's stand-in for the daemon's control
 * socket in $XDG_RUNTIME_DIR/widgethost) and, if it connected, sends a
 * request. Answers {"errno": e} (0: connected). */
#define FX_NAME "unix_connect"
#include "hostile.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    hx_string(ctx, "path", address.sun_path, sizeof address.sun_path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int e = fd < 0 ? errno : 0;
    if (fd >= 0 && connect(fd, (struct sockaddr *)&address, sizeof address) != 0) e = errno;
    if (fd >= 0 && e == 0) {
        static const char request[] = "{\"request\":\"configurations\"}\n";
        ssize_t ignored = write(fd, request, sizeof request - 1);
        (void)ignored;
    }
    if (fd >= 0) close(fd);
    static char json[64];
    snprintf(json, sizeof json, "{\"errno\":%d}", e);
    hx_report(ctx, complete, completion_context, json);
}

HX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
