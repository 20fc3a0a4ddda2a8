/* forbidden_syscall: the timeline calls keyctl (denied with EPERM: it
 * carries on) and then mount (the seccomp filter kills the process). */
#define FX_NAME "forbidden_syscall"
#include "fixture.h"

#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    syscall(SYS_keyctl, 0, 0, 0, 0, 0);
    mount("none", "/mnt", "tmpfs", 0, NULL);
    fx_timeline_ok(ctx, complete, completion_context);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
