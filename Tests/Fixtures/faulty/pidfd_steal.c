/* pidfd_steal (issue 14, item 1): the timeline tries to copy its parent's
 * fd 3 (a fork server's channel to the host, whose messages the host
 * trusted) with pidfd_getfd(pidfd_open(getppid()), 3), and if it got it,
 * writes a forged CHILD_STARTED-sized frame of garbage on it. Answers
 * {"pidfd_open": e, "pidfd_getfd": e} (0: it worked). */
#define FX_NAME "pidfd_steal"
#include "hostile.h"

#include <sys/syscall.h>
#include <unistd.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    int pidfd = (int)syscall(SYS_pidfd_open, getppid(), 0);
    int open_e = pidfd < 0 ? errno : 0;
    int getfd_e = -1;
    if (pidfd >= 0) {
        int stolen = (int)syscall(438 /* pidfd_getfd */, pidfd, 3, 0);
        getfd_e = stolen < 0 ? errno : 0;
        if (stolen >= 0) {
            static const char forged[20] = "WHW1 forged frame!!";
            ssize_t ignored = write(stolen, forged, sizeof forged);
            (void)ignored;
            close(stolen);
        }
        close(pidfd);
    }
    static char json[128];
    snprintf(json, sizeof json, "{\"pidfd_open\":%d,\"pidfd_getfd\":%d}", open_e, getfd_e);
    hx_report(ctx, complete, completion_context, json);
}

HX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
