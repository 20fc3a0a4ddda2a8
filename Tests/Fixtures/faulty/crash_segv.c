/* crash_segv: writes through a NULL pointer in snapshot and in timeline
 * (SIGSEGV). The placeholder works. */
#define FX_NAME "crash_segv"
#include "fixture.h"

static void crash(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    /* Both volatile: the compiler may neither drop the store nor, knowing
     * the pointer is NULL, turn it into a trap instruction (SIGILL). */
    volatile int *volatile target = NULL;
    FX_UNUSED(ctx, complete, completion_context);
    *target = 42;
}

FX_PLUGIN(fx_placeholder_ok, crash, crash)
