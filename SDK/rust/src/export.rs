//! From a [`Plugin`] to the C descriptor, and the C entry points that call a
//! [`TimelineProvider`].

use crate::abi::*;
use crate::types::{Context, Entry, Family, Kind, ParameterType, Plugin, ProviderError, ReloadPolicy, WarmUpContext};
use core::ffi::{c_char, c_void, CStr};
use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

/// The C descriptor of a [`Plugin`], built once by
/// [`export_plugin!`](crate::export_plugin) and kept for the life of the
/// process, with everything it points to.
pub struct Exported {
    descriptor: WhPluginDescriptor,
    refusal: WhPluginDescriptor,
    // Owned storage the descriptors point into (heap buffers: moving the
    // struct does not move them).
    _strings: Vec<CString>,
    _kinds: Vec<WhKind>,
    _parameters: Vec<Vec<WhParameter>>,
    _choices: Vec<Vec<*const c_char>>,
}

// SAFETY: an Exported is never mutated after it is built; its raw pointers
// point into its own heap buffers or to `'static` data.
unsafe impl Send for Exported {}
unsafe impl Sync for Exported {}

/// The warm-up of the plugin exported from this shared object.
static WARM_UP: OnceLock<fn(&WarmUpContext)> = OnceLock::new();

/// What `widgethost_provider_entry` returns for `plugin` (used by
/// [`export_plugin!`](crate::export_plugin); not called directly).
///
/// # Safety
/// `offer` must be NULL or point to a readable `wh_host_offer` of
/// `struct_size` bytes.
pub unsafe fn export_descriptor(
    offer: *const WhHostOffer,
    plugin: &'static Plugin,
    cell: &'static OnceLock<Exported>,
) -> *const WhPluginDescriptor {
    let exported = cell.get_or_init(|| Exported::new(plugin));
    if negotiate(offer) == WH_ABI_VERSION && exported.descriptor.abi_version == WH_ABI_VERSION {
        &exported.descriptor
    } else {
        &exported.refusal
    }
}

