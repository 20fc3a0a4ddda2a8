//! The raw C ABI: a hand-written mirror of `SDK/include/widgethost/provider.h`
//! (ABI v1, SDK 1.2). Plugins normally use the safe layer (`TimelineProvider`
//! and `export_plugin!`) instead.
//!
//! Every struct is `#[repr(C)]` with the same fields, in the same order, with
//! the same C types, so the layout is identical to the header's on every
//! target. The unit tests at the bottom compare `size_of`/`offset_of` with the
//! numbers frozen in `SDK/src/abi_layout.c` (LP64).
//!
//! Pointers that C allows to be NULL are raw pointers (check before use);
//! function pointers are `Option<...>` so that NULL is representable.

use core::ffi::{c_char, c_void};

/// `WH_ABI_VERSION`: the ABI version this mirror describes.
pub const WH_ABI_VERSION: u32 = 1;
/// `WH_PLUGIN_MAGIC`: "WHPV" read as a little-endian u32.
pub const WH_PLUGIN_MAGIC: u32 = 0x5650_4857;
/// `WH_SDK_VERSION`.
pub const WH_SDK_VERSION: &core::ffi::CStr = c"1.4.0";

// Limits the host enforces on a result (provider.h, SDK 1.2).
/// `WH_MAX_ENTRIES`: most entries in one result.
pub const WH_MAX_ENTRIES: u32 = 400;
/// `WH_MAX_RESULT_BYTES`: most bytes of entry content in one result.
pub const WH_MAX_RESULT_BYTES: usize = 10 * 1024 * 1024;
/// `WH_MIN_ENTRY_SPACING`: entries closer than this (seconds) draw a warning.
pub const WH_MIN_ENTRY_SPACING: f64 = 300.0;

// wh_family
pub const WH_FAMILY_SYSTEM_SMALL: u32 = 1 << 0;
pub const WH_FAMILY_SYSTEM_MEDIUM: u32 = 1 << 1;
pub const WH_FAMILY_SYSTEM_LARGE: u32 = 1 << 2;
pub const WH_FAMILY_SYSTEM_EXTRA_LARGE: u32 = 1 << 3;
pub const WH_FAMILY_ACCESSORY_CIRCULAR: u32 = 1 << 4;
pub const WH_FAMILY_ACCESSORY_RECTANGULAR: u32 = 1 << 5;
pub const WH_FAMILY_ACCESSORY_INLINE: u32 = 1 << 6;
pub const WH_FAMILY_ALL_V1: u32 = 0x7F;

// wh_parameter_type
pub const WH_PARAM_STRING: u32 = 1;
pub const WH_PARAM_INTEGER: u32 = 2;
pub const WH_PARAM_NUMBER: u32 = 3;
pub const WH_PARAM_BOOLEAN: u32 = 4;

// wh_kind_flags
pub const WH_KIND_NEEDS_NETWORK: u32 = 1 << 0;
pub const WH_KIND_DETERMINISTIC: u32 = 1 << 1;
pub const WH_KIND_FRESH_PROCESS: u32 = 1 << 2;
/// SDK 1.3: the kind accepts push updates.
pub const WH_KIND_PUSH: u32 = 1 << 3;

// wh_parameter_flags (SDK 1.3)
/// The parameter may be left out when it has no default.
pub const WH_PARAMETER_OPTIONAL: u32 = 1 << 0;

// wh_reload_policy
pub const WH_POLICY_AT_END: u32 = 1;
pub const WH_POLICY_AFTER: u32 = 2;
pub const WH_POLICY_NEVER: u32 = 3;

// wh_status
pub const WH_STATUS_OK: i32 = 0;
pub const WH_STATUS_ERROR: i32 = 1;

// wh_entry_flags
pub const WH_ENTRY_HAS_RELEVANCE: u32 = 1 << 0;

// wh_entry_point
pub const WH_ENTRY_PLACEHOLDER: u32 = 1;
pub const WH_ENTRY_SNAPSHOT: u32 = 2;
pub const WH_ENTRY_TIMELINE: u32 = 3;

/// `wh_host_offer`: owned by the host, valid during the entry call only.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct WhHostOffer {
    pub struct_size: u32,
    pub abi_min: u32,
    pub abi_max: u32,
    pub reserved: u32,
    pub host_version: *const c_char,
}

