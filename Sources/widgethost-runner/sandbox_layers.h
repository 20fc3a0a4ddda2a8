/*
 * sandbox_layers.h — internal interface between the sandbox launcher
 * (sandbox.c, wh_sandbox_apply) and its layers, one file each, as nsjail
 * does. Not part of the runner's public interface (sandbox.h).
 */
#ifndef WIDGETHOST_RUNNER_SANDBOX_LAYERS_H
#define WIDGETHOST_RUNNER_SANDBOX_LAYERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox.h"

/* sandbox.c: small file helpers shared by the layers. */
char *wh_dirname_of(const char *path); /* malloc'd parent directory */
int wh_write_file(const char *path, const char *text);
int wh_read_text(const char *path, char *text, size_t size);

/* sandbox_session.c: cwd, stdin, fds above 3, own session (always on). */
int wh_apply_session(const wh_sandbox_policy *p, char *error, size_t error_size);

/* sandbox_cgroup.c: moves the process into a new pids cgroup with
 * pids.max = max. Returns the cgroup version (1 or 2) and its path in
 * `where`, 0 when unavailable, -1 when it failed half-way. */
int wh_enter_pids_cgroup(uint64_t max, char *where, size_t where_size);

/* sandbox_unshare.c: unshare(flags) (CLONE_NEWNET, CLONE_NEWPID,
 * CLONE_NEWNS), inside a new user namespace when unprivileged. Returns 0
 * and how in *how, or -errno. */
int wh_unshare(int flags, const char **how);

/* sandbox_pidns.c: after unshare(CLONE_NEWPID), splits into relay, init
 * and runner; returns 0 in the runner only (PID 2 of the namespace), -1
 * with `error` if it could not fork. */
int wh_pidns_split(char *error, size_t error_size);
/* The host-visible pid of the runner (the relay's), and the runner's own
 * pid in its namespace; 0 without a PID namespace. The SIGSYS handler
 * reports the first for the second, as the host knows the runner. */
extern pid_t wh_sandbox_host_pid;
extern pid_t wh_sandbox_runner_pid;

/* sandbox_view.c: the minimal root (needs a private mount namespace);
 * `fresh_proc`: mount a /proc of the current PID namespace. Returns 0 (or
 * 0 with *skipped when mounts are refused), -1 with `error`. */
int wh_apply_view(const wh_sandbox_policy *p, int fresh_proc, char *error, size_t error_size, int *skipped);

/* sandbox_rlimits.c */
int wh_apply_rlimits(const wh_sandbox_policy *p);

/* sandbox_landlock.c: the Landlock ABI (or -errno), and the ruleset. */
int wh_landlock_abi(void);
int wh_apply_landlock(const wh_sandbox_policy *p, char *error, size_t error_size, int *skipped);
/* What Landlock lets a plugin read (and what the view shows), NULL-ended. */
extern const char *const wh_system_read_paths[];
/* A nested domain that only scopes signals and abstract sockets (ABI 6):
 * the caller can no longer signal, ptrace or pidfd_getfd its parent's
 * domain (its fork server, the standbys, init). 0, or -1 if unavailable. */
int wh_landlock_scope_to_self(void);
/* Set by the launcher when the Landlock layer is active. */
extern int wh_landlock_scoping;

/* sandbox_seccomp.c: the runner's SIGSYS handler and the filter. */
int wh_install_sigsys_handler(void);
/* deny_metadata: chmod, chown, xattr and utimes calls fail with EPERM
 * (when no read-only view keeps them to the data directory). */
int wh_apply_seccomp(const wh_sandbox_policy *p, int deny_metadata, char *error, size_t error_size, int *skipped);

/* sandbox_check_holes.c: each hole of issue 14 tried live from a child
 * inside the standard sandbox. Fills up to `capacity` results; returns
 * their number. open: 1 open, 0 closed, -1 not tried. */
typedef struct wh_hole_result {
    const char *name;
    int open;
    char detail[256];
} wh_hole_result;
int wh_check_holes(wh_hole_result *results, size_t capacity);

#endif
