/*
 * virtual_clock.c — the plugin's wall clock follows the host's clock.
 *
 * A provider should read `context->now`, but WidgetKit-style code calls
 * `Date()` (clock_gettime(CLOCK_REALTIME)) as the seed examples do. So that
 * such code sees the host's time too — the virtual time of
 * `widgethost simulate` — the runner, which is the main executable and exports
 * its symbols (-rdynamic), interposes the wall-clock functions: every
 * library the plugin loads binds to these definitions first. Each adds the
 * offset between the call's `now` and the real clock; monotonic clocks are
 * left alone. The offset is zero until a call sets it.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "virtual_clock.h"

/* Offset in nanoseconds added to CLOCK_REALTIME readings. */
static long long offset_ns;

static int real_clock_gettime(clockid_t clock, struct timespec *ts) {
    return (int)syscall(SYS_clock_gettime, clock, ts);
}

static double real_now(void) {
    struct timespec ts;
    real_clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void wh_virtual_clock_set(double now) {
    offset_ns = (long long)((now - real_now()) * 1e9);
}

static void shift(struct timespec *ts) {
    long long total = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec + offset_ns;
    ts->tv_sec = (time_t)(total / 1000000000LL);
    ts->tv_nsec = (long)(total % 1000000000LL);
    if (ts->tv_nsec < 0) {
        ts->tv_nsec += 1000000000L;
        ts->tv_sec -= 1;
    }
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
    int rc = real_clock_gettime(clock, ts);
    if (rc == 0 && offset_ns != 0 &&
        (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE || clock == CLOCK_TAI)) {
        shift(ts);
    }
    return rc;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    (void)tz;
    struct timespec ts;
    int rc = clock_gettime(CLOCK_REALTIME, &ts);
    if (rc == 0) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = (suseconds_t)(ts.tv_nsec / 1000);
    }
    return rc;
}

time_t time(time_t *out) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out != NULL) *out = ts.tv_sec;
    return ts.tv_sec;
}
