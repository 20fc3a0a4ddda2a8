/* close_entries: timeline entries only 60 s apart (a warning: entries
 * should be at least 5 minutes apart), otherwise valid. */
#define FX_NAME "close_entries"
#include "fixture.h"

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    fx_answer_three(ctx, complete, completion_context, 60.0, WH_POLICY_AT_END, 0.0);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
