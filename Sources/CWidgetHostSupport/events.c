#define _GNU_SOURCE
#include "widgethost_events.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int wh_signalfd_open(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0) return -1;
    signal(SIGPIPE, SIG_IGN);
    return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

/* The write end of wh_interrupt_pipe_open's pipe, for its handler, and the
 * signals it catches. */
static volatile sig_atomic_t interrupt_pipe = -1;
static sigset_t interrupt_signals;

static void write_interrupt(int signal_number) {
    int saved = errno;
    unsigned char byte = (unsigned char)signal_number;
    ssize_t written = write(interrupt_pipe, &byte, 1);
    (void)written;
    errno = saved;
}

int wh_interrupt_pipe_open(void) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
    /* The handler never waits: once the reader has one signal, more are
     * dropped rather than block the thread they interrupt. */
    fcntl(fds[1], F_SETFL, O_NONBLOCK);
    interrupt_pipe = fds[1];
    sigemptyset(&interrupt_signals);
    const int signals[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction old;
        if (sigaction(signals[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN) continue;
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = write_interrupt;
        sigemptyset(&action.sa_mask);
        /* Once: a second signal takes the default action at once, as the
         * user pressing Ctrl-C again expects. */
        action.sa_flags = SA_RESTART | SA_RESETHAND;
        if (sigaction(signals[i], &action, NULL) == 0) sigaddset(&interrupt_signals, signals[i]);
    }
    return fds[0];
}

void wh_interrupt_unblock(void) {
    pthread_sigmask(SIG_UNBLOCK, &interrupt_signals, NULL);
}

int wh_signalfd_read(int fd) {
    struct signalfd_siginfo info;
    ssize_t n = read(fd, &info, sizeof info);
    if (n == (ssize_t)sizeof info) return (int)info.ssi_signo;
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
    return -1;
}

int wh_timerfd_open(void) { return timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC); }

int wh_timerfd_arm(int fd, double seconds) {
    struct itimerspec spec;
    memset(&spec, 0, sizeof spec);
    if (seconds >= 0) {
        time_t whole = (time_t)seconds; /* truncation: seconds >= 0 */
        spec.it_value.tv_sec = whole;
        spec.it_value.tv_nsec = (long)((seconds - (double)whole) * 1e9);
        if (spec.it_value.tv_nsec > 999999999L) spec.it_value.tv_nsec = 999999999L;
        /* A zero it_value disarms: an already-past deadline must still fire. */
        if (spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0) spec.it_value.tv_nsec = 1;
    }
    return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &spec, NULL);
}

int wh_timerfd_read(int fd) {
    uint64_t expirations = 0;
    ssize_t n = read(fd, &expirations, sizeof expirations);
    if (n == (ssize_t)sizeof expirations) return 1;
    if (n < 0 && errno == ECANCELED) return 2;
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
    return -1;
}

int wh_eventfd_open(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

void wh_eventfd_signal(int fd) {
    uint64_t one = 1;
    ssize_t ignored = write(fd, &one, sizeof one);
    (void)ignored;
}

void wh_eventfd_drain(int fd) {
    uint64_t value;
    ssize_t ignored = read(fd, &value, sizeof value);
    (void)ignored;
}

int wh_sd_notify(const char *state) {
    const char *path = getenv("NOTIFY_SOCKET");
    if (path == NULL || path[0] == '\0') return 0;
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    size_t length = strlen(path);
    if (length >= sizeof address.sun_path) return -1;
    memcpy(address.sun_path, path, length);
    if (address.sun_path[0] == '@') address.sun_path[0] = '\0'; /* abstract namespace */
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    ssize_t sent = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&address,
                          (socklen_t)(offsetof(struct sockaddr_un, sun_path) + length));
    close(fd);
    return sent < 0 ? -1 : 1;
}

double wh_monotonic_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

int wh_peer_credentials(int fd, unsigned int *uid, int *pid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    *uid = credentials.uid;
    *pid = credentials.pid;
    return 0;
}
