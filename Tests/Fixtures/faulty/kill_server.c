/* kill_server: the timeline SIGKILLs its parent when that parent is a
 * widgethost-runner (a fork server: the call child's parent), then answers.
 * In spawn and worker modes the parent is the host, which it leaves alone
 * (the sandbox refuses such signals, but a test must not bet the test
 * runner on it). The host reports the server's death as the plugin's crash
 * (SIGKILL), never as a protocol violation, and starts a new server. */
#define FX_NAME "kill_server"
#include "fixture.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    char path[64], comm[64] = "";
    pid_t parent = getppid();
    snprintf(path, sizeof path, "/proc/%d/comm", (int)parent);
    FILE *f = fopen(path, "re");
    if (f) {
        if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
        fclose(f);
    }
    if (strncmp(comm, "widgethost-runn", 15) == 0) {
        kill(parent, SIGKILL);
        usleep(100 * 1000); /* let the kill land before answering */
    }
    fx_timeline_ok(ctx, complete, completion_context);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
