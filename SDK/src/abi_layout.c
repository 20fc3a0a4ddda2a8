/*
 * abi_layout.c — compile-time checks that freeze the layout of ABI v1.
 *
 * Every struct in <widgethost/provider.h> is part of a stable binary
 * interface: plugins built today must keep loading in every host whose ABI
 * range contains 1. These assertions make any accidental change (a field
 * inserted, reordered, retyped or removed) a build error instead of a
 * silent incompatibility. Growing a struct is done by appending fields and
 * adding a new ABI version; see docs/abi.md.
 *
 * The numbers below are for LP64 targets (x86_64, aarch64, riscv64, ... on
 * Linux and macOS). On other data models only the size-independent checks
 * run.
 *
 * This file is the only source of the SwiftPM C target `WidgetHostABI`,
 * which also publishes the header to Swift.
 */
#include <widgethost/provider.h>

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define WH_LAYOUT_ASSERT(cond, msg) _Static_assert(cond, msg)
#else
/* Pre-C11 fallback: a negative array size is a compile error. */
#define WH_LAYOUT_CAT_(a, b) a##b
#define WH_LAYOUT_CAT(a, b) WH_LAYOUT_CAT_(a, b)
#define WH_LAYOUT_ASSERT(cond, msg) \
    typedef char WH_LAYOUT_CAT(wh_layout_assert_, __LINE__)[(cond) ? 1 : -1]
#endif

