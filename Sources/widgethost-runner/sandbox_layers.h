/*
 * sandbox_layers.h — internal interface between the sandbox launcher
 * (sandbox.c, wh_sandbox_apply) and its layers, one file each, as nsjail
 * does. Not part of the runner's public interface (sandbox.h).
 */
#ifndef WIDGETHOST_RUNNER_SANDBOX_LAYERS_H
#define WIDGETHOST_RUNNER_SANDBOX_LAYERS_H

#include <stddef.h>
#include <stdint.h>

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

/* sandbox_netns.c: a network namespace with no interface. Returns 0 and
 * how in *how, or -errno. */
int wh_enter_netns(const char **how);

/* sandbox_rlimits.c */
int wh_apply_rlimits(const wh_sandbox_policy *p);

/* sandbox_landlock.c: the Landlock ABI (or -errno), and the ruleset. */
int wh_landlock_abi(void);
int wh_apply_landlock(const wh_sandbox_policy *p, char *error, size_t error_size, int *skipped);

/* sandbox_seccomp.c: the runner's SIGSYS handler and the filter. */
int wh_install_sigsys_handler(void);
int wh_apply_seccomp(const wh_sandbox_policy *p, char *error, size_t error_size, int *skipped);

#endif