impl Exported {
    fn new(plugin: &'static Plugin) -> Exported {
        let mut strings: Vec<CString> = Vec::new();
        let mut problem: Option<String> = None;
        let mut c = |text: &str, field: &str| -> *const c_char {
            let owned = CString::new(text).unwrap_or_else(|_| {
                problem.get_or_insert_with(|| format!("{field} contains a NUL byte"));
                CString::default()
            });
            let pointer = owned.as_ptr();
            strings.push(owned);
            pointer
        };
        let mut parameters: Vec<Vec<WhParameter>> = Vec::new();
        let mut choice_lists: Vec<Vec<*const c_char>> = Vec::new();
        let mut shape_problem: Option<String> = None;
        let mut kinds: Vec<WhKind> = Vec::new();
        for kind in plugin.kinds {
            let mut raw_parameters: Vec<WhParameter> = Vec::with_capacity(kind.parameters.len());
            for p in kind.parameters {
                if !p.choices.is_empty() && p.kind != ParameterType::String {
                    shape_problem.get_or_insert_with(|| {
                        format!(
                            "parameter `{}` of kind {} has choices but is not a string parameter: \
                             only string parameters take choices (use Parameter::string)",
                            p.name, kind.id
                        )
                    });
                }
                // The two parallel arrays `choices` and `choice_titles` point
                // into heap buffers kept in `choice_lists` (moving a Vec does
                // not move its buffer).
                let values: Vec<*const c_char> = p.choices.iter().map(|o| c(o.value, "a choice")).collect();
                let titles: Vec<*const c_char> = p
                    .choices
                    .iter()
                    .map(|o| o.title.map_or(core::ptr::null(), |t| c(t, "a choice's title")))
                    .collect();
                let (choices, choice_titles) = if values.is_empty() {
                    (core::ptr::null(), core::ptr::null())
                } else {
                    (values.as_ptr(), titles.as_ptr())
                };
                choice_lists.push(values);
                choice_lists.push(titles);
                raw_parameters.push(WhParameter {
                    struct_size: core::mem::size_of::<WhParameter>() as u32,
                    type_: p.kind.raw(),
                    name: c(p.name, "a parameter name"),
                    default_json: p
                        .default_json
                        .map_or(core::ptr::null(), |d| c(d, "a parameter default")),
                    description: p
                        .description
                        .map_or(core::ptr::null(), |d| c(d, "a parameter description")),
                    title: p.title.map_or(core::ptr::null(), |t| c(t, "a parameter title")),
                    choice_count: p.choices.len() as u32,
                    flags: if p.optional { WH_PARAMETER_OPTIONAL } else { 0 },
                    choices,
                    choice_titles,
                });
            }
            kinds.push(WhKind {
                struct_size: core::mem::size_of::<WhKind>() as u32,
                flags: kind.flags(),
                id: c(kind.id, "a kind id"),
                display_name: c(kind.display_name, "a kind's display name"),
                description: kind
                    .description
                    .map_or(core::ptr::null(), |d| c(d, "a kind's description")),
                families: kind.families.0,
                parameter_count: raw_parameters.len() as u32,
                parameter_size: core::mem::size_of::<WhParameter>() as u32,
                reserved: 0,
                parameters: if raw_parameters.is_empty() {
                    core::ptr::null()
                } else {
                    raw_parameters.as_ptr()
                },
                placeholder: Some(placeholder_entry),
                snapshot: Some(snapshot_entry),
                timeline: Some(timeline_entry),
                // Handed back in wh_context.kind_context: the kind to call.
                context: kind as *const Kind as *mut c_void,
            });
            parameters.push(raw_parameters);
        }
        let id = c(plugin.id, "the plugin id");
        let name = c(plugin.name, "the plugin name");
        let version = c(plugin.version, "the plugin version");
        let vendor = plugin.vendor.map_or(core::ptr::null(), |v| c(v, "the vendor"));
        let problem = problem.or(shape_problem);
        let refusal_text = match &problem {
            Some(problem) => format!("{} cannot be described to the host: {problem}", plugin.id),
            None => format!(
                "{} was built with the widgethost Rust crate {} for ABI version {WH_ABI_VERSION}; \
                 this host does not offer it: use a host whose ABI range includes {WH_ABI_VERSION}",
                plugin.id,
                env!("CARGO_PKG_VERSION")
            ),
        };
        let refusal_text = CString::new(refusal_text.replace('\0', " ")).unwrap_or_default();
        let refusal_pointer = refusal_text.as_ptr();
        strings.push(refusal_text);
        let warm_up: Option<WhWarmUpFn> = plugin.warm_up.map(|function| {
            let _ = WARM_UP.set(function);
            warm_up_entry as WhWarmUpFn
        });
        let descriptor = |abi_version: u32, refusal: *const c_char| WhPluginDescriptor {
            struct_size: core::mem::size_of::<WhPluginDescriptor>() as u32,
            magic: WH_PLUGIN_MAGIC,
            abi_version,
            kind_size: core::mem::size_of::<WhKind>() as u32,
            entry_size: core::mem::size_of::<WhEntry>() as u32,
            result_size: core::mem::size_of::<WhResult>() as u32,
            id,
            name,
            version,
            vendor,
            sdk_version: WH_SDK_VERSION.as_ptr(),
            refusal,
            kind_count: kinds.len() as u32,
            reserved: 0,
            kinds: kinds.as_ptr(),
            warm_up,
        };
        let usable = problem.is_none();
        Exported {
            descriptor: descriptor(
                if usable { WH_ABI_VERSION } else { 0 },
                if usable { core::ptr::null() } else { refusal_pointer },
            ),
            refusal: descriptor(0, refusal_pointer),
            _strings: strings,
            _kinds: kinds,
            _parameters: parameters,
            _choices: choice_lists,
        }
    }
}

/// A C string from the host as a `String` (NULL reads as empty; invalid
/// UTF-8 is replaced).
unsafe fn text(pointer: *const c_char) -> String {
    if pointer.is_null() {
        String::new()
    } else {
        CStr::from_ptr(pointer).to_string_lossy().into_owned()
    }
}

unsafe fn context_from(raw: &WhContext) -> Result<Context, ProviderError> {
    let family = Family::from_bit(raw.family)
        .ok_or_else(|| ProviderError::new(1, format!("the host asked for an unknown family bit {:#x}", raw.family)))?;
    Ok(Context {
        kind: text(raw.kind),
        family,
        is_preview: raw.is_preview != 0,
        display_size: (raw.display_width, raw.display_height),
        now: raw.now,
        timeout: raw.timeout,
        configuration_json: text(raw.configuration_json),
        locale: text(raw.locale),
        data_directory: text(raw.data_directory),
        push_token: if raw.push_token.is_null() { None } else { Some(text(raw.push_token)) },
    })
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text.to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a non-string panic".to_string()
    }
}

