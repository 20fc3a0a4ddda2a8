/*
 * strays.c — a check of the runner's between-calls interface (sandbox.h),
 * linked with the runner's own sandbox sources by
 * SandboxStraysTests.swift: applies the PID namespace layer, then plays a
 * warm worker whose plugin left processes behind, and prints what
 * wh_sandbox_reap_orphans and wh_sandbox_end_strays did, as one JSON line:
 *
 *   {"pid": the runner's pid in its namespace (2),
 *    "untracked_reaped": zombies reaped beside a tracked one (1),
 *    "tracked_left": the tracked zombie still there for its owner (1),
 *    "strays_reaped": wh_sandbox_end_strays's count (3: two children and
 *                     one that had started a grandchild),
 *    "left": processes of the namespace other than init and the caller (0),
 *    "outside": wh_sandbox_end_strays without a namespace (-1)}
 *
 * Usage: strays DATA_DIRECTORY [--no-namespace]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox.h"
#include "widgethost_wire.h"

static int others_in_namespace(void) {
    int count = 0;
    DIR *proc = opendir("/proc");
    struct dirent *e;
    while (proc && (e = readdir(proc)) != NULL) {
        int pid = atoi(e->d_name);
        if (pid <= 0 || pid == 1 || pid == getpid()) continue;
        char path[64], state[256] = "";
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (!fgets(state, sizeof state, f)) state[0] = 0;
        fclose(f);
        char *close_paren = strrchr(state, ')');
        if (close_paren && close_paren[2] != 'Z') count++;
    }
    if (proc) closedir(proc);
    return count;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    if (argc > 2 && strcmp(argv[2], "--no-namespace") == 0) {
        printf("{\"outside\":%d}\n", wh_sandbox_end_strays());
        return 0;
    }
    wh_sandbox_policy p = {0};
    p.plugin_path = "/nonexistent/plugin.so";
    p.data_directory = argv[1];
    p.flags = WH_SANDBOX_PIDNS | WH_SANDBOX_MOUNTNS;
    char error[256] = "";
    fflush(stdout);
    if (wh_sandbox_apply(&p, error, sizeof error) < 0) {
        printf("{\"error\":\"%s\"}\n", error);
        return 1;
    }
    /* Two children exit at once; the first is "tracked" by the caller. */
    pid_t tracked = fork();
    if (tracked == 0) _exit(0);
    pid_t untracked = fork();
    if (untracked == 0) _exit(0);
    usleep(100 * 1000);
    int untracked_reaped = wh_sandbox_reap_orphans(&tracked, 1);
    int status;
    int tracked_left = waitpid(tracked, &status, WNOHANG) == tracked;
    /* What a plugin leaves: two sleepers, one of them with a detached
     * grandchild (an orphan once its parent dies: init's). */
    for (int i = 0; i < 2; i++)
        if (fork() == 0) {
            if (i == 0 && fork() == 0) {
                setsid();
                pause();
            }
            pause();
            _exit(0);
        }
    pid_t orphan_maker = fork();
    if (orphan_maker == 0) {
        if (fork() == 0) pause();
        _exit(0);
    }
    usleep(100 * 1000);
    int strays_reaped = wh_sandbox_end_strays();
    usleep(100 * 1000);
    printf("{\"pid\":%d,\"untracked_reaped\":%d,\"tracked_left\":%d,\"strays_reaped\":%d,\"left\":%d}\n",
           (int)getpid(), untracked_reaped, tracked_left, strays_reaped, others_in_namespace());
    fflush(stdout);
    return 0;
}
