/* kill_parent (issue 14, item 11): the timeline sends SIGKILL to its
 * parent (the fork server, or the runner's init), then to every process it
 * may signal (kill(-1)), then answers normally. Answers {"parent": e,
 * "all": e} (0: the kill was delivered somewhere; -1: not tried).
 *
 * kill(-1, SIGKILL) as root outside a sandbox kills the whole machine: it
 * is tried only when /proc/1 is a widgethost-runner, i.e. in the sandbox's
 * own PID namespace, where it cannot reach outside. */
#define FX_NAME "kill_parent"
#include "hostile.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

static int in_own_pid_namespace(void) {
    char comm[32] = "";
    int fd = open("/proc/1/comm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, comm, sizeof comm - 1);
    close(fd);
    comm[n > 0 ? n : 0] = 0;
    return strncmp(comm, "widgethost-runn", 15) == 0;
}

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    int parent_e = -1, all_e = -1;
    if (in_own_pid_namespace()) {
        parent_e = kill(getppid(), SIGKILL) == 0 ? 0 : errno;
        all_e = kill(-1, SIGKILL) == 0 ? 0 : errno;
    }
    static char json[64];
    snprintf(json, sizeof json, "{\"parent\":%d,\"all\":%d}", parent_e, all_e);
    hx_report(ctx, complete, completion_context, json);
}

HX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
