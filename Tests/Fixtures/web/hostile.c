/*
 * hostile.c — a plugin whose entries AND template try to run script, fetch
 * from the network and escape the widget's box, for the web side's tests
 * (Tests/WidgetHostWebTests). Everything must render inert: no script runs
 * (document.title stays), nothing reaches the canary server whose URL the
 * `canary` parameter carries.
 *
 * Built with -DVARIANT=N for the templates extension's load checks:
 *   0  the hostile plugin (valid templates)
 *   1  a template names a kind the descriptor does not declare
 *   2  a template's source is not UTF-8
 *   3  two templates draw the same kind and family
 *   4  a template is for a family its kind does not declare
 *   5  the list's struct_size is too small
 *   6  every family, no templates (the generic card draws the entries)
 */
#include <widgethost/ext/templates.h>
#include <widgethost/provider.h>

#include <stdio.h>
#include <string.h>

#ifndef VARIANT
#define VARIANT 0
#endif

/* Finds the string member "canary" in the configuration. */
static void canary(const wh_context *ctx, char *out, size_t size) {
    const char *p = ctx->configuration_json ? strstr(ctx->configuration_json, "\"canary\"") : NULL;
    size_t n = 0;
    snprintf(out, size, "http://127.0.0.1:9");
    if (!p || !(p = strchr(p + 8, '"'))) return;
    p++;
    while (*p && *p != '"' && n + 1 < size) out[n++] = *p++;
    out[n] = '\0';
}

static void hostile_entries(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    char url[200];
    char content[2][1400];
    wh_entry entries[2];
    canary(ctx, url, sizeof url);
    for (int i = 0; i < 2; i++) {
        snprintf(content[i], sizeof content[i],
                 "{\"title\":\"<script>document.title='pwned-entry';fetch('%s/entry-script')</script>"
                 "<img src=x onerror=\\\"document.title='pwned-entry-img'\\\">\","
                 "\"link\":\"javascript:top.document.title='pwned-link'\","
                 "\"attr\":\"x\\\" onmouseover=\\\"document.title='pwned-attr'\\\" autofocus onfocus=\\\"document.title='pwned-focus'\","
                 "\"style\":\"red;background:url(%s/entry-style)\\\\;\","
                 "\"canary\":\"%s\",\"step\":%d}",
                 url, url, url, i + 1);
        entries[i] = wh_make_entry(ctx->now + i * 600.0, content[i]);
    }
    wh_complete_entries(complete, completion_context, entries, ctx->entry_point == WH_ENTRY_TIMELINE ? 2u : 1u,
                        WH_POLICY_NEVER, 0);
}

#if VARIANT == 6
#define FAMILIES WH_FAMILY_ALL_V1
#else
#define FAMILIES (WH_FAMILY_SYSTEM_SMALL | WH_FAMILY_SYSTEM_MEDIUM)
#endif

static const wh_parameter parameters[] = {
    WH_PARAMETER(WH_PARAM_STRING, "canary", "\"http://127.0.0.1:9\"", "A URL nothing may fetch"),
};

static const wh_kind kinds[] = {
    WH_KIND_WITH_PARAMETERS("test.hostile", "Hostile", "Entries and a template that try everything.",
                            FAMILIES, parameters, hostile_entries,
                            hostile_entries, hostile_entries),
};

WH_DEFINE_PROVIDER("test.hostile", "Hostile", "1.0.0", "widgethost tests", kinds, NULL)

/* The template writes markup that would run script or fetch if it were
 * trusted: a script element, event handlers, javascript: URLs, raw
 * (triple-mustache) entry values, CSS that loads URLs (also through a CSS
 * escape), a meta refresh, a nested frame and a form. */
#define HOSTILE_TEMPLATE                                                                            \
    "<script>top.document.title='pwned-template';fetch('{{canary}}/template-script')</script>"      \
    "<div id=\"t\">{{title}} | {{{title}}}</div>"                                                    \
    "<a href=\"{{link}}\">entry link</a> <a href=\"javascript:top.document.title='pwned-href'\">x</a>" \
    "<img src=\"{{canary}}/template-img\" onerror=\"top.document.title='pwned-onerror'\">"              \
    "<input value=\"{{attr}}\"><div style=\"color:{{style}}\">styled</div>"                            \
    "<svg onload=\"top.document.title='pwned-svg'\"></svg>"                                         \
    "<style>@import url({{canary}}/template-import);"                                                \
    "div{background:\\75 rl({{canary}}/template-escape)}</style>"                                    \
    "<link rel=\"stylesheet\" href=\"{{canary}}/template-link\">"                                    \
    "<iframe src=\"javascript:top.document.title='pwned-iframe'\"></iframe>"                         \
    "<meta http-equiv=\"refresh\" content=\"0;url={{canary}}/template-refresh\">"                    \
    "<form action=\"{{canary}}/template-form\"><button autofocus>go</button></form>"                  \
    "<object data=\"{{canary}}/template-object\"></object>"

#if VARIANT == 0
static const wh_template templates[] = {
    WH_TEMPLATE("test.hostile", 0, HOSTILE_TEMPLATE),
};
WH_DEFINE_TEMPLATES(templates)
#elif VARIANT == 1
static const wh_template templates[] = {WH_TEMPLATE("test.nope", 0, "<p>{{title}}</p>")};
WH_DEFINE_TEMPLATES(templates)
#elif VARIANT == 2
static const wh_template templates[] = {WH_TEMPLATE("test.hostile", 0, "<p>\xff\xfe</p>")};
WH_DEFINE_TEMPLATES(templates)
#elif VARIANT == 3
static const wh_template templates[] = {
    WH_TEMPLATE("test.hostile", WH_FAMILY_SYSTEM_SMALL, "<p>a</p>"),
    WH_TEMPLATE("test.hostile", WH_FAMILY_SYSTEM_SMALL | WH_FAMILY_SYSTEM_MEDIUM, "<p>b</p>"),
};
WH_DEFINE_TEMPLATES(templates)
#elif VARIANT == 4
static const wh_template templates[] = {WH_TEMPLATE("test.hostile", WH_FAMILY_ACCESSORY_INLINE, "<p>a</p>")};
WH_DEFINE_TEMPLATES(templates)
#elif VARIANT == 5
static const wh_template small_templates[] = {WH_TEMPLATE("test.hostile", 0, "<p>a</p>")};
WH_EXPORT const wh_template_list *widgethost_provider_templates(void) {
    static const wh_template_list list = {8, sizeof(wh_template), 1, small_templates};
    return &list;
}
#endif
