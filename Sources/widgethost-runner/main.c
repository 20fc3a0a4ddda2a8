/*
 * widgethost-runner — the child process that loads one provider plugin and
 * calls it on the host's behalf.
 *
 * No plugin code ever runs in the host: `dlopen` (which runs the plugin's
 * constructors) and every entry-point call happen here. The host talks to
 * this process over the framed protocol of widgethost_wire.h on fd 3; the
 * plugin's stdout and stderr are pipes the host reads separately, so
 * nothing a plugin prints can corrupt the protocol.
 *
 * This program is deliberately small, single-threaded (plugins may start
 * threads; the runner itself never does) and free of anything that breaks
 * after fork(), so that the fork server can reuse it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner.h"
#include "sandbox.h"


uint64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t timeval_ns(struct timeval t) {
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_usec * 1000u;
}

uint32_t thread_count(void) {
    FILE *f = fopen("/proc/self/status", "re");
    if (!f) return 0;
    char line[256];
    uint32_t n = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "Threads:", 8) == 0) {
            n = (uint32_t)strtoul(line + 8, NULL, 10);
            break;
        }
    }
    fclose(f);
    return n;
}

/* ------------------------------------------------------------------ */

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "--sandbox-check") == 0)
        return wh_sandbox_check(stdout, argc >= 3 && strcmp(argv[2], "--json") == 0);
    struct stat st;
    if (argc > 1 || fstat(WH_WIRE_FD, &st) != 0 || !S_ISSOCK(st.st_mode)) {
        fprintf(stderr,
                "widgethost-runner: this program is started by widgethost to load and call a\n"
                "plugin in an isolated process; it is not meant to be run by hand.\n"
                "Use `widgethost load PLUGIN.so` instead.\n");
        return 2;
    }
    /* Die with the host: PDEATHSIG fires when the parent thread exits;
     * re-check the parent after setting it, in case it already died (then
     * the runner was given to init or a subreaper, another pid). A parent
     * that is pid 1 is a host running as a container's init, not a dead one. */
    pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(7);
    signal(SIGPIPE, SIG_IGN);
    /* Plugin output goes to pipes; make stdio line-buffered so a crash
     * loses as little of the plugin's log as possible. */
    setvbuf(stdout, NULL, _IOLBF, 0);

    for (;;) {
        uint16_t type;
        uint8_t *payload;
        uint32_t length;
        if (!recv_frame(&type, &payload, &length)) break;
        reader r = {payload, length, 0, 0};
        switch (type) {
        case WH_MSG_LOAD: handle_load(&r); break;
        case WH_MSG_CALL:
            if (g_notify_fd >= 0) {
                /* Mark this child as taken for the server (which reads the
                 * pipe when it next decides on forking; nobody is woken),
                 * then close it: the plugin sees only fds 0-3. */
                ssize_t w;
                do w = write(g_notify_fd, "c", 1);
                while (w < 0 && errno == EINTR);
                close(g_notify_fd);
                g_notify_fd = -1;
            }
            handle_call(&r);
            /* A call child answered its one call (the answer is in the
             * host's socket buffer, which outlives this process): it ends
             * now, plugin threads and all, and the host still kills its
             * process group for whatever the plugin started. Ending here
             * rather than waiting for that SIGKILL spares the host waking a
             * sleeping process on another CPU (an IPI; measured: ~8 µs less
             * host CPU per call). Its teardown (freeing its memory) runs as
             * SCHED_BATCH at nice 19: it does not preempt the host or the
             * next call, and gets a CPU as soon as one is free (still a
             * small share under sustained load, where SCHED_IDLE could
             * starve teardowns and pile up dying children). */
            /* A warm worker, its answer sent: no process the call started
             * lives on into the next call (in the sandbox's PID namespace
             * every one is killed and reaped); without the namespace, at
             * least none stays a zombie until the worker is recycled. */
            if (g_mode == WH_RUNNER_WORKER && wh_sandbox_end_strays() < 0)
                while (waitpid(-1, NULL, WNOHANG) > 0) {
                }
            if (g_call_child) {
                struct sched_param batch = {0};
                sched_setscheduler(0, SCHED_BATCH, &batch);
                setpriority(PRIO_PROCESS, 0, 19);
                _exit(0);
            }
            break;
        default: _exit(4);
        }
        free(payload);
    }
    /* The host closed the channel. Do not run the plugin's destructors or
     * atexit handlers: they are not part of any call. */
    _exit(0);
}
