/* async_good: valid; the timeline returns at once and completes 100 ms later
 * from a detached pthread (the context stays valid until completion). */
#define FX_NAME "async_good"
#include "fixture.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

typedef struct job {
    const wh_context *ctx;
    wh_complete_fn complete;
    void *completion_context;
} job;

static void *worker(void *arg) {
    job work = *(job *)arg;
    struct timespec delay = {0, 100 * 1000 * 1000};
    free(arg);
    nanosleep(&delay, NULL);
    fx_timeline_ok(work.ctx, work.complete, work.completion_context);
    return NULL;
}

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    pthread_t thread;
    pthread_attr_t attr;
    job *work = malloc(sizeof *work);
    if (work == NULL) abort();
    work->ctx = ctx;
    work->complete = complete;
    work->completion_context = completion_context;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&thread, &attr, worker, work) != 0) abort();
    pthread_attr_destroy(&attr);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