/// Calls `body` for the kind of `raw_context` and hands its answer to the
/// completion, exactly once. A panic becomes an error result (code -1).
unsafe fn answer(
    raw_context: *const WhContext,
    complete: Option<WhCompleteFn>,
    completion_context: *mut c_void,
    body: impl FnOnce(&Kind, &Context) -> Result<(Vec<Entry>, ReloadPolicy), ProviderError>,
) {
    let Some(complete) = complete else { return };
    let outcome = if raw_context.is_null() || (*raw_context).kind_context.is_null() {
        Err(ProviderError::new(1, "the host passed no context"))
    } else {
        // Copy the host's context into ours, zero-extended: an older host's
        // is smaller (no `push_token`), and nothing past its size is read.
        let mut copy: WhContext = core::mem::zeroed();
        let size = ((*raw_context).struct_size as usize).min(core::mem::size_of::<WhContext>());
        core::ptr::copy_nonoverlapping(raw_context as *const u8, &mut copy as *mut WhContext as *mut u8, size);
        let raw = &copy;
        let kind = &*(raw.kind_context as *const Kind);
        match catch_unwind(AssertUnwindSafe(|| {
            context_from(raw).and_then(|context| body(kind, &context))
        })) {
            Ok(outcome) => outcome,
            Err(payload) => Err(ProviderError::new(
                -1,
                format!("the provider panicked: {}", panic_message(&*payload)),
            )),
        }
    };
    match outcome {
        Ok((entries, policy)) => complete_entries(complete, completion_context, &entries, policy),
        Err(error) => complete_error(complete, completion_context, &error),
    }
}

unsafe fn complete_entries(
    complete: WhCompleteFn,
    completion_context: *mut c_void,
    entries: &[Entry],
    policy: ReloadPolicy,
) {
    let raw: Vec<WhEntry> = entries
        .iter()
        .map(|entry| WhEntry {
            struct_size: core::mem::size_of::<WhEntry>() as u32,
            flags: if entry.relevance.is_some() {
                WH_ENTRY_HAS_RELEVANCE
            } else {
                0
            },
            date: entry.date,
            relevance_score: entry.relevance.map_or(0.0, |r| r.score),
            relevance_duration: entry.relevance.map_or(0.0, |r| r.duration),
            // Not NUL-terminated: content_length gives the length. An empty
            // content (length 0 would mean strlen) points at "" instead.
            content_json: if entry.content.is_empty() {
                c"".as_ptr()
            } else {
                entry.content.as_ptr() as *const c_char
            },
            content_length: entry.content.len(),
        })
        .collect();
    let (policy, policy_date) = match policy {
        ReloadPolicy::AtEnd => (WH_POLICY_AT_END, 0.0),
        ReloadPolicy::After(date) => (WH_POLICY_AFTER, date),
        ReloadPolicy::Never => (WH_POLICY_NEVER, 0.0),
    };
    let result = WhResult {
        struct_size: core::mem::size_of::<WhResult>() as u32,
        status: WH_STATUS_OK,
        entry_count: raw.len() as u32,
        entry_size: core::mem::size_of::<WhEntry>() as u32,
        entries: raw.as_ptr(),
        policy,
        reserved: 0,
        policy_date,
        error_code: 0,
        reserved2: 0,
        error_message: core::ptr::null(),
    };
    // The host copies everything during this call.
    complete(completion_context, &result);
}

unsafe fn complete_error(complete: WhCompleteFn, completion_context: *mut c_void, error: &ProviderError) {
    let message = CString::new(error.message.replace('\0', " ")).unwrap_or_default();
    let result = WhResult {
        struct_size: core::mem::size_of::<WhResult>() as u32,
        status: WH_STATUS_ERROR,
        entry_count: 0,
        entry_size: core::mem::size_of::<WhEntry>() as u32,
        entries: core::ptr::null(),
        policy: 0,
        reserved: 0,
        policy_date: 0.0,
        error_code: if error.code == 0 { 1 } else { error.code },
        reserved2: 0,
        error_message: message.as_ptr(),
    };
    complete(completion_context, &result);
}

unsafe extern "C" fn placeholder_entry(
    context: *const WhContext,
    complete: Option<WhCompleteFn>,
    completion_context: *mut c_void,
) {
    answer(context, complete, completion_context, |kind, context| {
        Ok((vec![kind.provider.placeholder(context)], ReloadPolicy::Never))
    })
}

unsafe extern "C" fn snapshot_entry(
    context: *const WhContext,
    complete: Option<WhCompleteFn>,
    completion_context: *mut c_void,
) {
    answer(context, complete, completion_context, |kind, context| {
        kind.provider
            .snapshot(context)
            .map(|entry| (vec![entry], ReloadPolicy::Never))
    })
}

unsafe extern "C" fn timeline_entry(
    context: *const WhContext,
    complete: Option<WhCompleteFn>,
    completion_context: *mut c_void,
) {
    answer(context, complete, completion_context, |kind, context| {
        kind.provider
            .timeline(context)
            .map(|timeline| (timeline.entries, timeline.policy))
    })
}

unsafe extern "C" fn warm_up_entry(raw: *const WhWarmUpContext) {
    let (Some(function), false) = (WARM_UP.get(), raw.is_null()) else {
        return;
    };
    let raw = &*raw;
    let context = WarmUpContext {
        now: raw.now,
        locale: text(raw.locale),
        data_directory: text(raw.data_directory),
    };
    // A panic must not unwind into the host; a failed warm-up is harmless.
    let _ = catch_unwind(AssertUnwindSafe(|| function(&context)));
}
