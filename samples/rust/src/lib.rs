//! A widgethost timeline-provider plugin written in Rust, with no crates.
//!
//! One kind, `org.example.rust.tides`: the water height at a harbour, from a
//! one-constituent (M2, 12.42 h) tide model. The timeline has an entry now and
//! one at each of the next four turning points (high and low water), and asks
//! for a new timeline when the last entry is reached (`WH_POLICY_AT_END`).
//! The model is a demo, not a tide table.
//!
//! The C ABI is mirrored by hand in `abi.rs`. The plugin exports exactly one
//! symbol, `widgethost_provider_entry`, returning a static descriptor.
//! Everything is computed from `ctx.now`, never from the system clock.
//!
//! Build: `cargo build --release --offline` -> `target/release/libtides.so`.

pub mod abi;

use abi::*;
use core::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

// ---------------------------------------------------------------------------
// Statics holding raw pointers
// ---------------------------------------------------------------------------

/// A wrapper that lets a static hold raw pointers. Sound here because every
/// pointer in the wrapped values points to immutable `'static` data.
#[repr(transparent)]
pub struct Static<T>(pub T);
// SAFETY: the wrapped descriptors are never mutated and only point to
// immutable statics (C string literals, other `Static`s, functions).
unsafe impl<T> Sync for Static<T> {}

static PARAMETERS: Static<[WhParameter; 1]> = Static([WhParameter {
    struct_size: core::mem::size_of::<WhParameter>() as u32,
    type_: WH_PARAM_STRING,
    name: c"units".as_ptr(),
    default_json: c"\"metric\"".as_ptr(),
    description: c"\"metric\" (metres) or \"imperial\" (feet)".as_ptr(),
}]);

static KINDS: Static<[WhKind; 1]> = Static([WhKind {
    struct_size: core::mem::size_of::<WhKind>() as u32,
    flags: 0,
    id: c"org.example.rust.tides".as_ptr(),
    display_name: c"Tides".as_ptr(),
    description: c"Water height and the next high or low water.".as_ptr(),
    families: WH_FAMILY_SYSTEM_SMALL
        | WH_FAMILY_SYSTEM_MEDIUM
        | WH_FAMILY_ACCESSORY_RECTANGULAR
        | WH_FAMILY_ACCESSORY_INLINE,
    parameter_count: 1,
    parameter_size: core::mem::size_of::<WhParameter>() as u32,
    reserved: 0,
    parameters: &PARAMETERS.0 as *const [WhParameter; 1] as *const WhParameter,
    placeholder: Some(tides_placeholder),
    snapshot: Some(tides_snapshot),
    timeline: Some(tides_timeline),
    context: core::ptr::null_mut(),
}]);

const fn descriptor(abi_version: u32, refusal: *const c_char) -> WhPluginDescriptor {
    WhPluginDescriptor {
        struct_size: core::mem::size_of::<WhPluginDescriptor>() as u32,
        magic: WH_PLUGIN_MAGIC,
        abi_version,
        kind_size: core::mem::size_of::<WhKind>() as u32,
        entry_size: core::mem::size_of::<WhEntry>() as u32,
        result_size: core::mem::size_of::<WhResult>() as u32,
        id: c"org.example.rust.tides".as_ptr(),
        name: c"Tides (Rust sample)".as_ptr(),
        version: c"1.0.0".as_ptr(),
        vendor: c"Example Org".as_ptr(),
        sdk_version: WH_SDK_VERSION.as_ptr(),
        refusal,
        kind_count: 1,
        reserved: 0,
        kinds: &KINDS.0 as *const [WhKind; 1] as *const WhKind,
    }
}

static DESCRIPTOR: Static<WhPluginDescriptor> = Static(descriptor(WH_ABI_VERSION, core::ptr::null()));
static REFUSAL: Static<WhPluginDescriptor> =
    Static(descriptor(0, c"the tides sample speaks widgethost ABI 1 only".as_ptr()));

/// The one symbol widgethost looks up.
///
/// # Safety
/// Called by the host with NULL or a valid `wh_host_offer`.
#[no_mangle]
pub unsafe extern "C" fn widgethost_provider_entry(offer: *const WhHostOffer) -> *const WhPluginDescriptor {
    if negotiate(offer) == WH_ABI_VERSION {
        &DESCRIPTOR.0
    } else {
        &REFUSAL.0
    }
}

// ---------------------------------------------------------------------------
// The tide model
// ---------------------------------------------------------------------------

