/* too_large: one timeline entry whose content is 11 MiB (the limit is
 * 10 MiB per result): a valid JSON object holding one long string. */
#define FX_NAME "too_large"
#include "fixture.h"

#include <stdlib.h>

#define CONTENT_BYTES (11u * 1024u * 1024u)

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    static const char head[] = "{\"s\":\"";
    static const char tail[] = "\"}";
    char *content = malloc(CONTENT_BYTES + 1);
    wh_entry entry;
    wh_result result;
    if (content == NULL) abort();
    memset(content, 'a', CONTENT_BYTES);
    memcpy(content, head, sizeof head - 1);
    memcpy(content + CONTENT_BYTES - (sizeof tail - 1), tail, sizeof tail - 1);
    content[CONTENT_BYTES] = '\0';
    entry = fx_entry(ctx->now, content);
    entry.content_length = CONTENT_BYTES;
    result = fx_result(&entry, 1, WH_POLICY_AT_END, 0.0);
    complete(completion_context, &result);
    free(content);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
