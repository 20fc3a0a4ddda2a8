/*
 * sandbox_session.c — the session layer (always on): the host's
 * posix_spawn set most of it up (own session, fds 0-3, clean environment,
 * cwd); the runner makes sure of each piece here, where it is cheap.
 */
#define _GNU_SOURCE
#include "sandbox_layers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "widgethost_wire.h"

int wh_apply_session(const wh_sandbox_policy *p, char *error, size_t error_size) {
    if (p->data_directory && p->data_directory[0] && chdir(p->data_directory) != 0) {
        snprintf(error, error_size, "chdir(%s): %s", p->data_directory, strerror(errno));
        return -1;
    }
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd >= 0) {
        if (null_fd != 0) {
            dup2(null_fd, 0);
            close(null_fd);
        }
    }
    syscall(SYS_close_range, WH_WIRE_FD + 1, ~0U, 0);
    if (getsid(0) != getpid()) setsid();
    return 0;
}
