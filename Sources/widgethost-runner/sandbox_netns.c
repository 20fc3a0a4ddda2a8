/*
 * sandbox_netns.c — the network namespace layer: unshare(CLONE_NEWNET)
 * (root), or CLONE_NEWUSER | CLONE_NEWNET with an identity map when
 * unprivileged; only a down loopback inside.
 */
#define _GNU_SOURCE
#include "sandbox_layers.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

/* Returns 0 and how in *how, or -errno. */
int wh_enter_netns(const char **how) {
    if (unshare(CLONE_NEWNET) == 0) {
        *how = "unshare(CLONE_NEWNET)";
        return 0;
    }
    if (errno != EPERM) return -errno;
    /* Unprivileged: a user namespace first, mapping our own ids. */
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) return -errno;
    char map[64];
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    if (wh_write_file("/proc/self/uid_map", map) != 0) return -errno;
    wh_write_file("/proc/self/setgroups", "deny\n");
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    if (wh_write_file("/proc/self/gid_map", map) != 0) return -errno;
    *how = "unshare(CLONE_NEWUSER | CLONE_NEWNET)";
    return 0;
}