/// Period of the principal lunar semi-diurnal constituent, M2, in seconds.
const M2_PERIOD: f64 = 12.420_601_2 * 3600.0;
/// A reference high water (2023-11-14 22:13:20 UTC, arbitrary for the demo).
const REFERENCE_HIGH: f64 = 1_700_000_000.0;
const MEAN_LEVEL_M: f64 = 4.0;
const AMPLITUDE_M: f64 = 2.5;

fn height_at(t: f64) -> f64 {
    MEAN_LEVEL_M + AMPLITUDE_M * (2.0 * core::f64::consts::PI * (t - REFERENCE_HIGH) / M2_PERIOD).cos()
}

/// Index of the first turning point strictly after `t`: even = high water,
/// odd = low water; turning point `k` is at REFERENCE_HIGH + k * M2_PERIOD/2.
fn next_turning_index(t: f64) -> i64 {
    let half = M2_PERIOD / 2.0;
    // The epsilon puts a date that *is* a turning point before the next one.
    ((t - REFERENCE_HIGH) / half + 1e-9).floor() as i64 + 1
}

fn turning_date(k: i64) -> f64 {
    REFERENCE_HIGH + k as f64 * (M2_PERIOD / 2.0)
}

fn family_name(family: u32) -> &'static str {
    match family {
        WH_FAMILY_SYSTEM_SMALL => "systemSmall",
        WH_FAMILY_SYSTEM_MEDIUM => "systemMedium",
        WH_FAMILY_SYSTEM_LARGE => "systemLarge",
        WH_FAMILY_SYSTEM_EXTRA_LARGE => "systemExtraLarge",
        WH_FAMILY_ACCESSORY_CIRCULAR => "accessoryCircular",
        WH_FAMILY_ACCESSORY_RECTANGULAR => "accessoryRectangular",
        WH_FAMILY_ACCESSORY_INLINE => "accessoryInline",
        _ => "unknown",
    }
}

/// The entry content at `date`: a JSON object (Rust's float formatting does
/// not depend on the C locale).
fn content_at(date: f64, imperial: bool, family: u32) -> String {
    let k = next_turning_index(date);
    let next_high = k % 2 == 0;
    let (factor, unit) = if imperial { (3.280_84, "ft") } else { (1.0, "m") };
    format!(
        "{{\"station\":\"Example Harbour\",\"height\":{:.2},\"unit\":\"{}\",\"trend\":\"{}\",\
         \"next\":\"{}\",\"nextDate\":{:.0},\"nextHeight\":{:.2},\"family\":\"{}\"}}",
        height_at(date) * factor,
        unit,
        if next_high { "rising" } else { "falling" },
        if next_high { "high" } else { "low" },
        turning_date(k),
        height_at(turning_date(k)) * factor,
        family_name(family),
    )
}

// ---------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------

/// Reads the `units` parameter from the configuration JSON (a flat object the
/// host fills with defaults); minimal on purpose: no JSON crate.
unsafe fn wants_imperial(ctx: &WhContext) -> bool {
    if ctx.configuration_json.is_null() {
        return false;
    }
    let json = CStr::from_ptr(ctx.configuration_json).to_string_lossy();
    match json.find("\"units\"") {
        Some(at) => json[at + 7..]
            .trim_start_matches([' ', '\t', '\r', '\n', ':'])
            .starts_with("\"imperial\""),
        None => false,
    }
}

/// Hands `contents` (entries at `dates`) to the host. The host copies the
/// result during the call, so the `String`s may be dropped right after.
unsafe fn complete_ok(
    complete: WhCompleteFn,
    completion_context: *mut c_void,
    items: &[(f64, String)],
    policy: u32,
) {
    let entries: Vec<WhEntry> = items
        .iter()
        .map(|(date, content)| WhEntry {
            struct_size: core::mem::size_of::<WhEntry>() as u32,
            flags: 0,
            date: *date,
            relevance_score: 0.0,
            relevance_duration: 0.0,
            // Not NUL-terminated: content_length gives the length.
            content_json: content.as_ptr() as *const c_char,
            content_length: content.len(),
        })
        .collect();
    let result = WhResult {
        struct_size: core::mem::size_of::<WhResult>() as u32,
        status: WH_STATUS_OK,
        entry_count: entries.len() as u32,
        entry_size: core::mem::size_of::<WhEntry>() as u32,
        entries: entries.as_ptr(),
        policy,
        reserved: 0,
        policy_date: 0.0,
        error_code: 0,
        reserved2: 0,
        error_message: core::ptr::null(),
    };
    complete(completion_context, &result);
}

