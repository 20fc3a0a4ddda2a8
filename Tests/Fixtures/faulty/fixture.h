/*
 * fixture.h — shared helpers for the faulty test plugins.
 *
 * Every fixture is a valid widgethost plugin (one kind, id "test.fixture",
 * families systemSmall|systemMedium) except for exactly one bad behaviour,
 * named at the top of its file. Define FX_NAME (the file name, without .c)
 * before including this header.
 *
 * Built by build.sh with: cc -shared -fPIC -std=gnu11 -O1 -pthread
 */
#ifndef WH_FIXTURE_H
#define WH_FIXTURE_H

#include <widgethost/provider.h>

#include <string.h>

#ifndef FX_NAME
#error "define FX_NAME before including fixture.h"
#endif

#define FX_KIND_ID "test.fixture"
#define FX_FAMILIES (WH_FAMILY_SYSTEM_SMALL | WH_FAMILY_SYSTEM_MEDIUM)
#define FX_HOUR 3600.0

/* Silences -Wunused-parameter in entry points that ignore their arguments. */
#define FX_UNUSED(ctx, complete, completion_context) \
    do {                                            \
        (void)(ctx);                                \
        (void)(complete);                           \
        (void)(completion_context);                 \
    } while (0)

/* A valid entry at `date`. `content` must outlive the completion call. */
static inline wh_entry fx_entry(double date, const char *content) {
    wh_entry entry;
    memset(&entry, 0, sizeof entry);
    entry.struct_size = (uint32_t)sizeof entry;
    entry.date = date;
    entry.content_json = content;
    entry.content_length = 0;
    return entry;
}

/* A valid OK result over `count` entries. */
static inline wh_result fx_result(const wh_entry *entries, uint32_t count, uint32_t policy, double policy_date) {
    wh_result result;
    memset(&result, 0, sizeof result);
    result.struct_size = (uint32_t)sizeof result;
    result.status = WH_STATUS_OK;
    result.entry_count = count;
    result.entry_size = (uint32_t)sizeof(wh_entry);
    result.entries = entries;
    result.policy = policy;
    result.policy_date = policy_date;
    return result;
}

/* Answers one entry at ctx->now (placeholder and snapshot). */
static inline void fx_answer_one(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    wh_entry entry = fx_entry(ctx->now, "{\"fixture\":\"" FX_NAME "\",\"entries\":1}");
    wh_result result = fx_result(&entry, 1, WH_POLICY_NEVER, 0.0);
    complete(completion_context, &result);
}

/* Answers three entries `spacing` seconds apart from ctx->now with `policy`. */
static inline void fx_answer_three(const wh_context *ctx, wh_complete_fn complete, void *completion_context,
                                   double spacing, uint32_t policy, double policy_date) {
    wh_entry entries[3];
    wh_result result;
    entries[0] = fx_entry(ctx->now, "{\"fixture\":\"" FX_NAME "\",\"index\":0}");
    entries[1] = fx_entry(ctx->now + spacing, "{\"fixture\":\"" FX_NAME "\",\"index\":1}");
    entries[2] = fx_entry(ctx->now + 2 * spacing, "{\"fixture\":\"" FX_NAME "\",\"index\":2}");
    result = fx_result(entries, 3, policy, policy_date);
    complete(completion_context, &result);
}

/* The well-behaved entry points. */
static inline void fx_placeholder_ok(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    fx_answer_one(ctx, complete, completion_context);
}
static inline void fx_snapshot_ok(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    fx_answer_one(ctx, complete, completion_context);
}
static inline void fx_timeline_ok(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    fx_answer_three(ctx, complete, completion_context, FX_HOUR, WH_POLICY_AT_END, 0.0);
}

/* The kind table: one kind, "test.fixture", with the given entry points. */
#define FX_KINDS(placeholder_fn, snapshot_fn, timeline_fn)                                            \
    static const wh_kind fx_kinds[1] = {{                                                              \
        (uint32_t)sizeof(wh_kind), 0, FX_KIND_ID, "Fixture " FX_NAME, "Test fixture " FX_NAME ".",       \
        FX_FAMILIES, 0, (uint32_t)sizeof(wh_parameter), 0, NULL, placeholder_fn, snapshot_fn, timeline_fn, \
        NULL,                                                                                          \
    }}

/* The descriptor's warm_up: define FX_WARM_UP (a wh_warm_up_fn) before
 * including this header to give the fixture one. */
#ifndef FX_WARM_UP
#define FX_WARM_UP NULL
#endif

/* A descriptor initializer over fx_kinds with the fields fixtures tamper with. */
#define FX_DESCRIPTOR_INIT(struct_size_value, magic_value, abi_version_value, refusal_text)                 \
    {                                                                                                       \
        (uint32_t)(struct_size_value), (magic_value), (abi_version_value), (uint32_t)sizeof(wh_kind),        \
            (uint32_t)sizeof(wh_entry), (uint32_t)sizeof(wh_result), "test.fixture." FX_NAME,                \
            "Fixture " FX_NAME, "1.0.0", "widgethost tests", WH_SDK_VERSION, (refusal_text), 1, 0, fx_kinds, \
            FX_WARM_UP,                                                                                      \
    }

/* The usual entry function: negotiates with WH_NEGOTIATE, refusing hosts
 * that do not offer ABI 1. */
#define FX_STANDARD_ENTRY()                                                                              \
    static const wh_plugin_descriptor fx_descriptor =                                                    \
        FX_DESCRIPTOR_INIT(sizeof(wh_plugin_descriptor), WH_PLUGIN_MAGIC, WH_ABI_VERSION, NULL);         \
    static const wh_plugin_descriptor fx_refusal = FX_DESCRIPTOR_INIT(                                    \
        sizeof(wh_plugin_descriptor), WH_PLUGIN_MAGIC, 0, "fixture " FX_NAME " speaks widgethost ABI 1 only"); \
    WH_EXPORT const wh_plugin_descriptor *widgethost_provider_entry(const wh_host_offer *offer) {        \
        return WH_NEGOTIATE(offer) == WH_ABI_VERSION ? &fx_descriptor : &fx_refusal;                     \
    }

/* A whole valid plugin around the three given entry points. */
#define FX_PLUGIN(placeholder_fn, snapshot_fn, timeline_fn) \
    FX_KINDS(placeholder_fn, snapshot_fn, timeline_fn);     \
    FX_STANDARD_ENTRY()

#endif /* WH_FIXTURE_H */
