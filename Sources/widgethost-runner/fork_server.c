/*
 * fork_server.c — fork mode: a server that keeps standby call children
 * forked from the loaded plugin, announces each to the host (CHILD_STARTED,
 * with its channel and a pidfd) and reaps them (CHILD_EXITED).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"
#include "runner.h"

int g_call_child;

/* In a call child: the write end of the pipe that tells the server this
 * child has read its CALL (closed before any plugin code runs). */
int g_notify_fd = -1;



/* Forks a call child with its own channel: a new socketpair whose other
 * end the server passes to the host in CHILD_STARTED (SCM_RIGHTS, with a
 * pidfd of the child). The server's fd 3 is written by the server alone,
 * each child's fd 3 by that child alone, so nothing ever interleaves and
 * the next child never waits for the previous one to be reaped. In the
 * server returns the child's pid, *notify (read end: one byte when the
 * child has read its CALL, EOF if it died first) and *pidfd. Returns 0 in
 * the child, with its own socket as fd 3. */
static int g_train_pending; /* in the server: the next child forked trains */
static pid_t g_trainer;

static void send_child_started(pid_t pid, int host_end, int pidfd) {
    uint8_t frame[WH_WIRE_HEADER_SIZE + 4];
    uint32_t fields[5] = {WH_WIRE_MAGIC, (uint32_t)WH_WIRE_VERSION | (uint32_t)WH_MSG_CHILD_STARTED << 16, 4u, 0u,
                          (uint32_t)pid};
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < 4; k++) frame[i * 4 + k] = (uint8_t)(fields[i] >> (8 * k));
    /* The descriptors travel with the frame's first byte; the rest of the
     * frame follows in the same message. */
    int fds[2] = {host_end, pidfd};
    struct iovec iov = {frame, sizeof frame};
    union {
        char buf[CMSG_SPACE(sizeof fds)];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof control.buf};
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(cmsg), fds, sizeof fds);
    ssize_t sent;
    do sent = sendmsg(WH_WIRE_FD, &msg, MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    if (sent < 0) _exit(3);
    if ((size_t)sent < sizeof frame && write_all(WH_WIRE_FD, frame + sent, sizeof frame - (size_t)sent) != 0)
        _exit(3);
}