unsafe fn complete_error(complete: WhCompleteFn, completion_context: *mut c_void, message: &CStr) {
    let result = WhResult {
        struct_size: core::mem::size_of::<WhResult>() as u32,
        status: WH_STATUS_ERROR,
        entry_count: 0,
        entry_size: core::mem::size_of::<WhEntry>() as u32,
        entries: core::ptr::null(),
        policy: 0,
        reserved: 0,
        policy_date: 0.0,
        error_code: 1,
        reserved2: 0,
        error_message: message.as_ptr(),
    };
    complete(completion_context, &result);
}

/// Runs `body`, turning a panic into a WH_STATUS_ERROR result: a panic must
/// never unwind into the host's C frames.
unsafe fn guarded(
    ctx: *const WhContext,
    complete: Option<WhCompleteFn>,
    completion_context: *mut c_void,
    body: impl FnOnce(&WhContext) -> (Vec<(f64, String)>, u32),
) {
    let Some(complete) = complete else { return };
    if ctx.is_null() {
        complete_error(complete, completion_context, c"no context");
        return;
    }
    match catch_unwind(AssertUnwindSafe(|| body(&*ctx))) {
        Ok((items, policy)) => complete_ok(complete, completion_context, &items, policy),
        Err(_) => complete_error(complete, completion_context, c"the tides provider panicked"),
    }
}

unsafe extern "C" fn tides_placeholder(
    ctx: *const WhContext,
    complete: Option<WhCompleteFn>,
    completion_context: *mut c_void,
) {
    guarded(ctx, complete, completion_context, |ctx| {
        let sample = "{\"station\":\"Example Harbour\",\"height\":4.00,\"unit\":\"m\",\"trend\":\"rising\",\
                      \"next\":\"high\",\"nextDate\":0,\"nextHeight\":6.50,\"family\":\"placeholder\"}";
        (vec![(ctx.now, sample.to_string())], WH_POLICY_NEVER)
    })
}

unsafe extern "C" fn tides_snapshot(
    ctx: *const WhContext,
    complete: Option<WhCompleteFn>,
    completion_context: *mut c_void,
) {
    guarded(ctx, complete, completion_context, |ctx| {
        let imperial = wants_imperial(ctx);
        (vec![(ctx.now, content_at(ctx.now, imperial, ctx.family))], WH_POLICY_NEVER)
    })
}

unsafe extern "C" fn tides_timeline(
    ctx: *const WhContext,
    complete: Option<WhCompleteFn>,
    completion_context: *mut c_void,
) {
    guarded(ctx, complete, completion_context, |ctx| {
        let imperial = wants_imperial(ctx);
        let mut items = vec![(ctx.now, content_at(ctx.now, imperial, ctx.family))];
        let mut k = next_turning_index(ctx.now);
        // Skip a turning point closer than five minutes to now (the host
        // warns about entries packed closer than that).
        if turning_date(k) - ctx.now < 300.0 {
            k += 1;
        }
        for i in 0..4 {
            let date = turning_date(k + i);
            items.push((date, content_at(date, imperial, ctx.family)));
        }
        (items, WH_POLICY_AT_END)
    })
}

