/* setsid_escape: the timeline forks a grandchild that calls setsid() to
 * leave the call's process group, writes its pid to `escapee.pid` in the
 * data directory and sleeps for an hour; the plugin answers normally. The
 * grandchild names itself (hostile.h, hx_mark_process) so a test finds it
 * whatever PID namespace it is in. */
#define FX_NAME "setsid_escape"
#include "hostile.h"

#include <stdio.h>
#include <unistd.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    pid_t pid = fork();
    if (pid == 0) {
        hx_mark_process(ctx);
        int escaped = setsid() >= 0;
        FILE *f = fopen("escapee.pid", "w");
        if (f) {
            fprintf(f, "%d %d\n", (int)getpid(), escaped);
            fclose(f);
        }
        sleep(3600);
        _exit(0);
    }
    usleep(200000); /* let the grandchild write its pid */
    fx_timeline_ok(ctx, complete, completion_context);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
