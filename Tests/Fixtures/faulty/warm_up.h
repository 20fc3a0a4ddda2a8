/*
 * warm_up.h — the shared body of the warm_up_* fixtures: a plugin whose
 * warm_up records what it saw, and whose entry points report it. Each
 * fixture defines FX_NAME and FX_WARM_UP_BEHAVIOUR (what the warm-up does
 * after recording), then includes this file.
 *
 * Every entry point answers one entry whose content is
 *   {"warmed":N,"calls":M,"warm_dir":"...","warm_locale":"...","warm_struct":S}
 * N: how many times warm_up ran in this process's history (0 without a
 * warm-up, 1 in every child of a warmed fork server); M: calls made in this
 * process (1: each call starts from the server's state, not the previous
 * call's).
 */
#include <stdio.h>
#include <string.h>

#include <widgethost/provider.h>

static void fx_warm_up(const wh_warm_up_context *context);
#define FX_WARM_UP fx_warm_up
#include "fixture.h"

static int fx_warmed;
static int fx_calls;
static char fx_warm_dir[256];
static char fx_warm_locale[32];
static unsigned fx_warm_struct;

static void fx_warm_up(const wh_warm_up_context *context) {
    fx_warmed++;
    fx_warm_struct = context->struct_size;
    snprintf(fx_warm_dir, sizeof fx_warm_dir, "%s", context->data_directory);
    snprintf(fx_warm_locale, sizeof fx_warm_locale, "%s", context->locale);
    FX_WARM_UP_BEHAVIOUR;
}

static void fx_report(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    static char content[512];
    fx_calls++;
    snprintf(content, sizeof content,
             "{\"warmed\":%d,\"calls\":%d,\"warm_dir\":\"%s\",\"warm_locale\":\"%s\",\"warm_struct\":%u}", fx_warmed,
             fx_calls, fx_warm_dir, fx_warm_locale, fx_warm_struct);
    wh_entry entry = fx_entry(ctx->now, content);
    wh_result result = fx_result(&entry, 1, WH_POLICY_NEVER, 0.0);
    complete(completion_context, &result);
}

FX_PLUGIN(fx_report, fx_report, fx_report);