/// `wh_entry`: one timeline entry, owned by the plugin.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct WhEntry {
    pub struct_size: u32,
    pub flags: u32,
    pub date: f64,
    pub relevance_score: f64,
    pub relevance_duration: f64,
    pub content_json: *const c_char,
    pub content_length: usize,
}

/// `wh_result`: the answer handed to the completion, owned by the plugin.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct WhResult {
    pub struct_size: u32,
    pub status: i32,
    pub entry_count: u32,
    pub entry_size: u32,
    pub entries: *const WhEntry,
    pub policy: u32,
    pub reserved: u32,
    pub policy_date: f64,
    pub error_code: i32,
    pub reserved2: u32,
    pub error_message: *const c_char,
}

/// `wh_complete_fn`.
pub type WhCompleteFn = unsafe extern "C" fn(completion_context: *mut c_void, result: *const WhResult);

/// `wh_context`: owned by the host, valid until the completion is called.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct WhContext {
    pub struct_size: u32,
    pub abi_version: u32,
    pub entry_point: u32,
    pub family: u32,
    pub is_preview: u32,
    pub reserved: u32,
    pub kind: *const c_char,
    pub display_width: f64,
    pub display_height: f64,
    pub now: f64,
    pub timeout: f64,
    pub configuration_json: *const c_char,
    pub locale: *const c_char,
    pub data_directory: *const c_char,
    pub kind_context: *mut c_void,
    /// (SDK 1.4) The kind's push token, or NULL; present only when
    /// `struct_size` covers it ([`WH_CONTEXT_SIZE_V1_0`] is an older host's size).
    pub push_token: *const c_char,
}

/// `WH_CONTEXT_SIZE_V1_0`: sizeof(wh_context) in SDK 1.0-1.3, before `push_token`.
pub const WH_CONTEXT_SIZE_V1_0: usize = 96;

/// `wh_entry_fn`.
pub type WhEntryFn =
    unsafe extern "C" fn(context: *const WhContext, complete: Option<WhCompleteFn>, completion_context: *mut c_void);

/// `wh_parameter`: owned by the plugin, constant while loaded.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct WhParameter {
    pub struct_size: u32,
    pub type_: u32,
    pub name: *const c_char,
    pub default_json: *const c_char,
    pub description: *const c_char,
    // Appended in SDK 1.3 (a host reads them only when struct_size covers them).
    pub title: *const c_char,
    pub choice_count: u32,
    pub flags: u32,
    pub choices: *const *const c_char,
    pub choice_titles: *const *const c_char,
}

/// `WH_PARAMETER_SIZE_V1_0`: sizeof(wh_parameter) in SDK 1.0-1.2.
pub const WH_PARAMETER_SIZE_V1_0: usize = 32;

/// `wh_kind`: owned by the plugin, constant while loaded.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct WhKind {
    pub struct_size: u32,
    pub flags: u32,
    pub id: *const c_char,
    pub display_name: *const c_char,
    pub description: *const c_char,
    pub families: u32,
    pub parameter_count: u32,
    pub parameter_size: u32,
    pub reserved: u32,
    pub parameters: *const WhParameter,
    pub placeholder: Option<WhEntryFn>,
    pub snapshot: Option<WhEntryFn>,
    pub timeline: Option<WhEntryFn>,
    pub context: *mut c_void,
}

/// `wh_plugin_descriptor`: owned by the plugin, constant while loaded.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct WhPluginDescriptor {
    pub struct_size: u32,
    pub magic: u32,
    pub abi_version: u32,
    pub kind_size: u32,
    pub entry_size: u32,
    pub result_size: u32,
    pub id: *const c_char,
    pub name: *const c_char,
    pub version: *const c_char,
    pub vendor: *const c_char,
    pub sdk_version: *const c_char,
    pub refusal: *const c_char,
    pub kind_count: u32,
    pub reserved: u32,
    pub kinds: *const WhKind,
    /// Appended in SDK 1.1 (still ABI v1): the optional warm-up.
    pub warm_up: Option<WhWarmUpFn>,
}

/// `wh_warm_up_context`: owned by the host, valid during the warm-up only.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct WhWarmUpContext {
    pub struct_size: u32,
    pub abi_version: u32,
    pub now: f64,
    pub locale: *const c_char,
    pub data_directory: *const c_char,
}

/// `wh_warm_up_fn`.
pub type WhWarmUpFn = unsafe extern "C" fn(context: *const WhWarmUpContext);

