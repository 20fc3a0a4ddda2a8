#!/usr/bin/env bash
# header_check.sh — compile <widgethost/provider.h> as C99, C11, C++11 and
# C++17 under -Wall -Wextra -pedantic -Werror (the structs filled by hand and
# with the SDK 1.2 helper macros), plus the layout asserts in
# SDK/src/abi_layout.c. Prints one line per check; exits non-zero if any
# check fails.
#
# Usage: SDK/tests/header_check.sh        (CC / CXX override the compilers;
#                                           clang/clang++ are also tried when
#                                           installed)
set -u

sdk="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/wh-header-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT

warn=(-Wall -Wextra -pedantic -Werror)
failures=0
checks=0

# A translation unit that includes the header twice (include guard), uses
# every type and macro, and defines the entry function the way a plugin does.
cat >"$work/use.inc" <<'SRC'
#include <widgethost/provider.h>
#include <widgethost/provider.h>

/* The structs filled by hand, positionally (every field, as -Wextra wants). */
static void check_entry(const wh_context *context, wh_complete_fn complete, void *completion_context) {
    wh_entry entry;
    wh_result result;
    memset(&entry, 0, sizeof entry);
    memset(&result, 0, sizeof result);
    entry.struct_size = (uint32_t)sizeof entry;
    entry.date = context->now;
    entry.content_json = "{}";
    result.struct_size = (uint32_t)sizeof result;
    result.status = WH_STATUS_OK;
    result.entry_count = 1;
    result.entry_size = (uint32_t)sizeof entry;
    result.entries = &entry;
    result.policy = WH_POLICY_AT_END;
    complete(completion_context, &result);
}

static void check_warm_up(const wh_warm_up_context *context) {
    (void)context->now;
}

static const wh_parameter check_parameters[1] = {
    {(uint32_t)sizeof(wh_parameter), WH_PARAM_STRING, "city", "\"Paris\"", "City name"},
};

static const wh_kind check_kinds[1] = {
    {(uint32_t)sizeof(wh_kind), WH_KIND_NEEDS_NETWORK, "org.example.check", "Check", NULL,
     WH_FAMILY_SYSTEM_SMALL | WH_FAMILY_ACCESSORY_INLINE, 1, (uint32_t)sizeof(wh_parameter), 0,
     check_parameters, check_entry, check_entry, check_entry, NULL},
};

static wh_plugin_descriptor check_descriptor = {
    (uint32_t)sizeof(wh_plugin_descriptor), WH_PLUGIN_MAGIC, WH_ABI_VERSION, (uint32_t)sizeof(wh_kind),
    (uint32_t)sizeof(wh_entry), (uint32_t)sizeof(wh_result), "org.example.check", "Check", "1.0",
    NULL, WH_SDK_VERSION, NULL, 1, 0, check_kinds, check_warm_up,
};

/* The same with the SDK 1.2 helpers. */
static void macro_placeholder(const wh_context *context, wh_complete_fn complete, void *completion_context) {
    wh_complete_entry(complete, completion_context, context->now, "{\"n\":1}");
}

static void macro_timeline(const wh_context *context, wh_complete_fn complete, void *completion_context) {
    wh_entry entries[2];
    if (context->family == WH_FAMILY_ACCESSORY_INLINE) {
        wh_complete_error(complete, completion_context, 7, "no inline");
        return;
    }
    entries[0] = wh_make_entry(context->now, "{\"n\":1}");
    entries[1] = wh_make_relevant_entry(context->now + WH_MIN_ENTRY_SPACING, "{\"n\":2}", 1.0, 0.0);
    wh_complete_entries(complete, completion_context, entries, WH_ARRAY_COUNT(entries), WH_POLICY_AFTER,
                        context->now + WH_TIMEOUT_TIMELINE);
}

static const wh_parameter macro_parameters[] = {
    WH_PARAMETER(WH_PARAM_STRING, "city", "\"Paris\"", "City name"),
    WH_PARAMETER(WH_PARAM_INTEGER, "days", NULL, NULL),
};

static int macro_kind_context;

static const wh_kind macro_kinds[] = {
    WH_KIND("org.example.macro.plain", "Plain", NULL, WH_FAMILY_SYSTEM_SMALL, macro_placeholder, macro_placeholder,
            macro_timeline),
    WH_KIND_WITH_PARAMETERS("org.example.macro.city", "City", "With parameters.", WH_FAMILY_ALL_V1,
                            macro_parameters, macro_placeholder, macro_placeholder, macro_timeline),
    WH_KIND_FULL(WH_KIND_NEEDS_NETWORK, "org.example.macro.full", "Full", "Every field.", WH_FAMILY_SYSTEM_LARGE,
                 macro_parameters, WH_ARRAY_COUNT(macro_parameters), macro_placeholder, macro_placeholder,
                 macro_timeline, &macro_kind_context),
};

static const wh_plugin_descriptor macro_descriptor =
    WH_DESCRIPTOR("org.example.macro", "Macro", "1.0", "Example", macro_kinds, check_warm_up);
static const wh_plugin_descriptor macro_refusal =
    WH_REFUSAL("org.example.macro", "Macro", "1.0", NULL, macro_kinds, "refused");

