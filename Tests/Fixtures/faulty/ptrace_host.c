/* ptrace_host: the timeline forks; the child tries to PTRACE_ATTACH to its
 * parent's parent (the host), the parent tries too, then answers. The
 * seccomp filter kills the process for ptrace (SIGSYS). */
#define FX_NAME "ptrace_host"
#include "fixture.h"

#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    pid_t host = getppid();
    pid_t child = fork();
    if (child == 0) {
        ptrace(PTRACE_ATTACH, host, NULL, NULL);
        _exit(0);
    }
    if (child > 0) waitpid(child, NULL, 0);
    ptrace(PTRACE_ATTACH, host, NULL, NULL);
    fx_timeline_ok(ctx, complete, completion_context);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
