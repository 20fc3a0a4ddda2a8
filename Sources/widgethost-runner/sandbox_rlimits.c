/*
 * sandbox_rlimits.c — the rlimits layer: address space, CPU, open files,
 * file size, processes, no core files; never raised above the host's.
 */
#define _GNU_SOURCE
#include "sandbox_layers.h"

#include <sys/resource.h>

/* ------------------------------------------------------------------ */
/* rlimits                                                             */
/* ------------------------------------------------------------------ */

static int set_limit(int resource, uint64_t value, uint64_t hard_extra) {
    if (value == 0) return 0;
    struct rlimit current;
    if (getrlimit(resource, &current) != 0) return -1;
    struct rlimit next = {(rlim_t)value, (rlim_t)(value + hard_extra)};
    /* Never raise a limit the host already has lower. */
    if (current.rlim_max != RLIM_INFINITY && next.rlim_max > current.rlim_max) next.rlim_max = current.rlim_max;
    if (next.rlim_cur > next.rlim_max) next.rlim_cur = next.rlim_max;
    return setrlimit(resource, &next);
}

int wh_apply_rlimits(const wh_sandbox_policy *p) {
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -1;
    /* CPU: SIGXCPU at the soft limit, SIGKILL a second later. */
    if (set_limit(RLIMIT_CPU, p->cpu_seconds, 1) != 0) return -1;
    if (set_limit(RLIMIT_AS, p->address_space_bytes, 0) != 0) return -1;
    if (set_limit(RLIMIT_NOFILE, p->open_files, 0) != 0) return -1;
    if (set_limit(RLIMIT_FSIZE, p->file_size_bytes, 0) != 0) return -1;
    if (set_limit(RLIMIT_NPROC, p->processes, 0) != 0) return -1;
    return 0;
}