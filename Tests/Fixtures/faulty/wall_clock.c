/* wall_clock: a valid plugin that ignores ctx->now and reads the system's
 * wall clock three ways, as WidgetKit-style code does with Date(). The host
 * makes those read the call's time (virtual in simulations); the timeline's
 * one entry reports what each function returned. */
#define FX_NAME "wall_clock"
#include "fixture.h"

#include <stdio.h>
#include <sys/time.h>
#include <time.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    struct timespec ts;
    struct timeval tv;
    clock_gettime(CLOCK_REALTIME, &ts);
    gettimeofday(&tv, NULL);
    time_t t = time(NULL);
    char content[160];
    snprintf(content, sizeof content, "{\"clock_gettime\":%lld,\"gettimeofday\":%lld,\"time\":%lld}",
             (long long)ts.tv_sec, (long long)tv.tv_sec, (long long)t);
    wh_entry entry = fx_entry(ctx->now, content);
    wh_result result = fx_result(&entry, 1, WH_POLICY_NEVER, 0);
    complete(completion_context, &result);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
