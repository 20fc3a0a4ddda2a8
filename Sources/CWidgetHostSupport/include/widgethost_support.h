/*
 * widgethost_support.h — thin host-side wrappers over Linux APIs that Swift
 * cannot call directly (variadic syscall(), GNU-only posix_spawn file
 * actions, wait-status macros). Nothing here forks: children are started
 * with posix_spawn (vfork semantics), which is safe from a multi-threaded
 * process.
 */
#ifndef WIDGETHOST_SUPPORT_H
#define WIDGETHOST_SUPPORT_H

#include <poll.h>
#include <sys/types.h>

#include "widgethost_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Starts `path` as an isolated child:
 *  - a new session and process group (the child's pid is its pgid), so a
 *    timeout can kill the whole group;
 *  - stdin from /dev/null, stdout to `stdout_fd`, stderr to `stderr_fd`,
 *    the protocol socket on fd 3 (WH_WIRE_FD), every other fd closed;
 *  - signal mask emptied and every signal at its default disposition;
 *  - working directory `cwd` (if not NULL) and environment `envp`.
 *  On success returns 0 and sets `*pid` and `*pidfd` (-1 if the kernel has
 *  no pidfd_open). On failure returns an errno value. */
int wh_spawn(const char *path, char *const argv[], char *const envp[], int protocol_fd,
             int stdout_fd, int stderr_fd, const char *cwd, pid_t *pid, int *pidfd);

/** pipe2(fds, O_CLOEXEC): returns 0 or -1 with errno set. */
int wh_pipe_cloexec(int fds[2]);

/** pidfd_open(2), or -1 with errno set. */
int wh_pidfd_open(pid_t pid);

/** pidfd_send_signal(pidfd, signal): signals exactly the process the pidfd
 *  refers to (never a reused pid). Returns 0 or -1 with errno. */
int wh_pidfd_kill(int pidfd, int signal);

/** What the kernel says a received pidfd refers to: its pid (from
 *  /proc/self/fdinfo) and, in *parent, that process's parent pid; -1 when
 *  `fd` is not a pidfd of a live process. Used to check a descriptor a
 *  child sent before acting on it. */
pid_t wh_pidfd_target(int fd, pid_t *parent);

/** Whether `ancestor` is `pid`'s parent, grandparent, ... up to `depth`
 *  generations (the kernel's word, from /proc/PID/stat). */
int wh_descends_from(pid_t pid, pid_t ancestor, int depth);

/** Follows `pid`'s only child, and that child's only child, up to `depth`
 *  generations (/proc/PID/task/PID/children), and returns the last: the
 *  runner that serves calls when the sandbox put a relay and a namespace's
 *  init above it; `pid` itself when it has no single child. */
pid_t wh_deepest_descendant(pid_t pid, int depth);

/** Decodes a wait status: returns 1 if the process exited (code in *value),
 *  2 if a signal killed it (signal in *value, *core set), 0 otherwise. */
int wh_wait_status(int status, int *value, int *core);

/** The abbreviation of a signal, e.g. "SEGV", or NULL if unknown. */
const char *wh_signal_abbrev(int signal);

/** Removes `path` and everything under it without following symlinks
 *  (nftw, FTW_DEPTH | FTW_PHYS). Returns 0 or -1. */
int wh_remove_tree(const char *path);

/** ppoll(2) with a timeout in nanoseconds (negative: none), so a deadline
 *  is not rounded up to whole milliseconds as poll(2) would. */
int wh_poll_ns(struct pollfd *fds, unsigned long count, long long timeout_ns);

/** recvmsg(2) without blocking that also takes the descriptors sent with
 *  the bytes (SCM_RIGHTS, received close-on-exec): up to `max_fds` in
 *  `fds` (more are closed), their number in `*fd_count`. Returns what
 *  recvmsg returned (-1 with errno set, 0 at EOF). */
ssize_t wh_recv_fds(int fd, void *buffer, size_t length, int *fds, int max_fds, int *fd_count);

/** The waiting thread's state while it approaches a deadline. */
typedef struct wh_deadline_boost {
    int active;
    int realtime;   /* SCHED_FIFO was granted */
    int policy;     /* the thread's policy and priority before */
    int priority;
    unsigned long slack_ns; /* its timer slack before */
} wh_deadline_boost;

/** For the last stretch before a deadline: the calling thread's timer slack
 *  to 1 ns (PR_SET_TIMERSLACK) and, where the kernel allows it (root,
 *  CAP_SYS_NICE or RLIMIT_RTPRIO), SCHED_FIFO priority 1, so the wake-up
 *  at the deadline is not delayed by other runnable threads. Degrades to
 *  the timer slack alone when real-time scheduling is refused. */
void wh_deadline_boost_begin(wh_deadline_boost *boost);

/** Restores what wh_deadline_boost_begin changed (no-op if not active). */
void wh_deadline_boost_end(wh_deadline_boost *boost);

/** Reads the kernel's count of threads of this process (from /proc). */
int wh_thread_count(void);

#ifdef __cplusplus
}
#endif

#endif
