/*
 * sandbox_unshare.c — the namespaces: network (netns layer: only a down
 * loopback inside), PID (pidns layer, sandbox_pidns.c) and mount
 * (mountns layer, sandbox_view.c), made in one unshare(2): as root
 * directly, unprivileged inside a new user namespace with an identity map
 * of the runner's own uid and gid.
 */
#define _GNU_SOURCE
#include "sandbox_layers.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* What the last successful unshare made, for the log and sandbox-check. */
static char g_how[128];

/* "CLONE_NEWUSER | CLONE_NEWNET", etc. */
static const char *describe(int flags) {
    static const struct {
        int flag;
        const char *name;
    } names[] = {{CLONE_NEWUSER, "CLONE_NEWUSER"}, {CLONE_NEWPID, "CLONE_NEWPID"}, {CLONE_NEWNS, "CLONE_NEWNS"},
                 {CLONE_NEWNET, "CLONE_NEWNET"}};
    size_t n = (size_t)snprintf(g_how, sizeof g_how, "unshare(");
    const char *separator = "";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!(flags & names[i].flag) || n >= sizeof g_how) continue;
        n += (size_t)snprintf(g_how + n, sizeof g_how - n, "%s%s", separator, names[i].name);
        separator = " | ";
    }
    if (n < sizeof g_how) snprintf(g_how + n, sizeof g_how - n, ")");
    return g_how;
}

int wh_unshare(int flags, const char **how) {
    if (unshare(flags) == 0) {
        *how = describe(flags);
        return 0;
    }
    if (errno != EPERM) return -errno;
    /* Unprivileged: a user namespace first, mapping our own ids. */
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (unshare(CLONE_NEWUSER | flags) != 0) return -errno;
    char map[64];
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    if (wh_write_file("/proc/self/uid_map", map) != 0) return -errno;
    wh_write_file("/proc/self/setgroups", "deny\n");
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    if (wh_write_file("/proc/self/gid_map", map) != 0) return -errno;
    *how = describe(CLONE_NEWUSER | flags);
    return 0;
}
