/* fork_bomb: the timeline forks, and every process keeps forking, never
 * completing. Capped at 1000 processes through a shared counter so a test
 * run as root (which RLIMIT_NPROC does not bind) cannot exhaust the
 * machine's pids even without the sandbox's pids cgroup. The first process
 * whose fork is refused writes "fork_bomb: fork refused (<error>) with N
 * processes" to stderr, N counting the forks that succeeded (those whose
 * child ran within 200 ms) plus the first process. The call times out and the whole group is killed. */
#define FX_NAME "fork_bomb"
#include "fixture.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct shared {
    int attempts; /* forks tried (the cap) */
    int alive;    /* forks that succeeded */
    int reported;
};

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    FX_UNUSED(ctx, complete, completion_context);
    struct shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED) for (;;) pause();
    for (;;) {
        if (__atomic_fetch_add(&s->attempts, 1, __ATOMIC_SEQ_CST) >= 1000) {
            pause();
            continue;
        }
        pid_t pid = fork();
        if (pid == 0) {
            __atomic_fetch_add(&s->alive, 1, __ATOMIC_SEQ_CST);
        } else if (pid < 0) {
            int error = errno;
            if (__atomic_exchange_n(&s->reported, 1, __ATOMIC_SEQ_CST) == 0) {
                usleep(200 * 1000); /* let the forked children count themselves */
                fprintf(stderr, "fork_bomb: fork refused (%s) with %d processes\n", strerror(error),
                        __atomic_load_n(&s->alive, __ATOMIC_SEQ_CST) + 1);
                fflush(stderr);
            }
            pause();
        }
    }
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
