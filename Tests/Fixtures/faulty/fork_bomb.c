/* fork_bomb: the timeline forks, and every process keeps forking, never
 * completing. Capped at 1000 processes through a shared counter so a test
 * run as root (which RLIMIT_NPROC does not bind) cannot exhaust the
 * machine's pids. The call times out and the whole group is killed. */
#define FX_NAME "fork_bomb"
#include "fixture.h"

#include <sys/mman.h>
#include <unistd.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    FX_UNUSED(ctx, complete, completion_context);
    int *count = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (count == MAP_FAILED) for (;;) pause();
    for (;;) {
        if (__atomic_fetch_add(count, 1, __ATOMIC_SEQ_CST) >= 1000) {
            pause();
            continue;
        }
        if (fork() < 0) pause();
    }
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