#define WH_SIZE(type, n) WH_LAYOUT_ASSERT(sizeof(type) == (n), "sizeof(" #type ") changed: ABI v1 break")
#define WH_OFFSET(type, field, n) \
    WH_LAYOUT_ASSERT(offsetof(type, field) == (n), "offsetof(" #type ", " #field ") changed: ABI v1 break")

/* ---- Constants (any data model) ------------------------------------- */

WH_LAYOUT_ASSERT(WH_ABI_VERSION == 1u, "this file freezes ABI version 1");
WH_LAYOUT_ASSERT(WH_ABI_VERSION_MIN == 1u, "oldest describable ABI is 1");
WH_LAYOUT_ASSERT(WH_PLUGIN_MAGIC == (0x57u | (0x48u << 8) | (0x50u << 16) | ((uint32_t)0x56u << 24)),
                 "WH_PLUGIN_MAGIC must be \"WHPV\" little-endian");
WH_LAYOUT_ASSERT(WH_FAMILY_ALL_V1 ==
                     (uint32_t)(WH_FAMILY_SYSTEM_SMALL | WH_FAMILY_SYSTEM_MEDIUM | WH_FAMILY_SYSTEM_LARGE |
                                WH_FAMILY_SYSTEM_EXTRA_LARGE | WH_FAMILY_ACCESSORY_CIRCULAR |
                                WH_FAMILY_ACCESSORY_RECTANGULAR | WH_FAMILY_ACCESSORY_INLINE),
                 "WH_FAMILY_ALL_V1 must cover exactly the v1 families");
WH_LAYOUT_ASSERT(WH_FAMILY_SYSTEM_SMALL == 1 && WH_FAMILY_SYSTEM_MEDIUM == 2 && WH_FAMILY_SYSTEM_LARGE == 4 &&
                     WH_FAMILY_SYSTEM_EXTRA_LARGE == 8 && WH_FAMILY_ACCESSORY_CIRCULAR == 16 &&
                     WH_FAMILY_ACCESSORY_RECTANGULAR == 32 && WH_FAMILY_ACCESSORY_INLINE == 64,
                 "family bits are frozen");
WH_LAYOUT_ASSERT(WH_PARAM_STRING == 1 && WH_PARAM_INTEGER == 2 && WH_PARAM_NUMBER == 3 && WH_PARAM_BOOLEAN == 4,
                 "parameter types are frozen");
WH_LAYOUT_ASSERT(WH_PARAMETER_OPTIONAL == 1, "parameter flags are frozen");
WH_LAYOUT_ASSERT(WH_KIND_NEEDS_NETWORK == 1 && WH_KIND_DETERMINISTIC == 2 && WH_KIND_FRESH_PROCESS == 4 &&
                     WH_KIND_PUSH == 8,
                 "kind flags are frozen");
WH_LAYOUT_ASSERT(WH_POLICY_AT_END == 1 && WH_POLICY_AFTER == 2 && WH_POLICY_NEVER == 3,
                 "reload policies are frozen");
WH_LAYOUT_ASSERT(WH_STATUS_OK == 0 && WH_STATUS_ERROR == 1, "statuses are frozen");
WH_LAYOUT_ASSERT(WH_ENTRY_HAS_RELEVANCE == 1, "entry flags are frozen");
WH_LAYOUT_ASSERT(WH_ENTRY_PLACEHOLDER == 1 && WH_ENTRY_SNAPSHOT == 2 && WH_ENTRY_TIMELINE == 3,
                 "entry point ids are frozen");

/* struct_size is the first field of every struct, in every data model. */
WH_OFFSET(wh_host_offer, struct_size, 0);
WH_OFFSET(wh_entry, struct_size, 0);
WH_OFFSET(wh_result, struct_size, 0);
WH_OFFSET(wh_context, struct_size, 0);
WH_OFFSET(wh_parameter, struct_size, 0);
WH_OFFSET(wh_kind, struct_size, 0);
WH_OFFSET(wh_plugin_descriptor, struct_size, 0);

/* ---- Layout on LP64 ------------------------------------------------- */

#if defined(__LP64__) || defined(_LP64)

WH_LAYOUT_ASSERT(sizeof(void *) == 8 && sizeof(size_t) == 8 && sizeof(double) == 8, "LP64 expected");
WH_LAYOUT_ASSERT(sizeof(wh_entry_fn) == 8 && sizeof(wh_complete_fn) == 8, "function pointers are 8 bytes");

/* wh_host_offer: 24 bytes */
WH_SIZE(wh_host_offer, 24);
WH_OFFSET(wh_host_offer, abi_min, 4);
WH_OFFSET(wh_host_offer, abi_max, 8);
WH_OFFSET(wh_host_offer, reserved, 12);
WH_OFFSET(wh_host_offer, host_version, 16);

/* wh_entry: 48 bytes */
WH_SIZE(wh_entry, 48);
WH_OFFSET(wh_entry, flags, 4);
WH_OFFSET(wh_entry, date, 8);
WH_OFFSET(wh_entry, relevance_score, 16);
WH_OFFSET(wh_entry, relevance_duration, 24);
WH_OFFSET(wh_entry, content_json, 32);
WH_OFFSET(wh_entry, content_length, 40);

/* wh_result: 56 bytes */
WH_SIZE(wh_result, 56);
WH_OFFSET(wh_result, status, 4);
WH_OFFSET(wh_result, entry_count, 8);
WH_OFFSET(wh_result, entry_size, 12);
WH_OFFSET(wh_result, entries, 16);
WH_OFFSET(wh_result, policy, 24);
WH_OFFSET(wh_result, reserved, 28);
WH_OFFSET(wh_result, policy_date, 32);
WH_OFFSET(wh_result, error_code, 40);
WH_OFFSET(wh_result, reserved2, 44);
WH_OFFSET(wh_result, error_message, 48);

/* wh_context: 96 bytes in SDK 1.0-1.3, 104 since SDK 1.4 (appended:
 * push_token). */
WH_SIZE(wh_context, 104);
WH_LAYOUT_ASSERT(WH_CONTEXT_SIZE_V1_0 == 96, "the SDK 1.0-1.3 wh_context is 96 bytes");
WH_OFFSET(wh_context, abi_version, 4);
WH_OFFSET(wh_context, entry_point, 8);
WH_OFFSET(wh_context, family, 12);
WH_OFFSET(wh_context, is_preview, 16);
WH_OFFSET(wh_context, reserved, 20);
WH_OFFSET(wh_context, kind, 24);
WH_OFFSET(wh_context, display_width, 32);
WH_OFFSET(wh_context, display_height, 40);
WH_OFFSET(wh_context, now, 48);
WH_OFFSET(wh_context, timeout, 56);
WH_OFFSET(wh_context, configuration_json, 64);
WH_OFFSET(wh_context, locale, 72);
WH_OFFSET(wh_context, data_directory, 80);
WH_OFFSET(wh_context, kind_context, 88);
WH_OFFSET(wh_context, push_token, 96);

/* wh_parameter: 32 bytes in SDK 1.0-1.2, 64 since SDK 1.3 (appended:
 * title, choice_count, flags, choices, choice_titles). */
WH_SIZE(wh_parameter, 64);
WH_LAYOUT_ASSERT(WH_PARAMETER_SIZE_V1_0 == 32, "the SDK 1.0-1.2 wh_parameter is 32 bytes");
WH_OFFSET(wh_parameter, title, 32);
WH_OFFSET(wh_parameter, choice_count, 40);
WH_OFFSET(wh_parameter, flags, 44);
WH_OFFSET(wh_parameter, choices, 48);
WH_OFFSET(wh_parameter, choice_titles, 56);
WH_OFFSET(wh_parameter, type, 4);
WH_OFFSET(wh_parameter, name, 8);
WH_OFFSET(wh_parameter, default_json, 16);
WH_OFFSET(wh_parameter, description, 24);

/* wh_kind: 88 bytes */
WH_SIZE(wh_kind, 88);
WH_OFFSET(wh_kind, flags, 4);
WH_OFFSET(wh_kind, id, 8);
WH_OFFSET(wh_kind, display_name, 16);
WH_OFFSET(wh_kind, description, 24);
WH_OFFSET(wh_kind, families, 32);
WH_OFFSET(wh_kind, parameter_count, 36);
WH_OFFSET(wh_kind, parameter_size, 40);
WH_OFFSET(wh_kind, reserved, 44);
WH_OFFSET(wh_kind, parameters, 48);
WH_OFFSET(wh_kind, placeholder, 56);
WH_OFFSET(wh_kind, snapshot, 64);
WH_OFFSET(wh_kind, timeline, 72);
WH_OFFSET(wh_kind, context, 80);

/* wh_warm_up_context: 32 bytes */
WH_SIZE(wh_warm_up_context, 32);
WH_OFFSET(wh_warm_up_context, abi_version, 4);
WH_OFFSET(wh_warm_up_context, now, 8);
WH_OFFSET(wh_warm_up_context, locale, 16);
WH_OFFSET(wh_warm_up_context, data_directory, 24);

/* wh_plugin_descriptor: 96 bytes since SDK 1.1 (warm_up appended); the
 * 88 bytes of SDK 1.0 are the smallest a host accepts for ABI v1. */
WH_SIZE(wh_plugin_descriptor, 96);
WH_LAYOUT_ASSERT(WH_DESCRIPTOR_SIZE_V1_0 == 88, "WH_DESCRIPTOR_SIZE_V1_0 must stay 88: ABI v1 break");
WH_OFFSET(wh_plugin_descriptor, magic, 4);
WH_OFFSET(wh_plugin_descriptor, abi_version, 8);
WH_OFFSET(wh_plugin_descriptor, kind_size, 12);
WH_OFFSET(wh_plugin_descriptor, entry_size, 16);
WH_OFFSET(wh_plugin_descriptor, result_size, 20);
WH_OFFSET(wh_plugin_descriptor, id, 24);
WH_OFFSET(wh_plugin_descriptor, name, 32);
WH_OFFSET(wh_plugin_descriptor, version, 40);
WH_OFFSET(wh_plugin_descriptor, vendor, 48);
WH_OFFSET(wh_plugin_descriptor, sdk_version, 56);
WH_OFFSET(wh_plugin_descriptor, refusal, 64);
WH_OFFSET(wh_plugin_descriptor, kind_count, 72);
WH_OFFSET(wh_plugin_descriptor, reserved, 76);
WH_OFFSET(wh_plugin_descriptor, kinds, 80);
WH_OFFSET(wh_plugin_descriptor, warm_up, 88);

#endif /* LP64 */

/* ---- One real symbol, so the translation unit is never empty -------- */

/** The ABI version of the header the host was built with (WH_ABI_VERSION).
 *  Lets host code written in Swift read the macro's value as a function. */
uint32_t wh_abi_header_version(void);

uint32_t wh_abi_header_version(void) { return WH_ABI_VERSION; }
