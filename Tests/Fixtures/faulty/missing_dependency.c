/* missing_dependency: linked against libwhfixturedep.so (DT_NEEDED), which
 * build.sh deletes after linking, so dlopen fails with
 * "libwhfixturedep.so: cannot open shared object file". */
#define FX_NAME "missing_dependency"
#include "fixture.h"

int wh_fixture_dep_value(void);

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    if (wh_fixture_dep_value() != 7) return;
    fx_timeline_ok(ctx, complete, completion_context);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
