/*
 * sandbox_pidns.c — the PID namespace layer: a namespace whose init is
 * ours, so that every process a plugin starts (at load, warm-up or call
 * time, whatever its process group or session) dies with the runner.
 *
 * After unshare(CLONE_NEWPID) (sandbox_netns.c makes the namespaces) the
 * runner splits in three:
 *
 *   relay  (the process the host spawned, in the host's namespace): closes
 *          everything, waits for init and exits as the runner did: with its
 *          exit code, or killed by its signal (so the host's outcome
 *          mapping is unchanged). Killed itself (the host's group kill, the
 *          host's death through PR_SET_PDEATHSIG), it takes init with it.
 *   init   (PID 1 of the namespace, a child of the relay): never runs
 *          plugin code. It reaps every orphan the plugin leaves, at once
 *          (waitpid(-1) in a loop), so no zombie holds a slot of the pids
 *          cgroup; when the runner exits it passes the runner's wait status
 *          to the relay and exits, and the kernel kills every process left
 *          in the namespace. The kernel gives it no signal from inside the
 *          namespace (it installs no handler): kill(1, ...), kill(-1, ...)
 *          and kill(getppid(), ...) from plugin code cannot end it.
 *   runner (PID 2, init's child): returns from wh_pidns_split and goes on
 *          with the sandbox, loads the plugin and serves calls; plugin code
 *          runs here and in its children, with ordinary signal semantics
 *          (as PID 1 a process ignores its own abort() and SIGSYS).
 */
#define _GNU_SOURCE
#include "sandbox_layers.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

pid_t wh_sandbox_host_pid;
pid_t wh_sandbox_runner_pid;
static int g_pidns_active;

int wh_pidns_active(void) { return g_pidns_active; }

/* Closes every descriptor but `keep`. */
static void close_all_but(int keep) {
    if (keep > 0) syscall(SYS_close_range, 0, (unsigned)keep - 1, 0);
    syscall(SYS_close_range, (unsigned)keep + 1, ~0U, 0);
}

/* Ends this process the way `status` says a process ended: the same exit
 * code, or killed by the same signal (default action, no core file). */
static void exit_like(int status) __attribute__((noreturn));
static void exit_like(int status) {
    if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
    int signal = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_DFL;
    sigaction(signal, &action, NULL);
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_UNBLOCK, &all, NULL);
    kill(getpid(), signal);
    _exit(128 + signal); /* a signal whose default is not to terminate */
}

/* The relay: waits for init, then for the runner's status init sends. */
static void relay(pid_t init, int link) __attribute__((noreturn));
static void relay(pid_t init, int link) {
    close_all_but(link);
    int status = 0;
    while (waitpid(init, &status, 0) < 0) {
        if (errno != EINTR) _exit(8);
    }
    int runner_status;
    ssize_t got;
    do got = recv(link, &runner_status, sizeof runner_status, MSG_DONTWAIT);
    while (got < 0 && errno == EINTR);
    exit_like(got == (ssize_t)sizeof runner_status ? runner_status : status);
}

/* Init: reaps everything; when the runner is gone, reports its status. */
static void init_loop(pid_t runner, int link) __attribute__((noreturn));
static void init_loop(pid_t runner, int link) {
    close_all_but(link);
    for (;;) {
        int status = 0;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid == runner) {
            ssize_t ignored = send(link, &status, sizeof status, MSG_NOSIGNAL);
            (void)ignored;
            _exit(0); /* the kernel kills what is left in the namespace */
        }
        if (pid < 0 && errno != EINTR) _exit(8);
    }
}

int wh_pidns_split(char *error, size_t error_size) {
    int link[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, link) != 0) {
        snprintf(error, error_size, "socketpair: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    wh_sandbox_host_pid = getpid();
    pid_t init = fork();
    if (init < 0) {
        snprintf(error, error_size, "fork (the PID namespace's init): %s", strerror(errno));
        close(link[0]);
        close(link[1]);
        return -1;
    }
    if (init > 0) {
        close(link[1]);
        relay(init, link[0]);
    }
    /* Init (PID 1): dies with the relay; if the relay is already gone (the
     * host died), its end of the link has hung up. */
    close(link[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    struct pollfd hup = {link[1], POLLRDHUP, 0};
    if (poll(&hup, 1, 0) != 0) _exit(7);
    pid_t runner = fork();
    if (runner < 0) _exit(8);
    if (runner > 0) init_loop(runner, link[1]);
    close(link[1]);
    wh_sandbox_runner_pid = getpid();
    g_pidns_active = 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Between calls                                                       */
/* ------------------------------------------------------------------ */

int wh_sandbox_end_strays(void) {
    if (!g_pidns_active || getpid() != wh_sandbox_runner_pid) return -1;
    /* Inside the namespace kill(-1) reaches every process but init and the
     * caller, atomically: a fork bomb cannot outrun it. */
    if (kill(-1, SIGKILL) != 0 && errno != ESRCH) return -1;
    int reaped = 0, status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, __WALL)) > 0 || (pid < 0 && errno == EINTR))
        if (pid > 0) reaped++;
    return reaped;
}

int wh_sandbox_reap_orphans(const pid_t *tracked, size_t tracked_count) {
    /* The caller's children, from each of its threads' `children` lists
     * (a child belongs to the thread that forked it). */
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) return -1;
    int reaped = 0;
    struct dirent *task;
    while ((task = readdir(tasks)) != NULL) {
        if (task->d_name[0] == '.') continue;
        char path[64], list[4096];
        snprintf(path, sizeof path, "/proc/self/task/%.16s/children", task->d_name);
        if (wh_read_text(path, list, sizeof list) != 0) continue;
        for (char *at = list, *end; *at; at = end) {
            long pid = strtol(at, &end, 10);
            if (end == at) break;
            int mine = 0;
            for (size_t i = 0; i < tracked_count && !mine; i++) mine = tracked[i] == (pid_t)pid;
            int status;
            if (!mine && pid > 0 && waitpid((pid_t)pid, &status, WNOHANG | __WALL) > 0) reaped++;
        }
    }
    closedir(tasks);
    return reaped;
}
