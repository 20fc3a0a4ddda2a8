/* unresolved_symbol: the timeline calls wh_fixture_does_not_exist, defined
 * nowhere. Linked with plain -shared (undefined symbols allowed), so
 * dlopen(RTLD_NOW) fails: "undefined symbol: wh_fixture_does_not_exist". */
#define FX_NAME "unresolved_symbol"
#include "fixture.h"

extern void wh_fixture_does_not_exist(void);

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    wh_fixture_does_not_exist();
    fx_timeline_ok(ctx, complete, completion_context);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
