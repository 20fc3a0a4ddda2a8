#define _GNU_SOURCE
#include "widgethost_support.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int wh_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int wh_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

int wh_pidfd_kill(int pidfd, int signal) { return (int)syscall(SYS_pidfd_send_signal, pidfd, signal, NULL, 0); }

pid_t wh_pidfd_target(int fd, pid_t *parent) {
    *parent = -1;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    char line[256];
    pid_t pid = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Pid:", 4) == 0) pid = (pid_t)strtol(line + 4, NULL, 10);
    fclose(f);
    if (pid <= 0) return -1;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    f = fopen(path, "re");
    if (!f) return -1;
    char stat[512];
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = 0;
    /* "pid (comm) state ppid ...": comm may hold spaces and parentheses. */
    char *close_paren = strrchr(stat, ')');
    if (!close_paren) return -1;
    char state;
    int ppid;
    if (sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2) return -1;
    *parent = (pid_t)ppid;
    return pid;
}

int wh_descends_from(pid_t pid, pid_t ancestor, int depth) {
    for (int level = 0; level < depth && pid > 1; level++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "re");
        if (!f) return 0;
        char stat[512];
        size_t n = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[n] = 0;
        char *close_paren = strrchr(stat, ')');
        char state;
        int ppid;
        if (!close_paren || sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2) return 0;
        if ((pid_t)ppid == ancestor) return 1;
        pid = (pid_t)ppid;
    }
    return 0;
}

pid_t wh_deepest_descendant(pid_t pid, int depth) {
    for (int level = 0; level < depth; level++) {
        char path[80];
        snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
        FILE *f = fopen(path, "re");
        if (!f) break;
        int first = 0, count = 0, next;
        while (fscanf(f, "%d", &next) == 1) {
            if (count++ == 0) first = next;
        }
        fclose(f);
        /* Only a single line of descent: a relay and its init have one child. */
        if (count != 1) break;
        pid = (pid_t)first;
    }
    return pid;
}

/* Moves fd above the range the child's dup2 targets use (0..3), so that a
 * dup2 onto itself (which would keep FD_CLOEXEC set) cannot happen. */
static int lift(int fd, int *owned) {
    *owned = -1;
    if (fd > WH_WIRE_FD) return fd;
    int lifted = fcntl(fd, F_DUPFD_CLOEXEC, WH_WIRE_FD + 1);
    if (lifted >= 0) *owned = lifted;
    return lifted;
}

int wh_spawn(const char *path, char *const argv[], char *const envp[], int protocol_fd,
             int stdout_fd, int stderr_fd, const char *cwd, pid_t *pid, int *pidfd) {
    int owned[3];
    int proto = lift(protocol_fd, &owned[0]);
    int out = lift(stdout_fd, &owned[1]);
    int err = lift(stderr_fd, &owned[2]);
    int rc = 0;
    if (proto < 0 || out < 0 || err < 0) {
        rc = errno;
        goto done;
    }

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);

    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out, 1);
    posix_spawn_file_actions_adddup2(&actions, err, 2);
    posix_spawn_file_actions_adddup2(&actions, proto, WH_WIRE_FD);
    posix_spawn_file_actions_addclosefrom_np(&actions, WH_WIRE_FD + 1);
    if (cwd) posix_spawn_file_actions_addchdir_np(&actions, cwd);

    sigset_t empty, all;
    sigemptyset(&empty);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &empty);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
                                        POSIX_SPAWN_SETSIGDEF);

    pid_t child;
    rc = posix_spawn(&child, path, &actions, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc == 0) {
        *pid = child;
        *pidfd = wh_pidfd_open(child);
        if (*pidfd >= 0) fcntl(*pidfd, F_SETFD, FD_CLOEXEC);
    }
done:
    for (int i = 0; i < 3; i++)
        if (owned[i] >= 0) close(owned[i]);
    return rc;
}

int wh_wait_status(int status, int *value, int *core) {
    *core = 0;
    if (WIFEXITED(status)) {
        *value = WEXITSTATUS(status);
        return 1;
    }
    if (WIFSIGNALED(status)) {
        *value = WTERMSIG(status);
#ifdef WCOREDUMP
        *core = WCOREDUMP(status) ? 1 : 0;
#endif
        return 2;
    }
    *value = 0;
    return 0;
}

const char *wh_signal_abbrev(int signal) { return sigabbrev_np(signal); }

int wh_thread_count(void) {
    FILE *f = fopen("/proc/self/status", "re");
    if (!f) return -1;
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "Threads:", 8) == 0) {
            n = atoi(line + 8);
            break;
        }
    }
    fclose(f);
    return n;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)st;
    (void)type;
    (void)ftw;
    remove(path);
    return 0;
}

int wh_remove_tree(const char *path) { return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

int wh_poll_ns(struct pollfd *fds, unsigned long count, long long timeout_ns) {
    if (timeout_ns < 0) return ppoll(fds, (nfds_t)count, NULL, NULL);
    struct timespec ts = {(time_t)(timeout_ns / 1000000000LL), (long)(timeout_ns % 1000000000LL)};
    return ppoll(fds, (nfds_t)count, &ts, NULL);
}

ssize_t wh_recv_fds(int fd, void *buffer, size_t length, int *fds, int max_fds, int *fd_count) {
    union {
        char buf[CMSG_SPACE(sizeof(int) * 16)];
        struct cmsghdr align;
    } control;
    struct iovec iov = {buffer, length};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof control.buf};
    *fd_count = 0;
    ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0) return n;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int received;
            memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
            if (*fd_count < max_fds)
                fds[(*fd_count)++] = received;
            else
                close(received);
        }
    }
    return n;
}

void wh_deadline_boost_begin(wh_deadline_boost *boost) {
    if (boost->active) return;
    boost->active = 1;
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    boost->slack_ns = slack > 0 ? (unsigned long)slack : 0;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    struct sched_param param;
    boost->realtime = 0;
    if (pthread_getschedparam(pthread_self(), &boost->policy, &param) != 0) return;
    boost->policy &= ~SCHED_RESET_ON_FORK;
    boost->priority = param.sched_priority;
    if (boost->policy == SCHED_FIFO || boost->policy == SCHED_RR) return; /* already real-time */
    /* With SCHED_RESET_ON_FORK: a process this thread starts while boosted
     * (a runner, or any child a caller sharing the thread spawns) starts
     * under the normal policy, never real-time. (Pid 0: this thread.) */
    struct sched_param fifo = {.sched_priority = 1};
    boost->realtime = sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &fifo) == 0;
}

void wh_deadline_boost_end(wh_deadline_boost *boost) {
    if (!boost->active) return;
    if (boost->realtime) {
        struct sched_param param = {.sched_priority = boost->priority};
        pthread_setschedparam(pthread_self(), boost->policy, &param);
    }
    if (boost->slack_ns > 0) prctl(PR_SET_TIMERSLACK, boost->slack_ns, 0, 0, 0);
    boost->active = 0;
    boost->realtime = 0;
}
