/* sigsys_override: the timeline tries to take SIGSYS from the runner (so
 * that a forbidden call would not be reported): sigaction(SIGSYS, SIG_IGN)
 * (refused: EPERM from seccomp; the errno goes to stderr), then, if `path`
 * is "block", blocks SIGSYS, and calls ptrace. Either way the call does not
 * run and the process dies of SIGSYS; blocked, the kernel forces the
 * default action and the runner's handler cannot name the call. */
#define FX_NAME "sigsys_override"
#include "hostile.h"

#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    char mode[32];
    hx_string(ctx, "path", mode, sizeof mode);
    struct sigaction ignore;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    int rc = sigaction(SIGSYS, &ignore, NULL);
    fprintf(stderr, "sigsys_override: sigaction(SIGSYS) = %d (%s)\n", rc, rc == 0 ? "replaced" : strerror(errno));
    if (strcmp(mode, "block") == 0) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGSYS);
        sigprocmask(SIG_BLOCK, &set, NULL);
    }
    fflush(stderr);
    ptrace(PTRACE_ATTACH, getppid(), NULL, NULL);
    hx_report(ctx, complete, completion_context, "{\"survived\":true}");
}

HX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
