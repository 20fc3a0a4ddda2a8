/*
 * sandbox.c — the launcher of the layers around plugin code
 * (docs/sandbox.md): wh_sandbox_apply applies them in order, one file per
 * layer (sandbox_<layer>.c, interface in sandbox_layers.h).
 *
 * Applied in the runner, single-threaded, after LOAD and before dlopen:
 *   1. session (sandbox_session.c): data directory as cwd, stdin
 *      /dev/null, fds above 3 closed (close_range), own session and
 *      process group (checked)
 *   1b. pids (sandbox_cgroup.c): a pids cgroup of its own (pids.max),
 *      which binds root too
 *   2. namespaces, in one unshare (sandbox_unshare.c; with CLONE_NEWUSER
 *      when unprivileged): netns, a network namespace with no interface
 *      (unless the plugin may use the network); pidns (sandbox_pidns.c),
 *      a PID namespace whose init is ours: the runner splits into a relay
 *      (the host's child), init (PID 1) and itself (PID 2), and everything
 *      the plugin starts dies with it; mountns (sandbox_view.c), a minimal
 *      read-only root with the data directory writable and a /proc of the
 *      plugin's processes only
 *   3. rlimits (sandbox_rlimits.c): address space, CPU, open files, file
 *      size, processes, no core
 *   4. PR_SET_NO_NEW_PRIVS
 *   5. Landlock (sandbox_landlock.c): read-only system libraries, the
 *      plugin and its directory; read-write its data directory; nothing
 *      else. TCP bind/connect denied without network (ABI 4); signals and
 *      abstract sockets scoped (ABI 6)
 *   6. seccomp-bpf (sandbox_seccomp.c, libseccomp): dangerous calls fail
 *      with EPERM or trap: the runner's SIGSYS handler reports which call
 *      to the host, then the process dies of SIGSYS; without the view,
 *      file metadata calls fail with EPERM
 * A layer the kernel lacks is skipped with a line on stderr.
 * `--sandbox-check` is sandbox_check.c.
 */
#define _GNU_SOURCE
#include "sandbox_layers.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "widgethost_wire.h"

/* ------------------------------------------------------------------ */
/* Helpers shared by the layers                                        */
/* ------------------------------------------------------------------ */

/* The parent directory of `path` (malloc'd). */
char *wh_dirname_of(const char *path) {
    char *copy = strdup(path ? path : "");
    if (!copy) return NULL;
    char *slash = strrchr(copy, '/');
    if (slash == copy) slash[1] = 0;
    else if (slash) *slash = 0;
    else strcpy(copy, ".");
    return copy;
}

int wh_write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = write(fd, text, strlen(text));
    int e = errno;
    close(fd);
    errno = e;
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

int wh_read_text(const char *path, char *text, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, text, size - 1);
    int e = errno;
    close(fd);
    if (n < 0) {
        errno = e;
        return -1;
    }
    text[n] = 0;
    return 0;
}

/* ------------------------------------------------------------------ */
/* The launcher                                                        */
/* ------------------------------------------------------------------ */

int wh_landlock_scoping;

/* The namespaces, made in one unshare: network (unless the plugin may use
 * it), PID (then the runner splits into relay, init and itself) and mount
 * (then the minimal root). Without a PID or mount namespace (user
 * namespaces disabled, no CAP_SYS_ADMIN) the network one is tried alone. */
static int enter_namespaces(const wh_sandbox_policy *p, int64_t *active, char *error, size_t error_size) {
    int want_net = (p->flags & WH_SANDBOX_NETNS) && !p->allow_network;
    int want_pid = (p->flags & WH_SANDBOX_PIDNS) != 0;
    int want_mount = (p->flags & WH_SANDBOX_MOUNTNS) != 0;
    int flags = (want_net ? CLONE_NEWNET : 0) | (want_pid ? CLONE_NEWPID : 0) | (want_mount ? CLONE_NEWNS : 0);
    if (!flags) return 0;
    const char *how = NULL;
    int rc = wh_unshare(flags, &how);
    if (rc != 0 && (want_pid || want_mount)) {
        fprintf(stderr,
                "widgethost-runner: sandbox: no PID or mount namespace (%s); processes the plugin starts may "
                "outlive it and it sees the host's files and /proc (Landlock and seccomp still confine it)\n",
                strerror(-rc));
        want_pid = want_mount = 0;
        flags = want_net ? CLONE_NEWNET : 0;
        rc = flags ? wh_unshare(flags, &how) : 0;
    }
    if (rc != 0) {
        fprintf(stderr, "widgethost-runner: sandbox: no network namespace (%s); relying on seccomp and Landlock\n",
                strerror(-rc));
        return 0;
    }
    if (want_net) *active |= WH_SANDBOX_NETNS;
    if (want_pid) {
        if (wh_pidns_split(error, error_size) != 0) return -1;
        *active |= WH_SANDBOX_PIDNS;
    }
    if (want_mount) {
        int skipped = 0;
        if (wh_apply_view(p, want_pid, error, error_size, &skipped) != 0) return -1;
        if (!skipped) *active |= WH_SANDBOX_MOUNTNS;
    }
    return 0;
}

int64_t wh_sandbox_apply(const wh_sandbox_policy *p, char *error, size_t error_size) {
    int64_t active = 0;
    /* Session layer (always). */
    if (wh_apply_session(p, error, error_size) != 0) return -1;

    /* Before the network namespace: a user namespace would not be allowed
     * to write the host's cgroup files. */
    if ((p->flags & WH_SANDBOX_PIDS) && p->max_tasks > 0) {
        char where[1400];
        int rc = wh_enter_pids_cgroup(p->max_tasks, where, sizeof where);
        if (rc > 0) active |= WH_SANDBOX_PIDS;
        else if (rc == 0)
            fprintf(stderr, "widgethost-runner: sandbox: no pids cgroup (%s); processes are not limited for root\n",
                    where);
        else {
            snprintf(error, error_size, "pids cgroup: %s", where);
            return -1;
        }
    }
    if (enter_namespaces(p, &active, error, error_size) != 0) return -1;
    if (p->flags & WH_SANDBOX_RLIMITS) {
        if (wh_apply_rlimits(p) != 0) {
            snprintf(error, error_size, "setrlimit: %s", strerror(errno));
            return -1;
        }
        active |= WH_SANDBOX_RLIMITS;
    }
    if (p->flags & (WH_SANDBOX_NO_NEW_PRIVS | WH_SANDBOX_LANDLOCK | WH_SANDBOX_SECCOMP)) {
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
            snprintf(error, error_size, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
            return -1;
        }
        active |= WH_SANDBOX_NO_NEW_PRIVS;
    }
    if (p->flags & WH_SANDBOX_LANDLOCK) {
        int skipped = 0;
        if (wh_apply_landlock(p, error, error_size, &skipped) != 0) return -1;
        if (!skipped) active |= WH_SANDBOX_LANDLOCK;
        wh_landlock_scoping = !skipped;
    }
    if (p->flags & WH_SANDBOX_SECCOMP) {
        int skipped = 0;
        if (wh_install_sigsys_handler() != 0) {
            snprintf(error, error_size, "sigaction(SIGSYS): %s", strerror(errno));
            return -1;
        }
        /* Without the read-only view, seccomp freezes file metadata. */
        int deny_metadata = !(active & WH_SANDBOX_MOUNTNS);
        if (wh_apply_seccomp(p, deny_metadata, error, error_size, &skipped) != 0) return -1;
        if (!skipped) active |= WH_SANDBOX_SECCOMP;
    }
    return active;
}
