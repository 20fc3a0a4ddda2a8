/* ticking: a well-behaved timeline whose entries come 2 s apart (for the
 * daemon's `entry` events and relevance), policy never. The second entry
 * carries a relevance (score 50 while displayed).
 *
 * The instance's configuration may move the entries: `{"start": 40,
 * "spacing": 1}` puts them at now + 40, + 41 and + 42 s (the first
 * displayed until then), so that a test can have them pass while the daemon
 * cannot write. */
#define FX_NAME "ticking"
#include "fixture.h"

#include <stdio.h>
#include <stdlib.h>

/* The number after `"key":` in `json`, or `otherwise`. */
static double number(const char *json, const char *key, double otherwise) {
    char quoted[32];
    const char *found;
    char *end;
    double value;
    if (!json) return otherwise;
    snprintf(quoted, sizeof quoted, "\"%s\":", key);
    found = strstr(json, quoted);
    if (!found) return otherwise;
    value = strtod(found + strlen(quoted), &end);
    return end == found + strlen(quoted) || !(value >= 0 && value <= 3600) ? otherwise : value;
}

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    wh_entry entries[4];
    wh_result result;
    double start = number(ctx->configuration_json, "start", 0);
    double spacing = number(ctx->configuration_json, "spacing", 2);
    uint32_t count = 0;
    /* Shown from now when the ticking starts later. */
    if (start > 0) entries[count++] = fx_entry(ctx->now, "{\"fixture\":\"ticking\",\"index\":-1}");
    entries[count++] = fx_entry(ctx->now + start, "{\"fixture\":\"ticking\",\"index\":0}");
    entries[count++] = wh_make_relevant_entry(ctx->now + start + spacing, "{\"fixture\":\"ticking\",\"index\":1}", 50.0,
                                              0.0);
    entries[count++] = fx_entry(ctx->now + start + 2 * spacing, "{\"fixture\":\"ticking\",\"index\":2}");
    result = fx_result(entries, count, WH_POLICY_NEVER, 0.0);
    complete(completion_context, &result);
}

static const wh_parameter parameters[] = {
    WH_PARAMETER(WH_PARAM_NUMBER, "start", "0", "Seconds from now to the first entry's date"),
    WH_PARAMETER(WH_PARAM_NUMBER, "spacing", "2", "Seconds between the entries"),
};
static const wh_kind fx_kinds[1] = {{
    (uint32_t)sizeof(wh_kind), 0, FX_KIND_ID, "Fixture " FX_NAME, "Test fixture " FX_NAME ".", FX_FAMILIES, 2,
    (uint32_t)sizeof(wh_parameter), 0, parameters, fx_placeholder_ok, fx_snapshot_ok, timeline, NULL,
}};
FX_STANDARD_ENTRY()