// ---------------------------------------------------------------------------
// Tests: call the plugin through its C ABI, as the host does.
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default, Debug)]
    struct Captured {
        calls: u32,
        status: i32,
        policy: u32,
        entries: Vec<(f64, String)>,
        message: Option<String>,
    }

    unsafe extern "C" fn capture(completion_context: *mut c_void, result: *const WhResult) {
        let captured = &*(completion_context as *const Mutex<Captured>);
        let mut c = captured.lock().unwrap();
        c.calls += 1;
        let r = &*result;
        c.status = r.status;
        c.policy = r.policy;
        if !r.error_message.is_null() {
            c.message = Some(CStr::from_ptr(r.error_message).to_string_lossy().into_owned());
        }
        for i in 0..r.entry_count as usize {
            let e = &*((r.entries as *const u8).add(i * r.entry_size as usize) as *const WhEntry);
            let bytes = core::slice::from_raw_parts(e.content_json as *const u8, e.content_length);
            c.entries.push((e.date, String::from_utf8(bytes.to_vec()).unwrap()));
        }
    }

    fn offer(min: u32, max: u32) -> WhHostOffer {
        WhHostOffer {
            struct_size: core::mem::size_of::<WhHostOffer>() as u32,
            abi_min: min,
            abi_max: max,
            reserved: 0,
            host_version: c"test".as_ptr(),
        }
    }

    fn call(entry_point: u32, config: &CStr) -> Captured {
        let offer = offer(1, 1);
        let descriptor = unsafe { &*widgethost_provider_entry(&offer) };
        let kind = unsafe { &*descriptor.kinds };
        let ctx = WhContext {
            struct_size: core::mem::size_of::<WhContext>() as u32,
            abi_version: 1,
            entry_point,
            family: WH_FAMILY_SYSTEM_SMALL,
            is_preview: 0,
            reserved: 0,
            kind: kind.id,
            display_width: 170.0,
            display_height: 170.0,
            now: 1_700_003_600.0,
            timeout: 5.0,
            configuration_json: config.as_ptr(),
            locale: c"en-US".as_ptr(),
            data_directory: c"/tmp".as_ptr(),
            kind_context: kind.context,
        };
        let f = match entry_point {
            WH_ENTRY_PLACEHOLDER => kind.placeholder,
            WH_ENTRY_SNAPSHOT => kind.snapshot,
            _ => kind.timeline,
        }
        .unwrap();
        let captured = Mutex::new(Captured::default());
        unsafe { f(&ctx, Some(capture), &captured as *const _ as *mut c_void) };
        captured.into_inner().unwrap()
    }

    #[test]
    fn negotiates_and_describes() {
        let d = unsafe { &*widgethost_provider_entry(&offer(1, 3)) };
        assert_eq!(d.magic, WH_PLUGIN_MAGIC);
        assert_eq!(d.abi_version, 1);
        assert_eq!(d.struct_size, 88);
        assert_eq!((d.kind_size, d.entry_size, d.result_size), (88, 48, 56));
        assert_eq!(d.kind_count, 1);
        let kind = unsafe { &*d.kinds };
        assert_eq!(unsafe { CStr::from_ptr(kind.id) }, c"org.example.rust.tides");
        assert!(kind.placeholder.is_some() && kind.snapshot.is_some() && kind.timeline.is_some());
        assert_eq!(kind.parameter_count, 1);
        let p = unsafe { &*kind.parameters };
        assert_eq!(unsafe { CStr::from_ptr(p.name) }, c"units");
    }

    #[test]
    fn refuses_hosts_without_v1() {
        let d = unsafe { &*widgethost_provider_entry(&offer(2, 3)) };
        assert_eq!(d.abi_version, 0);
        assert!(!d.refusal.is_null());
        let d = unsafe { &*widgethost_provider_entry(core::ptr::null()) };
        assert_eq!(d.abi_version, 0);
    }

    #[test]
    fn placeholder_and_snapshot_answer_one_entry() {
        for ep in [WH_ENTRY_PLACEHOLDER, WH_ENTRY_SNAPSHOT] {
            let c = call(ep, c"{}");
            assert_eq!(c.calls, 1);
            assert_eq!(c.status, WH_STATUS_OK);
            assert_eq!(c.entries.len(), 1);
            assert!(c.entries[0].1.starts_with('{') && c.entries[0].1.ends_with('}'));
        }
    }

    #[test]
    fn timeline_is_sorted_spaced_and_at_end() {
        let c = call(WH_ENTRY_TIMELINE, c"{\"units\":\"metric\"}");
        assert_eq!(c.calls, 1);
        assert_eq!(c.status, WH_STATUS_OK);
        assert_eq!(c.policy, WH_POLICY_AT_END);
        assert_eq!(c.entries.len(), 5);
        assert_eq!(c.entries[0].0, 1_700_003_600.0);
        for pair in c.entries.windows(2) {
            assert!(pair[1].0 - pair[0].0 >= 300.0, "{pair:?}");
        }
        // Turning points alternate high/low water at the model's extremes.
        assert!(c.entries[1].1.contains("\"height\":1.50") || c.entries[1].1.contains("\"height\":6.50"));
        assert!(c.entries.iter().all(|(d, s)| d.is_finite() && s.contains("\"unit\":\"m\"")));
    }

    #[test]
    fn imperial_units() {
        let c = call(WH_ENTRY_SNAPSHOT, c"{\"units\": \"imperial\"}");
        assert!(c.entries[0].1.contains("\"unit\":\"ft\""), "{:?}", c.entries);
    }
}