/// `wh_entry_function`: the type of `widgethost_provider_entry`.
pub type WhEntryFunction = unsafe extern "C" fn(offer: *const WhHostOffer) -> *const WhPluginDescriptor;

/// `WH_NEGOTIATE(offer)`: `WH_ABI_VERSION` if the host's range contains it,
/// 0 (refusal) otherwise. Reads only the fields the offer's `struct_size`
/// covers.
///
/// # Safety
/// `offer` must be NULL or point to a readable `wh_host_offer` prefix of
/// `struct_size` bytes.
pub unsafe fn negotiate(offer: *const WhHostOffer) -> u32 {
    if offer.is_null() {
        return 0;
    }
    let offer = &*offer;
    if (offer.struct_size as usize) < core::mem::offset_of!(WhHostOffer, reserved) {
        return 0;
    }
    if offer.abi_min <= WH_ABI_VERSION && WH_ABI_VERSION <= offer.abi_max {
        WH_ABI_VERSION
    } else {
        0
    }
}

#[cfg(all(test, target_pointer_width = "64"))]
mod layout_tests {
    //! The LP64 numbers of SDK/src/abi_layout.c (and of the table in
    //! docs/abi.md, generated from the header), checked against this mirror.
    use super::*;
    use core::mem::{align_of, offset_of, size_of};

    #[test]
    fn host_offer() {
        assert_eq!(size_of::<WhHostOffer>(), 24);
        assert_eq!(align_of::<WhHostOffer>(), 8);
        assert_eq!(offset_of!(WhHostOffer, struct_size), 0);
        assert_eq!(offset_of!(WhHostOffer, abi_min), 4);
        assert_eq!(offset_of!(WhHostOffer, abi_max), 8);
        assert_eq!(offset_of!(WhHostOffer, reserved), 12);
        assert_eq!(offset_of!(WhHostOffer, host_version), 16);
    }

    #[test]
    fn entry() {
        assert_eq!(size_of::<WhEntry>(), 48);
        assert_eq!(offset_of!(WhEntry, struct_size), 0);
        assert_eq!(offset_of!(WhEntry, flags), 4);
        assert_eq!(offset_of!(WhEntry, date), 8);
        assert_eq!(offset_of!(WhEntry, relevance_score), 16);
        assert_eq!(offset_of!(WhEntry, relevance_duration), 24);
        assert_eq!(offset_of!(WhEntry, content_json), 32);
        assert_eq!(offset_of!(WhEntry, content_length), 40);
    }

    #[test]
    fn result() {
        assert_eq!(size_of::<WhResult>(), 56);
        assert_eq!(offset_of!(WhResult, struct_size), 0);
        assert_eq!(offset_of!(WhResult, status), 4);
        assert_eq!(offset_of!(WhResult, entry_count), 8);
        assert_eq!(offset_of!(WhResult, entry_size), 12);
        assert_eq!(offset_of!(WhResult, entries), 16);
        assert_eq!(offset_of!(WhResult, policy), 24);
        assert_eq!(offset_of!(WhResult, reserved), 28);
        assert_eq!(offset_of!(WhResult, policy_date), 32);
        assert_eq!(offset_of!(WhResult, error_code), 40);
        assert_eq!(offset_of!(WhResult, reserved2), 44);
        assert_eq!(offset_of!(WhResult, error_message), 48);
    }

    #[test]
    fn context() {
        assert_eq!(size_of::<WhContext>(), 104);
        assert_eq!(offset_of!(WhContext, push_token), WH_CONTEXT_SIZE_V1_0);
        assert_eq!(offset_of!(WhContext, struct_size), 0);
        assert_eq!(offset_of!(WhContext, abi_version), 4);
        assert_eq!(offset_of!(WhContext, entry_point), 8);
        assert_eq!(offset_of!(WhContext, family), 12);
        assert_eq!(offset_of!(WhContext, is_preview), 16);
        assert_eq!(offset_of!(WhContext, reserved), 20);
        assert_eq!(offset_of!(WhContext, kind), 24);
        assert_eq!(offset_of!(WhContext, display_width), 32);
        assert_eq!(offset_of!(WhContext, display_height), 40);
        assert_eq!(offset_of!(WhContext, now), 48);
        assert_eq!(offset_of!(WhContext, timeout), 56);
        assert_eq!(offset_of!(WhContext, configuration_json), 64);
        assert_eq!(offset_of!(WhContext, locale), 72);
        assert_eq!(offset_of!(WhContext, data_directory), 80);
        assert_eq!(offset_of!(WhContext, kind_context), 88);
    }

