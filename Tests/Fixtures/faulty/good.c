/* good: a fully valid plugin. Placeholder and snapshot answer one entry,
 * timeline three entries one hour apart (policy AT_END). The snapshot writes
 * one line to stdout and one to stderr, which the host captures. */
#define FX_NAME "good"
#include "fixture.h"

#include <stdio.h>

static void snapshot(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    printf("hello from good\n");
    fflush(stdout);
    fprintf(stderr, "warn from good\n");
    fx_answer_one(ctx, complete, completion_context);
}

FX_PLUGIN(fx_placeholder_ok, snapshot, fx_timeline_ok)
