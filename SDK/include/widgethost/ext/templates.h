/*
 * widgethost/ext/templates.h — ABI extension: Mustache templates that draw
 * a kind's entries as HTML (the dashboard of `widgethost run --http` and
 * `widgethost preview`).
 *
 * An extension in CLAP's style: optional, found by name, size-prefixed.
 * A plugin that wants templates exports ONE more function,
 * `widgethost_provider_templates`, returning a constant, size-prefixed
 * `wh_template_list`. The runner looks it up with dlsym right after
 * `widgethost_provider_entry` succeeded, checks every record (sizes, counts,
 * lengths, UTF-8, kind ids that exist, families that the kind declares, no
 * two templates for one kind and family) and sends the templates to the
 * host with the plugin's description. A plugin without the symbol loads
 * exactly as before; a list that breaks a rule fails the load with
 * WH_LOAD_INVALID_DESCRIPTOR naming the record and the field.
 *
 * What a template sees (docs/preview.md has the full list): the entry's JSON
 * object's members at the top level (`{{title}}`, `{{#items}}...{{/items}}`),
 * plus `{{_date}}` (ISO 8601), `{{_family}}`, `{{_width}}` and `{{_height}}`.
 * Every `{{value}}` is HTML-escaped; the host renders each widget inside a
 * sandboxed frame with no script and no network, so a template is markup
 * and style only (docs/preview.md, "Security").
 *
 * Ownership: every pointer here is owned by the plugin and must stay valid
 * and unchanged for as long as the plugin is loaded (static storage is the
 * simple way). The host copies what it needs and never writes through them.
 *
 * Example (C):
 *
 *   static const wh_template templates[] = {
 *       WH_TEMPLATE("com.example.moon", 0,
 *                   "<div class=\"moon\">{{phase}}</div>"),
 *       WH_TEMPLATE("com.example.moon", WH_FAMILY_ACCESSORY_INLINE,
 *                   "<span>{{phase}}</span>"),
 *   };
 *   WH_DEFINE_TEMPLATES(templates)
 *
 * This header is C99 and C++ clean under -Wall -Wextra -pedantic -Werror.
 */
#ifndef WIDGETHOST_EXT_TEMPLATES_H
#define WIDGETHOST_EXT_TEMPLATES_H

#include <widgethost/provider.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Name of the optional symbol a plugin exports to ship templates. */
#define WH_TEMPLATES_SYMBOL "widgethost_provider_templates"

/** Limits the runner enforces (a list beyond them fails the load). */
#define WH_MAX_TEMPLATES 1024u
/** Bytes of one template's source, without the NUL. */
#define WH_MAX_TEMPLATE_BYTES (64u * 1024u)
/** Bytes of all templates' sources together. */
#define WH_MAX_TEMPLATE_TOTAL_BYTES (1024u * 1024u)

/** One template: which kind (and families) it draws, and its source. */
typedef struct wh_template {
    /** sizeof(wh_template) as the plugin compiled it. */
    uint32_t struct_size;
    /** wh_family bits this template is for; 0 = every family of the kind.
     *  A template for a family wins over the kind's 0 template. */
    uint32_t families;
    /** The kind's id, as in its wh_kind. Plugin-owned, static. */
    const char *kind_id;
    /** Mustache source (UTF-8, NUL-terminated, at most
     *  WH_MAX_TEMPLATE_BYTES). Plugin-owned, static. */
    const char *source;
} wh_template;

/** The templates a plugin ships. */
typedef struct wh_template_list {
    /** sizeof(wh_template_list) as the plugin compiled it. */
    uint32_t struct_size;
    /** sizeof(wh_template) as the plugin compiled it: the stride of
     *  `templates` (a later SDK may append fields to wh_template). */
    uint32_t template_size;
    /** Number of records in `templates` (at most WH_MAX_TEMPLATES). */
    uint32_t template_count;
    /** The records. Plugin-owned, static. */
    const wh_template *templates;
} wh_template_list;

/** The optional function: called once, after `widgethost_provider_entry`,
 *  from the runner's thread. It must not fail, block or start threads, and
 *  returns a list (or NULL: no templates). */
typedef const wh_template_list *(*wh_templates_function)(void);

/** Declaration of the symbol for plugins written in C or C++. */
WH_EXPORT const wh_template_list *widgethost_provider_templates(void);

/** Initialises one wh_template. */
#define WH_TEMPLATE(kind, family_bits, mustache_source) \
    { (uint32_t)sizeof(wh_template), (uint32_t)(family_bits), (kind), (mustache_source) }

/** Defines `widgethost_provider_templates` returning the static array
 *  `array` of wh_template. */
#define WH_DEFINE_TEMPLATES(array)                                                           \
    WH_EXPORT const wh_template_list *widgethost_provider_templates(void) {                \
        static const wh_template_list list = {(uint32_t)sizeof(wh_template_list),          \
                                              (uint32_t)sizeof(wh_template),               \
                                              (uint32_t)(sizeof(array) / sizeof((array)[0])), \
                                              (array)};                                    \
        return &list;                                                                      \
    }

#ifdef __cplusplus
}
#endif

#endif
