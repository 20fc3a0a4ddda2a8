/* ctor_hang: a constructor that loops forever, so dlopen never returns. */
#define FX_NAME "ctor_hang"
#include "fixture.h"

__attribute__((constructor)) static void hang_on_load(void) {
    volatile unsigned long spins = 0;
    for (;;) spins++;
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, fx_timeline_ok)
