/*
 * ext_templates_layout.c — compile-time checks that freeze the layout of the
 * templates extension (<widgethost/ext/templates.h>), as abi_layout.c does
 * for the core ABI. Records only ever grow by appended fields.
 */
#include <stddef.h>
#include <widgethost/ext/templates.h>

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && (defined(__LP64__) || defined(_LP64))
_Static_assert(sizeof(wh_template) == 24, "sizeof(wh_template) changed: templates extension break");
_Static_assert(offsetof(wh_template, families) == 4, "offsetof(wh_template, families) changed");
_Static_assert(offsetof(wh_template, kind_id) == 8, "offsetof(wh_template, kind_id) changed");
_Static_assert(offsetof(wh_template, source) == 16, "offsetof(wh_template, source) changed");
_Static_assert(sizeof(wh_template_list) == 24, "sizeof(wh_template_list) changed");
_Static_assert(offsetof(wh_template_list, template_count) == 8, "offsetof(template_count) changed");
_Static_assert(offsetof(wh_template_list, templates) == 16, "offsetof(templates) changed");
#endif
