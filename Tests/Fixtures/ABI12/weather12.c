/*
 * weather12.c — a plugin built against the SDK 1.2 header (a verbatim copy
 * in include/widgethost/provider.h), before wh_parameter grew title, flags
 * and choices in SDK 1.3: its parameters are 32 bytes. The host must load
 * it unchanged, with the parameters' 1.3 fields read as zero (no title, no
 * choices, required when there is no default). Built by the test suite:
 *   cc -shared -fPIC -I Tests/Fixtures/ABI12/include -o weather12.so weather12.c
 */
#include <stdio.h>
#include <widgethost/provider.h>

static void placeholder(const wh_context *context, wh_complete_fn complete, void *completion_context) {
    wh_complete_entry(complete, completion_context, context->now, "{\"city\":\"Paris\",\"degrees\":12}");
}

static void timeline(const wh_context *context, wh_complete_fn complete, void *completion_context) {
    char content[512];
    snprintf(content, sizeof content, "{\"configuration\":%s}", context->configuration_json);
    wh_entry entry = wh_make_entry(context->now, content);
    wh_complete_entries(complete, completion_context, &entry, 1u, WH_POLICY_AFTER, context->now + 3600.0);
}

static const wh_parameter parameters[] = {
    WH_PARAMETER(WH_PARAM_STRING, "city", "\"Paris\"", "The city"),
    WH_PARAMETER(WH_PARAM_INTEGER, "days", "3", NULL),
};

static const wh_kind kinds[] = {
    WH_KIND_WITH_PARAMETERS("org.example.weather12", "Weather 1.2", "Built with SDK 1.2.", WH_FAMILY_SYSTEM_SMALL,
                            parameters, placeholder, placeholder, timeline),
};

WH_DEFINE_PROVIDER("org.example.weather12", "Weather 1.2", "1.2.0", "Example", kinds, NULL)
