/*
 * templates.c — the templates extension (<widgethost/ext/templates.h>):
 * after a successful load, the optional `widgethost_provider_templates`
 * symbol is looked up, its list checked record by record, and the
 * templates appended to LOADED as a tagged section.
 *
 * Section layout (after LOADED's fixed fields):
 *   u32 tag WH_LOADED_SECTION_TEMPLATES, u32 byte length of the section,
 *   then the section: u32 count, then per template: u32 kind index, u32 family bits, str source.
 * A plugin without the symbol sends no section at all, so its LOADED is
 * byte for byte what it was before the extension.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"
#include <widgethost/ext/templates.h>

/* "WHTP" read as a little-endian integer. */
#define WH_LOADED_SECTION_TEMPLATES 0x50544857u

/* The smallest records this extension's first version defines. */
#define WH_V1_TEMPLATE_LIST_SIZE sizeof(wh_template_list)
#define WH_V1_TEMPLATE_SIZE sizeof(wh_template)

/* Whether `s[0..n)` is well-formed UTF-8 (no overlongs, no surrogates, at
 * most U+10FFFF). */
static int valid_utf8(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        size_t extra;
        uint32_t min, cp;
        if (c < 0x80) { i++; continue; }
        if ((c & 0xE0) == 0xC0) { extra = 1; min = 0x80; cp = c & 0x1F; }
        else if ((c & 0xF0) == 0xE0) { extra = 2; min = 0x800; cp = c & 0x0F; }
        else if ((c & 0xF8) == 0xF0) { extra = 3; min = 0x10000; cp = c & 0x07; }
        else return 0;
        if (n - i <= extra) return 0;
        for (size_t k = 1; k <= extra; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        i += extra + 1;
    }
    return 1;
}

static void invalid(const char *detail, uint32_t index, const char *member, const char *expected,
                    const char *found) __attribute__((noreturn));
static void invalid(const char *detail, uint32_t index, const char *member, const char *expected,
                    const char *found) {
    char field[96];
    if (member[0])
        snprintf(field, sizeof field, "widgethost_provider_templates()->templates[%u].%s", index, member);
    else
        snprintf(field, sizeof field, "widgethost_provider_templates()");
    fail_load(WH_LOAD_INVALID_DESCRIPTOR, detail, field, expected, found);
}

/* The index of the loaded kind with this id, or -1. */
static int64_t kind_index(const char *id) {
    for (uint32_t i = 0; i < g_kind_count; i++)
        if (g_kinds[i].kind.id && strcmp(g_kinds[i].kind.id, id) == 0) return i;
    return -1;
}

void templates_append(buffer *out, void *handle) {
    dlerror();
    void *symbol = dlsym(handle, WH_TEMPLATES_SYMBOL);
    if (!symbol) return; /* no templates: LOADED is unchanged */
    wh_templates_function function;
    memcpy(&function, &symbol, sizeof function);
    const wh_template_list *raw = function();
    if (!raw) return;
    if (raw->struct_size < WH_V1_TEMPLATE_LIST_SIZE)
        invalid("the template list is smaller than the extension defines", 0, "",
                fmt("struct_size at least %zu", WH_V1_TEMPLATE_LIST_SIZE), fmt("%u", raw->struct_size));
    wh_template_list list;
    copy_struct(&list, sizeof list, raw, raw->struct_size);
    if (list.template_count > WH_MAX_TEMPLATES ||
        (list.template_count > 0 && (list.templates == NULL || list.template_size < WH_V1_TEMPLATE_SIZE)))
        invalid("the template array is invalid", 0, "",
                fmt("at most %u templates, each at least %zu bytes, pointer set", WH_MAX_TEMPLATES,
                    WH_V1_TEMPLATE_SIZE),
                fmt("%u templates of %u bytes at %p", list.template_count, list.template_size,
                    (const void *)list.templates));

    int64_t *kinds = calloc(list.template_count + 1, sizeof *kinds);
    uint32_t *families = calloc(list.template_count + 1, sizeof *families);
    if (!kinds || !families) _exit(5);
    buffer section = {0};
    buf_u32(&section, list.template_count);
    size_t total = 0;
    const uint8_t *base = (const uint8_t *)list.templates;
    for (uint32_t i = 0; i < list.template_count; i++) {
        const wh_template *record = (const wh_template *)(const void *)(base + (size_t)i * list.template_size);
        if (record->struct_size < WH_V1_TEMPLATE_SIZE)
            invalid("a template record is smaller than the extension defines", i, "struct_size",
                    fmt("at least %zu", WH_V1_TEMPLATE_SIZE), fmt("%u", record->struct_size));
        wh_template t;
        copy_struct(&t, sizeof t, record, record->struct_size);
        if (!t.kind_id) invalid("a template names no kind", i, "kind_id", "a kind id", "NULL");
        kinds[i] = kind_index(t.kind_id);
        if (kinds[i] < 0)
            invalid("a template names a kind the descriptor does not declare", i, "kind_id",
                    "the id of one of the descriptor's kinds", fmt("\"%.200s\"", t.kind_id));
        uint32_t declared = g_kinds[kinds[i]].kind.families;
        if (t.families & ~declared)
            invalid("a template is for a family its kind does not declare", i, "families",
                    fmt("0 or a subset of 0x%02x", declared), fmt("0x%02x", t.families));
        families[i] = t.families ? t.families : 0;
        for (uint32_t j = 0; j < i; j++) {
            int both_all = families[j] == 0 && families[i] == 0;
            if (kinds[j] == kinds[i] && (both_all || (families[j] & families[i])))
                invalid("two templates draw the same kind and family", i, "families",
                        fmt("no overlap with templates[%u] (0x%02x)", j, families[j]), fmt("0x%02x", families[i]));
        }
        if (!t.source) invalid("a template has no source", i, "source", "Mustache source", "NULL");
        size_t length = strnlen(t.source, WH_MAX_TEMPLATE_BYTES + 1);
        if (length > WH_MAX_TEMPLATE_BYTES)
            invalid("a template's source is too long", i, "source",
                    fmt("at most %u bytes", WH_MAX_TEMPLATE_BYTES), "longer");
        total += length;
        if (total > WH_MAX_TEMPLATE_TOTAL_BYTES)
            invalid("the templates' sources are too long together", i, "source",
                    fmt("at most %u bytes in all", WH_MAX_TEMPLATE_TOTAL_BYTES), fmt("%zu so far", total));
        if (!valid_utf8((const unsigned char *)t.source, length))
            invalid("a template's source is not UTF-8", i, "source", "well-formed UTF-8", "invalid bytes");
        buf_u32(&section, (uint32_t)kinds[i]);
        buf_u32(&section, t.families);
        buf_strn(&section, t.source, length);
    }
    free(kinds);
    free(families);
    if (section.failed) _exit(5);
    buf_u32(out, WH_LOADED_SECTION_TEMPLATES);
    buf_strn(out, (const char *)section.data, section.length); /* u32 length, then the bytes */
    free(section.data);
}
