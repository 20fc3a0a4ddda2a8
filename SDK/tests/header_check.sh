#!/usr/bin/env bash
# header_check.sh — compile <widgethost/provider.h> as C99, C11, C++11 and
# C++17 under -Wall -Wextra -pedantic -Werror, plus the layout asserts in
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
    NULL, WH_SDK_VERSION, NULL, 1, 0, check_kinds,
};

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
printf '#include <string.h>\n#include "use.inc"\n' >"$work/use.c"
printf '#include <cstring>\n#include <string.h>\n#include "use.inc"\n' >"$work/use.cpp"

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
    done
    run "$c -std=c11 abi_layout.c (v1 layout asserts)" \
        "$c" -std=c11 "${warn[@]}" -I"$sdk/include" -c "$sdk/src/abi_layout.c" -o "$work/abi_layout.o"
done
for cxx in "${compilers_cxx[@]}"; do
    for std in c++11 c++17; do
        run "$cxx -std=$std provider.h" "$cxx" -std=$std "${warn[@]}" -I"$sdk/include" -c "$work/use.cpp" -o "$work/use.o"
    done
done

if [ "$failures" -ne 0 ]; then
    printf '%d of %d header checks failed\n' "$failures" "$checks"
    exit 1
fi
printf 'all %d header checks passed\n' "$checks"
