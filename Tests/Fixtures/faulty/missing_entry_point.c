/* missing_entry_point: the kind's timeline entry point is NULL
 * (placeholder and snapshot work). */
#define FX_NAME "missing_entry_point"
#include "fixture.h"

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, NULL)