    #[test]
    fn parameter() {
        assert_eq!(size_of::<WhParameter>(), 64);
        assert_eq!(offset_of!(WhParameter, title), WH_PARAMETER_SIZE_V1_0);
        assert_eq!(offset_of!(WhParameter, choice_count), 40);
        assert_eq!(offset_of!(WhParameter, flags), 44);
        assert_eq!(offset_of!(WhParameter, choices), 48);
        assert_eq!(offset_of!(WhParameter, choice_titles), 56);
        assert_eq!(offset_of!(WhParameter, struct_size), 0);
        assert_eq!(offset_of!(WhParameter, type_), 4);
        assert_eq!(offset_of!(WhParameter, name), 8);
        assert_eq!(offset_of!(WhParameter, default_json), 16);
        assert_eq!(offset_of!(WhParameter, description), 24);
    }

    #[test]
    fn kind() {
        assert_eq!(size_of::<WhKind>(), 88);
        assert_eq!(offset_of!(WhKind, struct_size), 0);
        assert_eq!(offset_of!(WhKind, flags), 4);
        assert_eq!(offset_of!(WhKind, id), 8);
        assert_eq!(offset_of!(WhKind, display_name), 16);
        assert_eq!(offset_of!(WhKind, description), 24);
        assert_eq!(offset_of!(WhKind, families), 32);
        assert_eq!(offset_of!(WhKind, parameter_count), 36);
        assert_eq!(offset_of!(WhKind, parameter_size), 40);
        assert_eq!(offset_of!(WhKind, reserved), 44);
        assert_eq!(offset_of!(WhKind, parameters), 48);
        assert_eq!(offset_of!(WhKind, placeholder), 56);
        assert_eq!(offset_of!(WhKind, snapshot), 64);
        assert_eq!(offset_of!(WhKind, timeline), 72);
        assert_eq!(offset_of!(WhKind, context), 80);
        // Option<fn> is a nullable function pointer, like C's.
        assert_eq!(size_of::<Option<WhEntryFn>>(), 8);
    }

    #[test]
    fn warm_up_context() {
        assert_eq!(size_of::<WhWarmUpContext>(), 32);
        assert_eq!(offset_of!(WhWarmUpContext, struct_size), 0);
        assert_eq!(offset_of!(WhWarmUpContext, abi_version), 4);
        assert_eq!(offset_of!(WhWarmUpContext, now), 8);
        assert_eq!(offset_of!(WhWarmUpContext, locale), 16);
        assert_eq!(offset_of!(WhWarmUpContext, data_directory), 24);
    }

    #[test]
    fn plugin_descriptor() {
        assert_eq!(size_of::<WhPluginDescriptor>(), 96);
        assert_eq!(offset_of!(WhPluginDescriptor, struct_size), 0);
        assert_eq!(offset_of!(WhPluginDescriptor, magic), 4);
        assert_eq!(offset_of!(WhPluginDescriptor, abi_version), 8);
        assert_eq!(offset_of!(WhPluginDescriptor, kind_size), 12);
        assert_eq!(offset_of!(WhPluginDescriptor, entry_size), 16);
        assert_eq!(offset_of!(WhPluginDescriptor, result_size), 20);
        assert_eq!(offset_of!(WhPluginDescriptor, id), 24);
        assert_eq!(offset_of!(WhPluginDescriptor, name), 32);
        assert_eq!(offset_of!(WhPluginDescriptor, version), 40);
        assert_eq!(offset_of!(WhPluginDescriptor, vendor), 48);
        assert_eq!(offset_of!(WhPluginDescriptor, sdk_version), 56);
        assert_eq!(offset_of!(WhPluginDescriptor, refusal), 64);
        assert_eq!(offset_of!(WhPluginDescriptor, kind_count), 72);
        assert_eq!(offset_of!(WhPluginDescriptor, reserved), 76);
        assert_eq!(offset_of!(WhPluginDescriptor, kinds), 80);
        assert_eq!(offset_of!(WhPluginDescriptor, warm_up), 88);
    }

    #[test]
    fn magic_spells_whpv() {
        assert_eq!(WH_PLUGIN_MAGIC.to_le_bytes(), *b"WHPV");
    }
}
