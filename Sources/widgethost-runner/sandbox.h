/*
 * sandbox.h — the layers the runner puts around plugin code, applied in
 * the child after LOAD arrives and before `dlopen` (so a plugin's
 * constructors are confined too). See docs/sandbox.md.
 */
#ifndef WIDGETHOST_RUNNER_SANDBOX_H
#define WIDGETHOST_RUNNER_SANDBOX_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/** The policy the host sends in LOAD (widgethost_wire.h). */
typedef struct wh_sandbox_policy {
    const char *plugin_path;
    const char *data_directory;
    int allow_network;
    uint32_t flags; /* WH_SANDBOX_* layers to apply */
    /* rlimits; 0 = leave the inherited limit */
    uint64_t address_space_bytes;
    uint64_t cpu_seconds;
    uint64_t open_files;
    uint64_t file_size_bytes;
    uint64_t processes;
    /* pids cgroup: pids.max (processes and threads); 0 = no pids cgroup */
    uint64_t max_tasks;
    /* Landlock grants beyond the defaults (NULL-terminated, may be NULL):
     * read (and execute) beneath each read-only path, read-write (no
     * execute, no device nodes) beneath each read-write path. */
    char **extra_read_only;
    char **extra_read_write;
    /* Fork server: the process-wide seccomp filter leaves setpgid allowed
     * (the server's call children need it once); each child then seals it
     * with wh_sandbox_seal_process_group. */
    int fork_server;
} wh_sandbox_policy;

/** In a fork server's call child, after setpgid: stacks a seccomp filter
 *  that makes setpgid and setsid fail with EPERM, as in a spawned runner.
 *  Returns 0, or -1 if the filter could not be loaded. */
int wh_sandbox_seal_process_group(void);

/** Applies every layer `policy->flags` asks for, in order. With the PID
 *  namespace layer the process that calls it does not return from it: it
 *  stays behind as the relay (the process the host spawned, which exits as
 *  the runner does) and the call returns in a new process, PID 2 of the
 *  namespace, with the same descriptors (fd 3 included). A layer the
 *  kernel lacks is skipped with one line on stderr (the plugin's captured
 *  log) naming it and why; a layer that the kernel has but that fails to
 *  apply is fatal: returns -1 with `error` describing it. Returns the bits
 *  of the layers now active. */
int64_t wh_sandbox_apply(const wh_sandbox_policy *policy, char *error, size_t error_size);

/** Between two calls of a process that serves many (a warm worker), or
 *  after a call in any process that stays: ends every process the plugin
 *  started. SIGKILL to every process of the sandbox's PID namespace but its
 *  init and the caller (kill(-1) from inside the namespace: one atomic pass
 *  that a fork bomb cannot outrun), then reaps the caller's children
 *  (blocking, until none is left: all were just killed). Processes that
 *  are not the caller's children are orphans, which the namespace's init
 *  reaps by itself. Returns the number of children reaped (0: none), or -1
 *  without doing anything when no PID namespace is active or the caller is
 *  not the runner that applied the sandbox (outside a namespace kill(-1)
 *  would reach every process of the user). */
int wh_sandbox_end_strays(void);

/** Reaps, without blocking, the caller's children that have exited and
 *  are not among `tracked` (the children the caller waits for itself, e.g.
 *  a fork server's call children): zombies of processes the plugin forked
 *  while loading, which would otherwise hold slots of the pids cgroup.
 *  Orphans (their parent gone) are reaped by the PID namespace's init and
 *  never show here. Returns the number reaped, -1 if /proc cannot be read. */
int wh_sandbox_reap_orphans(const pid_t *tracked, size_t tracked_count);

/** `widgethost-runner --sandbox-check [--json]`: tries each layer in a
 *  throwaway child and prints one line per layer (or a JSON array).
 *  Returns 0 if every layer is available, 1 otherwise. */
int wh_sandbox_check(FILE *out, int json);

#endif
