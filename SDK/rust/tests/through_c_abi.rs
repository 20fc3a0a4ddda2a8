//! A plugin written with the crate, called through its exported C entry
//! function the way the host's runner does.

use core::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use widgethost::abi::*;
use widgethost::{
    json, Choice, Context, Entry, Families, Kind, Parameter, Plugin, ProviderError, ReloadPolicy, Timeline,
    TimelineProvider, WarmUpContext,
};

struct Counter;

impl TimelineProvider for Counter {
    fn placeholder(&self, context: &Context) -> Entry {
        Entry::new(context.now, r#"{"count":0}"#)
    }
    fn snapshot(&self, context: &Context) -> Result<Entry, ProviderError> {
        if let Some(token) = &context.push_token {
            return Ok(Entry::new(context.now, format!(r#"{{"push":{}}}"#, json::quote(token))));
        }
        let city = context.string("city").unwrap_or_default();
        Ok(Entry::new(
            context.now,
            format!(
                r#"{{"city":{},"family":"{}"}}"#,
                json::quote(&city),
                context.family.name()
            ),
        ))
    }
    fn timeline(&self, context: &Context) -> Result<Timeline, ProviderError> {
        let count = context.number("count").unwrap_or(1.0) as usize;
        if count == 0 {
            return Err(ProviderError::new(42, "count must be at least 1"));
        }
        if count > 1000 {
            panic!("too many: {count}");
        }
        let entries = (0..count)
            .map(|i| {
                Entry::new(context.now + i as f64 * 600.0, format!(r#"{{"i":{i}}}"#)).with_relevance(i as f64, 0.0)
            })
            .collect();
        Ok(Timeline::new(entries, ReloadPolicy::After(context.now + 3600.0)))
    }
}

static WARM_UPS: AtomicU32 = AtomicU32::new(0);

fn warm_up(_: &WarmUpContext) {
    WARM_UPS.fetch_add(1, Ordering::SeqCst);
}

static UNITS: [Choice; 2] = [Choice::titled("metric", "Metres"), Choice::new("imperial")];

static PARAMETERS: [Parameter; 4] = [
    Parameter::string("city").default_json("\"Paris\"").description("City"),
    Parameter::integer("count").default_json("3"),
    Parameter::string("units")
        .default_json("\"metric\"")
        .title("Units")
        .choices(&UNITS),
    Parameter::string("note").optional(),
];

static PLUGIN: Plugin = Plugin {
    id: "org.example.rust.test",
    name: "Crate test",
    version: "2.0.0",
    vendor: Some("Example Org"),
    kinds: &[
        Kind::new(
            "org.example.rust.counter",
            "Counter",
            Families::SYSTEM_SMALL.with(Families::ACCESSORY_INLINE),
            &Counter,
        )
        .description("Counts.")
        .parameters(&PARAMETERS)
        .needs_network(),
        Kind::new("org.example.rust.plain", "Plain", Families::ALL, &Counter),
        Kind::new("org.example.rust.pushed", "Pushed", Families::SYSTEM_SMALL, &Counter)
            .deterministic()
            .fresh_process()
            .push(),
    ],
    warm_up: Some(warm_up),
};

widgethost::export_plugin!(PLUGIN);

fn offer(min: u32, max: u32) -> WhHostOffer {
    WhHostOffer {
        struct_size: core::mem::size_of::<WhHostOffer>() as u32,
        abi_min: min,
        abi_max: max,
        reserved: 0,
        host_version: c"test".as_ptr(),
    }
}

#[derive(Default, Debug)]
struct Captured {
    calls: u32,
    status: i32,
    policy: u32,
    policy_date: f64,
    code: i32,
    message: String,
    entries: Vec<(f64, String, u32, f64)>,
}

unsafe extern "C" fn capture(completion_context: *mut c_void, result: *const WhResult) {
    let captured = &*(completion_context as *const Mutex<Captured>);
    let mut c = captured.lock().unwrap();
    let r = &*result;
    c.calls += 1;
    c.status = r.status;
    c.policy = r.policy;
    c.policy_date = r.policy_date;
    c.code = r.error_code;
    if !r.error_message.is_null() {
        c.message = CStr::from_ptr(r.error_message).to_string_lossy().into_owned();
    }
    for i in 0..r.entry_count as usize {
        let e = &*((r.entries as *const u8).add(i * r.entry_size as usize) as *const WhEntry);
        let bytes = core::slice::from_raw_parts(e.content_json as *const u8, e.content_length);
        c.entries.push((
            e.date,
            String::from_utf8(bytes.to_vec()).unwrap(),
            e.flags,
            e.relevance_score,
        ));
    }
}

fn call(kind_index: usize, entry_point: u32, family: u32, config: &CStr) -> Captured {
    call_from_host(kind_index, entry_point, family, config, None, core::mem::size_of::<WhContext>())
}

/// A call from a host whose `wh_context` is `size` bytes (96: an SDK 1.0-1.3
/// host, without `push_token`), passing `push_token`.
fn call_from_host(
    kind_index: usize,
    entry_point: u32,
    family: u32,
    config: &CStr,
    push_token: Option<&CStr>,
    size: usize,
) -> Captured {
    let descriptor = unsafe { &*widgethost_provider_entry(&offer(1, 1)) };
    let kind = unsafe { &*descriptor.kinds.add(kind_index) };
    let context = WhContext {
        struct_size: size as u32,
        abi_version: 1,
        entry_point,
        family,
        is_preview: 0,
        reserved: 0,
        kind: kind.id,
        display_width: 170.0,
        display_height: 170.0,
        now: 1_800_000_000.0,
        timeout: 5.0,
        configuration_json: config.as_ptr(),
        locale: c"en-US".as_ptr(),
        data_directory: c"/tmp".as_ptr(),
        kind_context: kind.context,
        push_token: push_token.map_or(core::ptr::null(), |t| t.as_ptr()),
    };
    let function = match entry_point {
        WH_ENTRY_PLACEHOLDER => kind.placeholder,
        WH_ENTRY_SNAPSHOT => kind.snapshot,
        _ => kind.timeline,
    }
    .unwrap();
    let captured = Mutex::new(Captured::default());
    unsafe { function(&context, Some(capture), &captured as *const _ as *mut c_void) };
    captured.into_inner().unwrap()
}

#[test]
fn describes_the_plugin() {
    let d = unsafe { &*widgethost_provider_entry(&offer(1, 3)) };
    assert_eq!(d.magic, WH_PLUGIN_MAGIC);
    assert_eq!(d.abi_version, 1);
    assert_eq!(
        (d.struct_size, d.kind_size, d.entry_size, d.result_size),
        (96, 88, 48, 56)
    );
    assert_eq!(unsafe { CStr::from_ptr(d.id) }, c"org.example.rust.test");
    assert_eq!(unsafe { CStr::from_ptr(d.version) }, c"2.0.0");
    assert_eq!(unsafe { CStr::from_ptr(d.sdk_version) }, WH_SDK_VERSION);
    assert!(d.refusal.is_null());
    assert_eq!(d.kind_count, 3);
    let counter = unsafe { &*d.kinds };
    assert_eq!(unsafe { CStr::from_ptr(counter.id) }, c"org.example.rust.counter");
    assert_eq!(counter.flags, WH_KIND_NEEDS_NETWORK);
    assert_eq!(counter.families, WH_FAMILY_SYSTEM_SMALL | WH_FAMILY_ACCESSORY_INLINE);
    assert_eq!(counter.parameter_count, 4);
    let count = unsafe { &*counter.parameters.add(1) };
    assert_eq!(unsafe { CStr::from_ptr(count.name) }, c"count");
    assert_eq!(count.type_, WH_PARAM_INTEGER);
    assert!(count.description.is_null() && count.title.is_null() && count.choices.is_null());
    assert_eq!((count.choice_count, count.flags), (0, 0));
    // SDK 1.3: a titled parameter with choices (two parallel arrays), and an
    // optional one.
    assert_eq!(counter.parameter_size as usize, core::mem::size_of::<WhParameter>());
    let units = unsafe { &*counter.parameters.add(2) };
    assert_eq!(unsafe { CStr::from_ptr(units.title) }, c"Units");
    assert_eq!(units.choice_count, 2);
    let values = unsafe { core::slice::from_raw_parts(units.choices, 2) };
    let titles = unsafe { core::slice::from_raw_parts(units.choice_titles, 2) };
    assert_eq!(unsafe { CStr::from_ptr(values[0]) }, c"metric");
    assert_eq!(unsafe { CStr::from_ptr(values[1]) }, c"imperial");
    assert_eq!(unsafe { CStr::from_ptr(titles[0]) }, c"Metres");
    assert!(titles[1].is_null());
    let note = unsafe { &*counter.parameters.add(3) };
    assert_eq!(note.flags, WH_PARAMETER_OPTIONAL);
    assert!(note.default_json.is_null());
    let plain = unsafe { &*d.kinds.add(1) };
    assert_eq!(plain.families, WH_FAMILY_ALL_V1);
    assert!(plain.parameters.is_null() && plain.parameter_count == 0 && plain.description.is_null());
    assert_eq!(plain.flags, 0);
    let pushed = unsafe { &*d.kinds.add(2) };
    assert_eq!(
        pushed.flags,
        WH_KIND_DETERMINISTIC | WH_KIND_FRESH_PROCESS | WH_KIND_PUSH
    );
    // The same descriptor on every call.
    assert!(core::ptr::eq(d, unsafe { widgethost_provider_entry(&offer(1, 1)) }));
}

struct Unused;
impl TimelineProvider for Unused {
    fn placeholder(&self, context: &Context) -> Entry {
        Entry::new(context.now, "{}")
    }
    fn snapshot(&self, context: &Context) -> Result<Entry, ProviderError> {
        Ok(self.placeholder(context))
    }
    fn timeline(&self, context: &Context) -> Result<Timeline, ProviderError> {
        Ok(Timeline::new(vec![self.placeholder(context)], ReloadPolicy::Never))
    }
}

static BAD_CHOICES: [Choice; 1] = [Choice::new("3")];
static BAD_PARAMETERS: [Parameter; 1] = [Parameter::integer("level").choices(&BAD_CHOICES)];
static BAD_PLUGIN: Plugin = Plugin {
    id: "org.example.rust.bad",
    name: "Bad",
    version: "1.0.0",
    vendor: None,
    kinds: &[Kind::new("org.example.rust.bad", "Bad", Families::ALL, &Unused).parameters(&BAD_PARAMETERS)],
    warm_up: None,
};

#[test]
fn refuses_choices_on_a_parameter_that_is_not_a_string() {
    static CELL: std::sync::OnceLock<widgethost::Exported> = std::sync::OnceLock::new();
    let d = unsafe { &*widgethost::export_descriptor(&offer(1, 1), &BAD_PLUGIN, &CELL) };
    assert_eq!(d.abi_version, 0);
    let reason = unsafe { CStr::from_ptr(d.refusal) }.to_string_lossy();
    assert!(reason.contains("parameter `level`") && reason.contains("Parameter::string"), "{reason}");
}

#[test]
fn refuses_a_host_without_v1() {
    for refused in [unsafe { &*widgethost_provider_entry(&offer(2, 3)) }, unsafe {
        &*widgethost_provider_entry(core::ptr::null())
    }] {
        assert_eq!(refused.abi_version, 0);
        let reason = unsafe { CStr::from_ptr(refused.refusal) }.to_string_lossy();
        assert!(reason.contains("ABI version 1"), "{reason}");
    }
}

#[test]
fn placeholder_and_snapshot() {
    let p = call(0, WH_ENTRY_PLACEHOLDER, WH_FAMILY_SYSTEM_SMALL, c"{}");
    assert_eq!((p.calls, p.status, p.policy), (1, WH_STATUS_OK, WH_POLICY_NEVER));
    assert_eq!(p.entries, vec![(1_800_000_000.0, r#"{"count":0}"#.to_string(), 0, 0.0)]);
    let s = call(
        0,
        WH_ENTRY_SNAPSHOT,
        WH_FAMILY_ACCESSORY_INLINE,
        c"{\"city\":\"L\\\"yon\",\"count\":3}",
    );
    assert_eq!(s.calls, 1);
    assert_eq!(s.entries[0].1, r#"{"city":"L\"yon","family":"accessoryInline"}"#);
}

#[test]
fn the_push_token_arrives_only_when_the_hosts_context_has_it() {
    let token = c"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    let full = call_from_host(2, WH_ENTRY_SNAPSHOT, WH_FAMILY_SYSTEM_SMALL, c"{}", Some(token), 104);
    assert_eq!(
        full.entries[0].1,
        r#"{"push":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}"#
    );
    // An SDK 1.3 host's context ends before push_token: it is not read.
    let old = call_from_host(2, WH_ENTRY_SNAPSHOT, WH_FAMILY_SYSTEM_SMALL, c"{}", Some(token), WH_CONTEXT_SIZE_V1_0);
    assert_eq!(old.entries[0].1, r#"{"city":"","family":"systemSmall"}"#);
}

#[test]
fn timeline_with_policy_and_relevance() {
    let t = call(0, WH_ENTRY_TIMELINE, WH_FAMILY_SYSTEM_SMALL, c"{\"count\":3}");
    assert_eq!(
        (t.calls, t.status, t.policy, t.policy_date),
        (1, WH_STATUS_OK, WH_POLICY_AFTER, 1_800_003_600.0)
    );
    assert_eq!(t.entries.len(), 3);
    assert_eq!(
        t.entries[2],
        (1_800_001_200.0, r#"{"i":2}"#.to_string(), WH_ENTRY_HAS_RELEVANCE, 2.0)
    );
}

#[test]
fn errors_and_panics_become_error_results() {
    let e = call(0, WH_ENTRY_TIMELINE, WH_FAMILY_SYSTEM_SMALL, c"{\"count\":0}");
    assert_eq!((e.calls, e.status, e.code), (1, WH_STATUS_ERROR, 42));
    assert_eq!(e.message, "count must be at least 1");
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let p = call(0, WH_ENTRY_TIMELINE, WH_FAMILY_SYSTEM_SMALL, c"{\"count\":5000}");
    std::panic::set_hook(default_hook);
    assert_eq!((p.calls, p.status, p.code), (1, WH_STATUS_ERROR, -1));
    assert_eq!(p.message, "the provider panicked: too many: 5000");
    let f = call(1, WH_ENTRY_SNAPSHOT, 1 << 20, c"{}");
    assert_eq!(f.status, WH_STATUS_ERROR);
    assert!(f.message.contains("unknown family"), "{}", f.message);
}

#[test]
fn warm_up_runs_the_plugins_function() {
    let d = unsafe { &*widgethost_provider_entry(&offer(1, 1)) };
    let warm_up = d.warm_up.expect("the plugin has a warm-up");
    let before = WARM_UPS.load(Ordering::SeqCst);
    let context = WhWarmUpContext {
        struct_size: core::mem::size_of::<WhWarmUpContext>() as u32,
        abi_version: 1,
        now: 0.0,
        locale: c"en-US".as_ptr(),
        data_directory: c"/tmp".as_ptr(),
    };
    unsafe { warm_up(&context) };
    assert_eq!(WARM_UPS.load(Ordering::SeqCst), before + 1);
}