int wh_check_macros(void);
int wh_check_macros(void) {
    return macro_descriptor.kind_count == 3 && macro_kinds[1].parameter_count == 2 && macro_refusal.abi_version == 0
        && WH_DESCRIPTOR_HAS_WARM_UP(macro_descriptor.struct_size) && WH_MAX_ENTRIES == 400u
        && WH_MAX_RESULT_BYTES == 10u * 1024u * 1024u && WH_LOG_BYTES_PER_STREAM > 0u
        && WH_TIMEOUT_LOAD > WH_TIMEOUT_PLACEHOLDER && WH_TIMEOUT_SNAPSHOT > WH_TIMEOUT_SNAPSHOT_PREVIEW;
}

WH_EXPORT const wh_plugin_descriptor *widgethost_provider_entry(const wh_host_offer *offer) {
    check_descriptor.abi_version = WH_NEGOTIATE(offer);
    return &check_descriptor;
}

int wh_check_families(void);
int wh_check_families(void) {
    wh_entry_function fn = widgethost_provider_entry;
    wh_host_offer offer = {(uint32_t)sizeof(wh_host_offer), WH_ABI_VERSION_MIN, WH_ABI_VERSION, 0, "check"};
    const char *symbol = WH_ENTRY_SYMBOL;
    (void)symbol;
    return fn(&offer)->abi_version == WH_ABI_VERSION && WH_FAMILY_ALL_V1 == 0x7Fu
        && WH_SIZE_SYSTEM_SMALL_W > 0.0;
}
SRC
# A whole plugin in one WH_DEFINE_PROVIDER line (a separate translation
# unit: it defines widgethost_provider_entry itself).
cat >"$work/define.inc" <<'SRC'
#include <widgethost/provider.h>

static void answer(const wh_context *context, wh_complete_fn complete, void *completion_context) {
    wh_complete_entry(complete, completion_context, context->now, "{}");
}

static const wh_kind kinds[] = {
    WH_KIND("org.example.define", "Define", NULL, WH_FAMILY_SYSTEM_SMALL, answer, answer, answer),
};

WH_DEFINE_PROVIDER("org.example.define", "Define", "1.0", NULL, kinds, NULL)
SRC
printf '#include <string.h>\n#include "use.inc"\n' >"$work/use.c"
printf '#include <cstring>\n#include <string.h>\n#include "use.inc"\n' >"$work/use.cpp"
printf '#include "define.inc"\n' >"$work/define.c"
printf '#include "define.inc"\n' >"$work/define.cpp"
# The templates extension (ext/templates.h) and its macros.
cat >"$work/templates.inc" <<'SRC'
#include <widgethost/ext/templates.h>
static const wh_template templates[] = {
    WH_TEMPLATE("org.example.t", 0, "<p>{{title}}</p>"),
    WH_TEMPLATE("org.example.t", WH_FAMILY_ACCESSORY_INLINE, "<span>{{title}}</span>"),
};
WH_DEFINE_TEMPLATES(templates)
SRC
printf '#include "templates.inc"\n' >"$work/templates.c"
printf '#include "templates.inc"\n' >"$work/templates.cpp"

run() { # name, command...
    local name="$1"
    shift
    checks=$((checks + 1))
    if out="$("$@" 2>&1)"; then
        printf 'ok    %s\n' "$name"
    else
        printf 'FAIL  %s\n' "$name"
        printf '%s\n' "$out" | sed 's/^/      /'
        failures=$((failures + 1))
    fi
}

compilers_c=("${CC:-cc}")
compilers_cxx=("${CXX:-c++}")
if [ -z "${CC:-}" ] && command -v clang >/dev/null 2>&1; then compilers_c+=(clang); fi
if [ -z "${CXX:-}" ] && command -v clang++ >/dev/null 2>&1; then compilers_cxx+=(clang++); fi

for c in "${compilers_c[@]}"; do
    for std in c99 c11; do
        run "$c -std=$std provider.h" "$c" -std=$std "${warn[@]}" -I"$sdk/include" -c "$work/use.c" -o "$work/use.o"
        run "$c -std=$std WH_DEFINE_PROVIDER" "$c" -std=$std "${warn[@]}" -I"$sdk/include" -c "$work/define.c" -o "$work/define.o"
        run "$c -std=$std ext/templates.h" "$c" -std=$std "${warn[@]}" -I"$sdk/include" -c "$work/templates.c" -o "$work/templates.o"
    done
    run "$c -std=c11 ext_templates_layout.c" \
        "$c" -std=c11 "${warn[@]}" -I"$sdk/include" -c "$sdk/src/ext_templates_layout.c" -o "$work/ext_layout.o"
    run "$c -std=c11 abi_layout.c (v1 layout asserts)" \
        "$c" -std=c11 "${warn[@]}" -I"$sdk/include" -c "$sdk/src/abi_layout.c" -o "$work/abi_layout.o"
done
for cxx in "${compilers_cxx[@]}"; do
    for std in c++11 c++17; do
        run "$cxx -std=$std provider.h" "$cxx" -std=$std "${warn[@]}" -I"$sdk/include" -c "$work/use.cpp" -o "$work/use.o"
        run "$cxx -std=$std WH_DEFINE_PROVIDER" "$cxx" -std=$std "${warn[@]}" -I"$sdk/include" -c "$work/define.cpp" -o "$work/define.o"
        run "$cxx -std=$std ext/templates.h" "$cxx" -std=$std "${warn[@]}" -I"$sdk/include" -c "$work/templates.cpp" -o "$work/templates.o"
    done
done

if [ "$failures" -ne 0 ]; then
    printf '%d of %d header checks failed\n' "$failures" "$checks"
    exit 1
fi
printf 'all %d header checks passed\n' "$checks"