static pid_t fork_child(pid_t server, int *notify, int *pidfd) {
    int channel[2], notify_pipe[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, channel) != 0 ||
        pipe2(notify_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        _exit(8);
    fflush(stdout);
    fflush(stderr);
    /* EAGAIN: the pids cgroup is full, e.g. of the current call's fork
     * bomb; the host kills that call's group at its deadline, so retry
     * (for at most a minute) instead of ending the server. */
    pid_t pid;
    for (int tries = 0; (pid = fork()) < 0 && errno == EAGAIN && tries < 6000; tries++) usleep(10 * 1000);
    if (pid < 0) _exit(8);
    if (pid > 0) {
        close(channel[1]);
        close(notify_pipe[1]);
        *notify = notify_pipe[0];
        *pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (*pidfd < 0) _exit(8);
        if (g_train_pending) {
            g_trainer = pid;
            g_train_pending = 0;
        }
        /* The host's end is non-blocking (a flag of the open file, which
         * the host's copy shares): the host never blocks on a child. */
        if (fcntl(channel[0], F_SETFL, fcntl(channel[0], F_GETFL) | O_NONBLOCK) != 0) _exit(8);
        send_child_started(pid, channel[0], *pidfd);
        close(channel[0]);
        return pid;
    }
    g_train = g_train_pending;
    close(channel[0]);
    close(notify_pipe[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != server) _exit(7);
    /* Its own process group, so a timeout kills the child and all it
     * started while the server lives on; then seal setpgid/setsid as a
     * spawned runner's filter does. */
    if (setpgid(0, 0) != 0) _exit(9);
    if ((g_sandbox_active & WH_SANDBOX_SECCOMP) && wh_sandbox_seal_process_group() != 0) _exit(9);
    /* Its own channel replaces the server's, its notify pipe goes to fd 4,
     * and everything else the server holds (the other children's pidfds
     * and pipes) is closed. */
    if (dup2(channel[1], WH_WIRE_FD) < 0 || dup2(notify_pipe[1], WH_WIRE_FD + 1) < 0) _exit(8);
    if (syscall(SYS_close_range, WH_WIRE_FD + 2, ~0u, 0) != 0) _exit(8);
    /* Only the training child writes the shared page list. */
    if (!g_train && g_training) munmap(g_training, g_training_size);
    if (!g_train) prefault();
    g_notify_fd = WH_WIRE_FD + 1;
    g_call_child = 1;
    return 0;
}

typedef struct live_child {
    pid_t pid;
    int pidfd;
    int notify; /* while it may be a standby: the read end of its pipe; then -1 */
    int ended;  /* the host said CALL_ENDED for it (it is being killed) */
} live_child;

/* Whether a child still waits for its call: its pipe is read only when the
 * server has something to decide (never polled, so taking a call does not
 * wake the server). One byte: it took a call. EOF without it: it died
 * before one. Counts early deaths; a server whose children keep dying
 * before any call gives up. */
static int still_standby(live_child *child, int *early_deaths) {
    if (child->notify < 0) return 0;
    char c;
    ssize_t n;
    do n = read(child->notify, &c, 1);
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN) return 1;
    close(child->notify);
    child->notify = -1;
    *early_deaths = n == 1 ? 0 : *early_deaths + 1;
    if (*early_deaths > 5) _exit(9);
    return 0;
}

#define WH_MAX_LIVE_CHILDREN 32

/* The server: reads only CALL_ENDED from fd 3 and never calls plugin code
 * (its warm_up aside, before this). It keeps WH_FORK_SERVER_STANDBYS
 * standby children announced to the host. When one takes a call, its
 * replacement is forked once no call is running (the host said CALL_ENDED
 * for every child that took one, or they exited), so the fork and the
 * standby's prefault do not compete with the call for a CPU; if no standby
 * is left, at once. Children are reaped as they exit (CHILD_EXITED, with
 * the wait status). Exits when the host closes the channel. Returns only
 * in a child, which goes back to main's loop to read its CALL on its own
 * channel. */
void serve(void) {
    pid_t server = getpid();
    /* No plugin code may run in the server once it serves: a handler the
     * plugin installed (in a constructor or its warm_up) could otherwise
     * write on fd 3 when a child exits. Every signal goes back to its
     * default, SIGPIPE stays ignored, SIGSYS keeps the sandbox's reporter. */
    for (int signal_number = 1; signal_number < NSIG; signal_number++) {
        if (signal_number == SIGKILL || signal_number == SIGSTOP || signal_number == SIGSYS) continue;
        signal(signal_number, signal_number == SIGPIPE ? SIG_IGN : SIG_DFL);
    }
    /* The off switch (IsolationOptions.prefault): no plan, no training. */
    if (prefault_enabled()) prefault_parse_maps();
    g_train_pending = g_training != NULL;
    live_child live[WH_MAX_LIVE_CHILDREN];
    size_t live_count = 0;
    int early_deaths = 0;
    for (;;) {
        size_t standbys = 0, calling = 0;
        for (size_t i = 0; i < live_count; i++) {
            int standby = still_standby(&live[i], &early_deaths);
            standbys += standby;
            calling += !standby && !live[i].ended;
        }
        if (live_count < WH_MAX_LIVE_CHILDREN && standbys < WH_FORK_SERVER_STANDBYS &&
            (standbys == 0 || calling == 0)) {
            int notify = -1, pidfd = -1;
            pid_t pid = fork_child(server, &notify, &pidfd);
            if (pid == 0) return;
            live[live_count++] = (live_child){pid, pidfd, notify, 0};
            continue;
        }
        struct pollfd fds[1 + WH_MAX_LIVE_CHILDREN];
        fds[0] = (struct pollfd){WH_WIRE_FD, POLLIN, 0}; /* CALL_ENDED; POLLHUP: the host closed it */
        for (size_t i = 0; i < live_count; i++) fds[1 + i] = (struct pollfd){live[i].pidfd, POLLIN, 0};
        if (poll(fds, 1 + live_count, -1) < 0) {
            if (errno == EINTR) continue;
            _exit(8);
        }
        if (fds[0].revents & POLLIN) {
            uint16_t type;
            uint8_t *payload;
            uint32_t length;
            if (!recv_frame(&type, &payload, &length)) _exit(0); /* EOF: the host closed it */
            if (type != WH_MSG_CALL_ENDED || length != 4) _exit(4);
            pid_t pid = (pid_t)((uint32_t)payload[0] | (uint32_t)payload[1] << 8 | (uint32_t)payload[2] << 16 |
                                (uint32_t)payload[3] << 24);
            free(payload);
            /* The server kills the call's process group itself: it is the
             * child's parent, so the pid is certainly that child's until the
             * server reaps it (the host never takes a pid from a message). */
            for (size_t i = 0; i < live_count; i++)
                if (live[i].pid == pid && !live[i].ended) {
                    live[i].ended = 1;
                    kill(-pid, SIGKILL);
                }
        } else if (fds[0].revents & (POLLHUP | POLLERR)) {
            _exit(0);
        }
        size_t kept = 0;
        for (size_t i = 0; i < live_count; i++) {
            if (!fds[1 + i].revents) {
                live[kept++] = live[i];
                continue;
            }
            pid_t pid = live[i].pid;
            /* Whatever the call started dies before the child is reaped
             * (after that its group id could name someone else's group). */
            kill(-pid, SIGKILL);
            int status = 0;
            struct rusage usage;
            while (wait4(pid, &status, 0, &usage) < 0) {
                if (errno != EINTR) _exit(8);
            }
            close(live[i].pidfd);
            still_standby(&live[i], &early_deaths); /* reads and closes its pipe */
            if (pid == g_trainer) {
                g_trainer = 0;
                if (prefault_learn()) {
                    munmap(g_training, g_training_size);
                    g_training = NULL;
                } else {
                    g_train_pending = 1; /* it died first: the next child records */
                }
            }
            buffer b = {0};
            buf_u32(&b, (uint32_t)pid);
            buf_u32(&b, (uint32_t)status);
            buf_u64(&b, timeval_ns(usage.ru_utime) + timeval_ns(usage.ru_stime));
            struct timespec own;
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &own);
            buf_u64(&b, (uint64_t)own.tv_sec * 1000000000u + (uint64_t)own.tv_nsec);
            send_frame(WH_MSG_CHILD_EXITED, &b);
            free(b.data);
        }
        live_count = kept;
    }
}

