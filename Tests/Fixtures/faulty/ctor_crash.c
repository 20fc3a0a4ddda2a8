/* ctor_crash: a constructor that segfaults, so dlopen itself crashes
 * (before widgethost_provider_entry is ever called). */
#define FX_NAME "ctor_crash"
#include "fixture.h"

__attribute__((constructor)) static void crash_on_load(void) {
    volatile int *volatile target = NULL;
    *target = 42;
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, fx_timeline_ok)
