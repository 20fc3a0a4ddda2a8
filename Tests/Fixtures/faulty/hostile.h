/*
 * hostile.h — helpers for the hostile fixtures (the sandbox suite): a kind
 * "test.fixture" with two parameters the tests set, `path` (string) and
 * `port` (integer), and readers for them from ctx->configuration_json.
 */
#ifndef WH_HOSTILE_H
#define WH_HOSTILE_H

#include "fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>

static const wh_parameter hx_parameters[2] = {
    {(uint32_t)sizeof(wh_parameter), WH_PARAM_STRING, "path", "\"\"", "a path the test chose"},
    {(uint32_t)sizeof(wh_parameter), WH_PARAM_INTEGER, "port", "0", "a TCP port on 127.0.0.1"},
};

#define HX_PLUGIN(placeholder_fn, snapshot_fn, timeline_fn)                                                  \
    static const wh_kind fx_kinds[1] = {{                                                                     \
        (uint32_t)sizeof(wh_kind), 0, FX_KIND_ID, "Fixture " FX_NAME, "Test fixture " FX_NAME ".",              \
        FX_FAMILIES, 2, (uint32_t)sizeof(wh_parameter), 0, hx_parameters, placeholder_fn, snapshot_fn,          \
        timeline_fn, NULL,                                                                                    \
    }};                                                                                                       \
    FX_STANDARD_ENTRY()

/* The string value of "name" in a flat JSON object the host built (no
 * escapes in the tests' paths), copied into out; "" if absent. */
static inline const char *hx_string(const wh_context *ctx, const char *name, char *out, size_t size) {
    char key[64];
    snprintf(key, sizeof key, "\"%s\":\"", name);
    const char *start = ctx->configuration_json ? strstr(ctx->configuration_json, key) : NULL;
    out[0] = 0;
    if (!start) return out;
    start += strlen(key);
    size_t n = 0;
    while (start[n] && start[n] != '"' && n + 1 < size) n++;
    memcpy(out, start, n);
    out[n] = 0;
    return out;
}

static inline long hx_integer(const wh_context *ctx, const char *name) {
    char key[64];
    snprintf(key, sizeof key, "\"%s\":", name);
    const char *start = ctx->configuration_json ? strstr(ctx->configuration_json, key) : NULL;
    return start ? strtol(start + strlen(key), NULL, 10) : 0;
}

/* Names the calling process "wh" + the last 8 characters of its data
 * directory (prctl PR_SET_NAME), so a test finds it in the host's /proc
 * (TestSupport.survivors(named:)) although its pid is that of the
 * sandbox's PID namespace. */
static inline void hx_mark_process(const wh_context *ctx) {
    const char *dir = ctx->data_directory ? ctx->data_directory : "";
    size_t n = strlen(dir);
    char name[16];
    snprintf(name, sizeof name, "wh%s", n > 8 ? dir + n - 8 : dir);
    prctl(PR_SET_NAME, name, 0, 0, 0);
}

/* Answers one entry whose content is `json` (a JSON object). */
static inline void hx_report(const wh_context *ctx, wh_complete_fn complete, void *completion_context,
                             const char *json) {
    wh_entry entry = fx_entry(ctx->now, json);
    wh_result result = fx_result(&entry, 1, WH_POLICY_AT_END, 0.0);
    complete(completion_context, &result);
}

/* Fails the call with `code` and `message`. */
static inline void hx_error(wh_complete_fn complete, void *completion_context, int32_t code, const char *message) {
    wh_result result;
    memset(&result, 0, sizeof result);
    result.struct_size = (uint32_t)sizeof result;
    result.status = WH_STATUS_ERROR;
    result.error_code = code;
    result.error_message = message;
    result.entry_size = (uint32_t)sizeof(wh_entry);
    complete(completion_context, &result);
}

#endif
