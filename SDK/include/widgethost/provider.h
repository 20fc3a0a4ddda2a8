/*
 * widgethost/provider.h — the widgethost timeline-provider plugin ABI.
 *
 * A provider plugin is a shared object that exports ONE function,
 * `widgethost_provider_entry`, returning a pointer to a constant, size-prefixed
 * `wh_plugin_descriptor`. The host (the `widgethost-runner` child process,
 * never the host daemon itself) calls it once after `dlopen`, then calls the
 * entry points of the widget kinds it describes.
 *
 * Conventions used throughout this header:
 *   - Every struct starts with `uint32_t struct_size`, set by whoever fills
 *     the struct to `sizeof` of the struct as *they* compiled it. A reader
 *     never reads past `struct_size`; fields beyond it read as zero
 *     (zero-extension). Fields are only ever appended. See docs/abi.md.
 *   - Every pointer says who owns it and how long it stays valid.
 *   - Strings are UTF-8 and NUL-terminated.
 *   - Times are `double` seconds since the Unix epoch (UTC), like
 *     `Date.timeIntervalSince1970`. Durations are `double` seconds.
 *   - Callbacks are a (function, void *context) pair.
 *
 * The end of this header has helpers (SDK 1.2) that write the boilerplate:
 * WH_KIND/WH_PARAMETER/WH_DEFINE_PROVIDER initialise the descriptor,
 * wh_complete_entries/wh_complete_error answer a call, WH_MAX_* are the
 * limits the host enforces on a result.
 *
 * Build a plugin:
 *   cc -shared -fPIC $(pkg-config --cflags widgethost-provider) -o my.so my.c
 * and test it:
 *   widgethost load ./my.so
 *
 * This header is C99 and C++ clean under -Wall -Wextra -pedantic -Werror.
 */
#ifndef WIDGETHOST_PROVIDER_H
#define WIDGETHOST_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------- */
/* Versions                                                               */
/* ---------------------------------------------------------------------- */

/** The ABI version this header describes. A plugin built against this header
 *  speaks exactly this version; the host may speak a range of them. */
#define WH_ABI_VERSION 1u

/** Oldest ABI version this header can describe (for hosts built against it). */
#define WH_ABI_VERSION_MIN 1u

/** Constant in `wh_plugin_descriptor.magic`: the bytes "WHPV" read as a
 *  little-endian integer. Guards against a symbol of the right name that is
 *  not a widgethost descriptor at all. */
#define WH_PLUGIN_MAGIC 0x56504857u

/** Version of the SDK this header belongs to, as a string. Informational. */
#define WH_SDK_VERSION "1.4.0"

/** Name of the one symbol every plugin exports. */
#define WH_ENTRY_SYMBOL "widgethost_provider_entry"

#if defined(_WIN32)
#define WH_EXPORT __declspec(dllexport)
#else
#define WH_EXPORT __attribute__((visibility("default")))
#endif

/* ---------------------------------------------------------------------- */
/* Enumerations                                                           */
/* ---------------------------------------------------------------------- */

/** Widget families (sizes), as bits so a kind can list several.
 *  The names and order mirror WidgetKit's `WidgetFamily`. */
typedef enum wh_family {
    WH_FAMILY_SYSTEM_SMALL = 1u << 0,
    WH_FAMILY_SYSTEM_MEDIUM = 1u << 1,
    WH_FAMILY_SYSTEM_LARGE = 1u << 2,
    WH_FAMILY_SYSTEM_EXTRA_LARGE = 1u << 3,
    WH_FAMILY_ACCESSORY_CIRCULAR = 1u << 4,
    WH_FAMILY_ACCESSORY_RECTANGULAR = 1u << 5,
    WH_FAMILY_ACCESSORY_INLINE = 1u << 6
} wh_family;

/** Every family bit defined by ABI version 1. */
#define WH_FAMILY_ALL_V1 0x7Fu

/** Type of a configuration parameter (see `wh_parameter`). */
typedef enum wh_parameter_type {
    WH_PARAM_STRING = 1,
    WH_PARAM_INTEGER = 2,
    WH_PARAM_NUMBER = 3,
    WH_PARAM_BOOLEAN = 4
} wh_parameter_type;

/** (SDK 1.3) Bits of `wh_parameter.flags`. */
typedef enum wh_parameter_flags {
    /** The parameter may be left out: with no default (`default_json`
     *  NULL) it is not required, and the configuration has no member for it
     *  unless the instance sets one (an optional AppIntents `@Parameter`,
     *  `String?`). Older hosts, which do not read it, treat such a
     *  parameter as required. */
    WH_PARAMETER_OPTIONAL = 1u << 0
} wh_parameter_flags;

/** Bits of `wh_kind.flags`. */
typedef enum wh_kind_flags {
    /** The kind needs network access. Without this bit the sandbox gives
     *  the call no network at all. */
    WH_KIND_NEEDS_NETWORK = 1u << 0,
    /** The kind's answers depend only on the call's family, configuration
     *  and `context->now` (no clock read, no randomness, no network, no
     *  files): the host may reuse one answer for identical calls, as
     *  `widgethost simulate` does for thousands of identical instances. */
    WH_KIND_DETERMINISTIC = 1u << 1,
    /** Every call of the kind must start from a fresh process: the host
     *  never serves it from a reused warm worker, but forks a fresh child
     *  from the plugin's fork server per call (docs/isolation.md). Set it
     *  when a call leaves state behind that the next must not see. */
    WH_KIND_FRESH_PROCESS = 1u << 2,
    /** (SDK 1.3) The kind accepts push updates (WidgetKit's
     *  `pushHandler(_:)`): a server may tell the host that the kind's content
     *  changed, and the host reloads its instances within a push budget of
     *  their own (docs/control-protocol.md, "Push"), and passes the kind's
     *  push token in `wh_context.push_token` (SDK 1.4). Older hosts ignore
     *  the bit. */
    WH_KIND_PUSH = 1u << 3
} wh_kind_flags;

/** When the host should ask for the next timeline (WidgetKit's
 *  `TimelineReloadPolicy`). */
typedef enum wh_reload_policy {
    /** Ask again once the last entry's date has passed. */
    WH_POLICY_AT_END = 1,
    /** Ask again at `wh_result.policy_date`, not before. */
    WH_POLICY_AFTER = 2,
    /** Never ask again on its own; only an explicit reload asks. */
    WH_POLICY_NEVER = 3
} wh_reload_policy;

/** `wh_result.status`. */
typedef enum wh_status {
    /** The result carries entries (and, for timeline, a policy). */
    WH_STATUS_OK = 0,
    /** The provider failed; `error_code` and `error_message` say why. */
    WH_STATUS_ERROR = 1
} wh_status;

/** Bits of `wh_entry.flags`. */
typedef enum wh_entry_flags {
    /** `relevance_score` and `relevance_duration` are meaningful. */
    WH_ENTRY_HAS_RELEVANCE = 1u << 0
} wh_entry_flags;

/** Which entry point a call is for (`wh_context.entry_point`). */
typedef enum wh_entry_point {
    WH_ENTRY_PLACEHOLDER = 1,
    WH_ENTRY_SNAPSHOT = 2,
    WH_ENTRY_TIMELINE = 3
} wh_entry_point;

/* ---------------------------------------------------------------------- */
/* Host -> plugin: the offer                                              */
/* ---------------------------------------------------------------------- */

/** What the host offers when it calls `widgethost_provider_entry`.
 *  Owner: the host. Valid only for the duration of that call: copy what you
 *  need. */
typedef struct wh_host_offer {
    /** sizeof(wh_host_offer) as the host compiled it. */
    uint32_t struct_size;
    /** Oldest ABI version the host speaks. */
    uint32_t abi_min;
    /** Newest ABI version the host speaks. */
    uint32_t abi_max;
    /** Reserved, zero. */
    uint32_t reserved;
    /** Host name and version, e.g. "widgethost 0.1.0". Informational. */
    const char *host_version;
} wh_host_offer;

/* ---------------------------------------------------------------------- */
/* Plugin -> host: results                                                */
/* ---------------------------------------------------------------------- */

/** One timeline entry. */
typedef struct wh_entry {
    /** sizeof(wh_entry) as the plugin compiled it. */
    uint32_t struct_size;
    /** Bits from `wh_entry_flags`. */
    uint32_t flags;
    /** When the entry becomes the displayed one (seconds since the epoch). */
    double date;
    /** Relevance score (WidgetKit's `TimelineEntryRelevance.score`), >= 0;
     *  read only when WH_ENTRY_HAS_RELEVANCE is set. */
    double relevance_score;
    /** How long the score holds, in seconds from `date`; 0 means until the
     *  next entry. Read only when WH_ENTRY_HAS_RELEVANCE is set. */
    double relevance_duration;
    /** The entry's content: a JSON object, UTF-8. Owner: the plugin; needs to
     *  stay valid only until the completion function returns. */
    const char *content_json;
    /** Length of `content_json` in bytes, or 0 to use strlen(). */
    size_t content_length;
} wh_entry;

/** The answer to one entry-point call, passed to the completion function.
 *  Owner: the plugin. The host copies everything it needs before the
 *  completion function returns, so the plugin may free or reuse the result
 *  (and everything it points to) as soon as the completion returns. */
typedef struct wh_result {
    /** sizeof(wh_result) as the plugin compiled it. */
    uint32_t struct_size;
    /** WH_STATUS_OK or WH_STATUS_ERROR. */
    int32_t status;
    /** Number of entries. Placeholder and snapshot answer exactly one;
     *  timeline answers one or more, sorted by date. */
    uint32_t entry_count;
    /** sizeof(wh_entry) as the plugin compiled it: the stride of `entries`. */
    uint32_t entry_size;
    /** Array of `entry_count` entries, each `entry_size` bytes apart. */
    const wh_entry *entries;
    /** A `wh_reload_policy`; read for timeline calls only. */
    uint32_t policy;
    /** Reserved, zero. */
    uint32_t reserved;
    /** For WH_POLICY_AFTER: when to ask again (seconds since the epoch). */
    double policy_date;
    /** For WH_STATUS_ERROR: the plugin's own error code (any non-zero value). */
    int32_t error_code;
    /** Reserved, zero. */
    uint32_t reserved2;
    /** For WH_STATUS_ERROR: a message for the plugin's author/user.
     *  Owner: the plugin; valid until the completion function returns. */
    const char *error_message;
} wh_result;

/** The completion function the host hands to every entry point.
 *
 *  Call it exactly once per call, with `completion_context` as first
 *  argument, from any thread, at any time before the call's deadline
 *  (`wh_context.timeout`). The host copies `result` before returning;
 *  `result` stays owned by the plugin. A second call is ignored. */
typedef void (*wh_complete_fn)(void *completion_context, const wh_result *result);

/* ---------------------------------------------------------------------- */
/* Host -> plugin: the call context                                       */
/* ---------------------------------------------------------------------- */

/** Everything a provider needs to answer one call (WidgetKit's
 *  `TimelineProviderContext`, plus the time and the instance's settings).
 *  Owner: the host. The struct and every string it points to stay valid
 *  until the plugin calls the completion function (or the deadline passes):
 *  a provider answering later, from another thread, may keep the pointer
 *  until then. */
typedef struct wh_context {
    /** sizeof(wh_context) as the host compiled it. */
    uint32_t struct_size;
    /** The ABI version negotiated for this plugin. */
    uint32_t abi_version;
    /** WH_ENTRY_PLACEHOLDER, WH_ENTRY_SNAPSHOT or WH_ENTRY_TIMELINE. */
    uint32_t entry_point;
    /** One `wh_family` bit: the family to render for. */
    uint32_t family;
    /** Non-zero when the widget is shown in the gallery (`isPreview`):
     *  answer fast, with sample data if real data is not at hand. */
    uint32_t is_preview;
    /** Reserved, zero. */
    uint32_t reserved;
    /** The kind's id, as in `wh_kind.id`. */
    const char *kind;
    /** Display size in points (WidgetKit's `displaySize`). */
    double display_width;
    double display_height;
    /** The current time, from the host's clock (seconds since the epoch).
     *  Use it instead of reading the system clock: the scheduler's
     *  simulations run on a virtual clock. */
    double now;
    /** Seconds the provider has to call the completion, counted from the
     *  start of the call. The call is killed after that. */
    double timeout;
    /** The instance's configuration: a JSON object with one member per
     *  declared parameter (defaults filled in). Never NULL; "{}" if none. */
    const char *configuration_json;
    /** The user's locale as a BCP 47 tag, e.g. "en-US". Never NULL. */
    const char *locale;
    /** Absolute path of the plugin's own data directory: the only place it
     *  may write, shared with its app (WidgetKit's App Group container).
     *  Also the current working directory. Never NULL. */
    const char *data_directory;
    /** The `context` pointer of the kind being called (`wh_kind.context`),
     *  handed back untouched. */
    void *kind_context;
    /* ---- appended in SDK 1.4 (still ABI v1: read it only when
     * WH_CONTEXT_HAS_PUSH_TOKEN(context) says the host's struct covers it) ---- */
    /** The kind's push token (WidgetKit's `WidgetPushInfo.token`), for a
     *  kind that declares WH_KIND_PUSH, when the daemon runs it: 64 lowercase
     *  hex characters, the same for every call of the kind on this host until
     *  the state is reset. Send it to your server, which pushes to the host
     *  with it (docs/control-protocol.md, "Push"). NULL otherwise (a kind
     *  without push, `widgethost load`, `simulate`). Owner: the host; valid
     *  until the call ends: copy it. */
    const char *push_token;
} wh_context;

/** sizeof(wh_context) in SDK 1.0-1.3: the context an older host passes. */
#define WH_CONTEXT_SIZE_V1_0 offsetof(wh_context, push_token)

/** Whether `context` (a `const wh_context *` from the host) has
 *  `push_token` (SDK 1.4). An older host's context ends before it. */
#define WH_CONTEXT_HAS_PUSH_TOKEN(context) \
    ((context)->struct_size >= offsetof(wh_context, push_token) + sizeof(const char *))

/** An entry point: placeholder, snapshot or timeline.
 *
 *  `context` and `completion_context` are owned by the host (see
 *  `wh_context`). Return whenever you like: before or after calling
 *  `complete`. The call ends when `complete` is called, or fails when the
 *  deadline passes first. */
typedef void (*wh_entry_fn)(const wh_context *context, wh_complete_fn complete,
                            void *completion_context);

/* ---------------------------------------------------------------------- */
/* Host -> plugin: the warm-up (optional)                                 */
/* ---------------------------------------------------------------------- */

/** What the host passes to `wh_plugin_descriptor.warm_up`. Owner: the host.
 *  Valid only for the duration of the warm_up call: copy what you need. */
typedef struct wh_warm_up_context {
    /** sizeof(wh_warm_up_context) as the host compiled it. */
    uint32_t struct_size;
    /** The ABI version negotiated for this plugin. */
    uint32_t abi_version;
    /** The current time, from the host's clock (seconds since the epoch). */
    double now;
    /** The locale the calls of this process will get, e.g. "en-US". Never
     *  NULL. */
    const char *locale;
    /** The plugin's data directory, as in `wh_context.data_directory`.
     *  Read from it if a warm-up needs to; do not write. Never NULL. */
    const char *data_directory;
} wh_warm_up_context;

/** A plugin's warm-up: do, once, the lazy work every call would otherwise
 *  repeat, so that calls start warm (the zygote pattern).
 *
 *  A warm worker (the host's default isolation, docs/isolation.md) loads a
 *  plugin once and serves many calls; a fork server loads it once and runs
 *  every call in a fresh child forked from it. Whatever a call initializes
 *  lazily (a language runtime's type metadata and caches, a parsed table, a
 *  formatter, code pages) slows a worker's first call, and in a fork server
 *  is thrown away with each child and built again by the next one.
 *  `warm_up` runs once in each worker before its first call, and in a fork
 *  server after loading and before the first child is forked, under the
 *  same sandbox; a worker's first call and every forked child start from
 *  the state it leaves. Typical work: call your own placeholder code and
 *  encode its result, create the formatters and calendars your entry points
 *  use, read a static data file.
 *
 *  Rules:
 *    - Start no threads and leave none running (fork() copies only the
 *      calling thread). In a fork server the host counts threads after
 *      warm_up; with more than one it calls this plugin with a fresh process
 *      per call instead.
 *    - No side effects outside the process: no writes, no network.
 *    - Return promptly: the load timeout (5 s by default) covers it.
 *    - Calls must work without it: the host runs it only in a warm worker
 *      or a fork server (never with `--isolation spawn` or `in-process`),
 *      and if it crashes or times out the host says so (`widgethost load`)
 *      and runs the plugin without it.
 *  May be NULL (also the value of descriptors compiled before it existed:
 *  zero-extension). */
typedef void (*wh_warm_up_fn)(const wh_warm_up_context *context);

/* ---------------------------------------------------------------------- */
/* Plugin -> host: the descriptor                                         */
/* ---------------------------------------------------------------------- */

/** A configuration parameter a kind accepts. Owner: the plugin; must stay
 *  valid (constant) while the plugin is loaded. */
typedef struct wh_parameter {
    /** sizeof(wh_parameter) as the plugin compiled it. */
    uint32_t struct_size;
    /** A `wh_parameter_type`. */
    uint32_t type;
    /** Name, unique in the kind: [A-Za-z_][A-Za-z0-9_]*. */
    const char *name;
    /** The default value as a JSON literal of the parameter's type, e.g.
     *  "\"Paris\"", "3", "true". NULL means required, no default. */
    const char *default_json;
    /** One line for people configuring an instance. May be NULL. */
    const char *description;
    /* ---- appended in SDK 1.3 (still ABI v1: a host reads them only when
     * struct_size covers them, WH_PARAMETER_HAS_CHOICES) ---- */
    /** The parameter's title for people (an AppIntents `@Parameter(title:)`),
     *  e.g. "City". May be NULL: the name is shown. */
    const char *title;
    /** Number of allowed values in `choices` (an `AppEnum`'s cases); 0 means
     *  any value of the type. Only WH_PARAM_STRING parameters have choices. */
    uint32_t choice_count;
    /** Bits from `wh_parameter_flags`. */
    uint32_t flags;
    /** `choice_count` allowed values, as plain strings (not JSON), e.g.
     *  "metric", "imperial". NULL when choice_count is 0. A default, if any,
     *  is one of them. */
    const char *const *choices;
    /** `choice_count` titles for people, parallel to `choices` (an AppEnum's
     *  `caseDisplayRepresentations`). May be NULL, and so may any element:
     *  the value is shown. */
    const char *const *choice_titles;
} wh_parameter;

/** sizeof(wh_parameter) in SDK 1.0-1.2: the smallest parameter a host
 *  accepts for ABI v1. */
#define WH_PARAMETER_SIZE_V1_0 offsetof(wh_parameter, title)

/** Whether a parameter of `struct_size` bytes has `title`, `choice_count`,
 *  `flags`, `choices` and `choice_titles` (SDK 1.3). */
#define WH_PARAMETER_HAS_CHOICES(struct_size) \
    ((struct_size) >= offsetof(wh_parameter, choice_titles) + sizeof(const char *const *))

/** One widget kind (WidgetKit: one `Widget` of a `WidgetBundle`).
 *  Owner: the plugin; must stay valid (constant) while it is loaded. */
typedef struct wh_kind {
    /** sizeof(wh_kind) as the plugin compiled it. */
    uint32_t struct_size;
    /** Bits from `wh_kind_flags`. */
    uint32_t flags;
    /** Unique id, e.g. "com.example.character-detail" (WidgetKit's `kind`). */
    const char *id;
    /** Name shown in the gallery. */
    const char *display_name;
    /** One sentence shown in the gallery. May be NULL. */
    const char *description;
    /** The `wh_family` bits this kind supports; at least one. */
    uint32_t families;
    /** Number of entries in `parameters`. */
    uint32_t parameter_count;
    /** sizeof(wh_parameter) as the plugin compiled it: stride of `parameters`. */
    uint32_t parameter_size;
    /** Reserved, zero. */
    uint32_t reserved;
    /** Array of `parameter_count` parameters; may be NULL when the count is 0. */
    const wh_parameter *parameters;
    /** The three entry points; none may be NULL. */
    wh_entry_fn placeholder;
    wh_entry_fn snapshot;
    wh_entry_fn timeline;
    /** Opaque pointer handed back in `wh_context.kind_context`. May be NULL. */
    void *context;
} wh_kind;

/** What `widgethost_provider_entry` returns. Owner: the plugin; must stay
 *  valid (constant) while the plugin is loaded. */
typedef struct wh_plugin_descriptor {
    /** sizeof(wh_plugin_descriptor) as the plugin compiled it. */
    uint32_t struct_size;
    /** Must be WH_PLUGIN_MAGIC. */
    uint32_t magic;
    /** The ABI version the plugin chose from the host's offer
     *  (abi_min..abi_max), or 0 to refuse the host: then say why in
     *  `refusal`. */
    uint32_t abi_version;
    /** sizeof(wh_kind) as the plugin compiled it: the stride of `kinds`. */
    uint32_t kind_size;
    /** sizeof(wh_entry) and sizeof(wh_result) as the plugin compiled them;
     *  the host checks them against the negotiated version. */
    uint32_t entry_size;
    uint32_t result_size;
    /** Reverse-DNS id of the plugin, e.g. "com.example.weather". */
    const char *id;
    /** Human-readable name and version of the plugin. */
    const char *name;
    const char *version;
    /** Who made it. May be NULL. */
    const char *vendor;
    /** WH_SDK_VERSION the plugin was built with. */
    const char *sdk_version;
    /** When `abi_version` is 0: why the plugin refused. May be NULL. */
    const char *refusal;
    /** Number of kinds, at least one. */
    uint32_t kind_count;
    /** Reserved, zero. */
    uint32_t reserved;
    /** Array of `kind_count` kinds, each `kind_size` bytes apart. */
    const wh_kind *kinds;
    /* ---- appended in SDK 1.1 (still ABI v1: a host reads it only when
     * struct_size covers it, WH_DESCRIPTOR_HAS_WARM_UP) ---- */
    /** Optional warm-up for the fork server (see `wh_warm_up_fn`). May be
     *  NULL. */
    wh_warm_up_fn warm_up;
} wh_plugin_descriptor;

/** sizeof(wh_plugin_descriptor) in SDK 1.0: the smallest descriptor a host
 *  accepts for ABI v1. */
#define WH_DESCRIPTOR_SIZE_V1_0 offsetof(wh_plugin_descriptor, warm_up)

/** Whether a descriptor of `struct_size` bytes has the `warm_up` field. */
#define WH_DESCRIPTOR_HAS_WARM_UP(struct_size) \
    ((struct_size) >= offsetof(wh_plugin_descriptor, warm_up) + sizeof(wh_warm_up_fn))

/** The one function a plugin exports.
 *
 *  Called once, right after `dlopen`, with the host's offer. Keep it cheap:
 *  no I/O, no threads, no blocking. Return a pointer to a constant descriptor
 *  (a `static const` object is the usual way). Choose `abi_version` with
 *  WH_NEGOTIATE(offer). Must not return NULL.
 *
 *  The returned pointer is owned by the plugin and must stay valid while the
 *  plugin is loaded. */
typedef const wh_plugin_descriptor *(*wh_entry_function)(const wh_host_offer *offer);

/** Declaration of the symbol for plugins written in C or C++. */
WH_EXPORT const wh_plugin_descriptor *widgethost_provider_entry(const wh_host_offer *offer);

/** The ABI version a plugin built against this header answers to `offer`:
 *  WH_ABI_VERSION if the host's range contains it, 0 (refusal) otherwise. */
#define WH_NEGOTIATE(offer)                                                                  \
    (((offer) != NULL && (offer)->abi_min <= WH_ABI_VERSION && WH_ABI_VERSION <= (offer)->abi_max) \
         ? WH_ABI_VERSION                                                                    \
         : 0u)

/* ---------------------------------------------------------------------- */
/* Display sizes                                                          */
/* ---------------------------------------------------------------------- */

/* The display size the host passes for each family, in points (those of a
 * 6.1" iPhone; informational, a provider must not depend on them). */
#define WH_SIZE_SYSTEM_SMALL_W 170.0
#define WH_SIZE_SYSTEM_SMALL_H 170.0
#define WH_SIZE_SYSTEM_MEDIUM_W 364.0
#define WH_SIZE_SYSTEM_MEDIUM_H 170.0
#define WH_SIZE_SYSTEM_LARGE_W 364.0
#define WH_SIZE_SYSTEM_LARGE_H 382.0
#define WH_SIZE_SYSTEM_EXTRA_LARGE_W 715.0
#define WH_SIZE_SYSTEM_EXTRA_LARGE_H 330.0
#define WH_SIZE_ACCESSORY_CIRCULAR_W 76.0
#define WH_SIZE_ACCESSORY_CIRCULAR_H 76.0
#define WH_SIZE_ACCESSORY_RECTANGULAR_W 172.0
#define WH_SIZE_ACCESSORY_RECTANGULAR_H 76.0
#define WH_SIZE_ACCESSORY_INLINE_W 257.0
#define WH_SIZE_ACCESSORY_INLINE_H 26.0

/* ---------------------------------------------------------------------- */
/* Limits the host enforces (SDK 1.2)                                     */
/* ---------------------------------------------------------------------- */

/* What the host checks in every result (docs/abi.md, "What the host checks
 * in a result"). The same numbers as the host's WidgetHostLimits and
 * DefaultTimeouts; a test in the host's suite keeps them equal. */

/** Most entries in one result; more is `resultTooLarge`. */
#define WH_MAX_ENTRIES 400u
/** Most bytes of entry content (the sum of every entry's content_json) in
 *  one result; more is `resultTooLarge`. */
#define WH_MAX_RESULT_BYTES 10485760u /* 10 MiB */
/** Entries closer than this many seconds draw a warning (WidgetKit: "at
 *  least about 5 minutes apart"); the result is still used. */
#define WH_MIN_ENTRY_SPACING 300.0
/** Bytes of a call's stdout, and of its stderr, that the host keeps (the
 *  rest is counted, not kept). */
#define WH_LOG_BYTES_PER_STREAM 65536u /* 64 KiB */

/* Default deadlines in seconds (`wh_context.timeout` carries the one that
 * applies to a call; a configuration may change them). */
#define WH_TIMEOUT_LOAD 5.0
#define WH_TIMEOUT_PLACEHOLDER 0.5
#define WH_TIMEOUT_SNAPSHOT 2.0
#define WH_TIMEOUT_SNAPSHOT_PREVIEW 1.0
#define WH_TIMEOUT_TIMELINE 15.0

/* ---------------------------------------------------------------------- */
/* Descriptor helpers (SDK 1.2)                                           */
/* ---------------------------------------------------------------------- */

/* Initialisers for the descriptor structs: every field in order, so they
 * work in C99 and C++11 alike and pass -Wextra (missing-field-initializers).
 * Use them in `static const` objects:
 *
 *   static const wh_parameter city_parameters[] = {
 *       WH_PARAMETER(WH_PARAM_STRING, "city", "\"Paris\"", "City to show"),
 *   };
 *   static const wh_kind kinds[] = {
 *       WH_KIND_WITH_PARAMETERS("org.example.weather", "Weather", "Today's weather.",
 *                               WH_FAMILY_SYSTEM_SMALL, city_parameters,
 *                               placeholder, snapshot, timeline),
 *   };
 *   WH_DEFINE_PROVIDER("org.example.weather", "Weather", "1.0.0", "Example Org", kinds, NULL)
 *
 * WH_DEFINE_PROVIDER defines `widgethost_provider_entry`: it negotiates
 * with WH_NEGOTIATE and refuses (abi_version 0, with a reason) a host that
 * does not offer WH_ABI_VERSION. */

/** Number of elements of an array (not a pointer). */
#define WH_ARRAY_COUNT(array) ((uint32_t)(sizeof(array) / sizeof((array)[0])))

/** A `wh_parameter`: type (a `wh_parameter_type`), name, default as a JSON
 *  literal or NULL (required), description or NULL. */
#define WH_PARAMETER(type, name, default_json, description) \
    { (uint32_t)sizeof(wh_parameter), (uint32_t)(type), (name), (default_json), (description), NULL, 0u, 0u, NULL, NULL }

/** (SDK 1.3) A `wh_parameter` with a title for people (or NULL). */
#define WH_PARAMETER_TITLED(type, name, default_json, description, title) \
    { (uint32_t)sizeof(wh_parameter), (uint32_t)(type), (name), (default_json), (description), (title), 0u, 0u, NULL, NULL }

/** (SDK 1.3) A string `wh_parameter` that takes one of the strings of the
 *  array `choices` (its count taken with WH_ARRAY_COUNT), shown with the
 *  parallel array `choice_titles` (or NULL); `default_json` is one of them
 *  as a JSON string literal, or NULL. */
#define WH_PARAMETER_CHOICE(name, default_json, description, title, choices, choice_titles)            \
    {                                                                                                \
        (uint32_t)sizeof(wh_parameter), (uint32_t)WH_PARAM_STRING, (name), (default_json), (description), \
            (title), WH_ARRAY_COUNT(choices), 0u, (choices), (choice_titles)                         \
    }

/** A `wh_kind`, every field: flags (`wh_kind_flags` bits), id, display name,
 *  description (or NULL), families (`wh_family` bits), parameters (an array
 *  or NULL) and their count, the three entry points, and the context
 *  pointer handed back in `wh_context.kind_context` (or NULL). */
#define WH_KIND_FULL(flags, id, display_name, description, families, parameters, parameter_count,     \
                     placeholder, snapshot, timeline, context)                                          \
    {                                                                                                   \
        (uint32_t)sizeof(wh_kind), (uint32_t)(flags), (id), (display_name), (description),             \
            (uint32_t)(families), (uint32_t)(parameter_count), (uint32_t)sizeof(wh_parameter), 0u,     \
            (parameters), (placeholder), (snapshot), (timeline), (context)                             \
    }

/** A `wh_kind` without parameters, flags or context. */
#define WH_KIND(id, display_name, description, families, placeholder, snapshot, timeline) \
    WH_KIND_FULL(0u, id, display_name, description, families, NULL, 0u, placeholder, snapshot, timeline, NULL)

/** A `wh_kind` whose parameters are the array `parameters` (its count is
 *  taken with WH_ARRAY_COUNT, so pass the array itself, not a pointer). */
#define WH_KIND_WITH_PARAMETERS(id, display_name, description, families, parameters, placeholder, snapshot, \
                                timeline)                                                                   \
    WH_KIND_FULL(0u, id, display_name, description, families, parameters, WH_ARRAY_COUNT(parameters),       \
                 placeholder, snapshot, timeline, NULL)

/** A `wh_plugin_descriptor` that speaks WH_ABI_VERSION: id, name, version,
 *  vendor (or NULL), the array of kinds (its count is taken with
 *  WH_ARRAY_COUNT) and the warm-up (or NULL). */
#define WH_DESCRIPTOR(id, name, version, vendor, kinds, warm_up)                                           \
    {                                                                                                    \
        (uint32_t)sizeof(wh_plugin_descriptor), WH_PLUGIN_MAGIC, WH_ABI_VERSION, (uint32_t)sizeof(wh_kind), \
            (uint32_t)sizeof(wh_entry), (uint32_t)sizeof(wh_result), (id), (name), (version), (vendor),   \
            WH_SDK_VERSION, NULL, WH_ARRAY_COUNT(kinds), 0u, (kinds), (warm_up)                         \
    }

/** The same descriptor refusing the host (abi_version 0) with `reason`. */
#define WH_REFUSAL(id, name, version, vendor, kinds, reason)                                                \
    {                                                                                                    \
        (uint32_t)sizeof(wh_plugin_descriptor), WH_PLUGIN_MAGIC, 0u, (uint32_t)sizeof(wh_kind),           \
            (uint32_t)sizeof(wh_entry), (uint32_t)sizeof(wh_result), (id), (name), (version), (vendor),   \
            WH_SDK_VERSION, (reason), WH_ARRAY_COUNT(kinds), 0u, (kinds), NULL                          \
    }

/** Defines the descriptor, its refusal and `widgethost_provider_entry`
 *  (the whole plugin's exported surface) in one line, at file scope. */
#define WH_DEFINE_PROVIDER(id, name, version, vendor, kinds, warm_up)                                       \
    static const wh_plugin_descriptor wh_provider_descriptor_ =                                          \
        WH_DESCRIPTOR(id, name, version, vendor, kinds, warm_up);                                        \
    static const wh_plugin_descriptor wh_provider_refusal_ = WH_REFUSAL(                                \
        id, name, version, vendor, kinds, "built for widgethost ABI version 1 (SDK " WH_SDK_VERSION       \
        "); this host does not offer it: use a host whose ABI range includes 1");                       \
    WH_EXPORT const wh_plugin_descriptor *widgethost_provider_entry(const wh_host_offer *offer) {        \
        return WH_NEGOTIATE(offer) == WH_ABI_VERSION ? &wh_provider_descriptor_ : &wh_provider_refusal_; \
    }

/* ---------------------------------------------------------------------- */
/* Result helpers (SDK 1.2)                                               */
/* ---------------------------------------------------------------------- */

/** An entry at `date` with `content_json` (a NUL-terminated JSON object,
 *  which must stay valid until the completion returns), no relevance. */
static inline wh_entry wh_make_entry(double date, const char *content_json) {
    wh_entry entry;
    entry.struct_size = (uint32_t)sizeof(wh_entry);
    entry.flags = 0u;
    entry.date = date;
    entry.relevance_score = 0.0;
    entry.relevance_duration = 0.0;
    entry.content_json = content_json;
    entry.content_length = 0u;
    return entry;
}

/** The same entry with a relevance (WidgetKit's TimelineEntryRelevance):
 *  `score` >= 0, held for `duration` seconds from `date` (0: until the next
 *  entry). */
static inline wh_entry wh_make_relevant_entry(double date, const char *content_json, double score,
                                              double duration) {
    wh_entry entry = wh_make_entry(date, content_json);
    entry.flags = (uint32_t)WH_ENTRY_HAS_RELEVANCE;
    entry.relevance_score = score;
    entry.relevance_duration = duration;
    return entry;
}

/** Answers a call with `count` entries (sorted by date, 1..WH_MAX_ENTRIES)
 *  and, for a timeline, `policy` (a `wh_reload_policy`) and `policy_date`
 *  (read for WH_POLICY_AFTER only). The host copies everything during the
 *  call, so `entries` may live on the caller's stack. */
static inline void wh_complete_entries(wh_complete_fn complete, void *completion_context, const wh_entry *entries,
                                       uint32_t count, uint32_t policy, double policy_date) {
    wh_result result;
    result.struct_size = (uint32_t)sizeof(wh_result);
    result.status = WH_STATUS_OK;
    result.entry_count = count;
    result.entry_size = (uint32_t)sizeof(wh_entry);
    result.entries = entries;
    result.policy = policy;
    result.reserved = 0u;
    result.policy_date = policy_date;
    result.error_code = 0;
    result.reserved2 = 0u;
    result.error_message = NULL;
    complete(completion_context, &result);
}

/** Answers a placeholder or snapshot call with one entry at `date`. */
static inline void wh_complete_entry(wh_complete_fn complete, void *completion_context, double date,
                                     const char *content_json) {
    wh_entry entry = wh_make_entry(date, content_json);
    wh_complete_entries(complete, completion_context, &entry, 1u, (uint32_t)WH_POLICY_NEVER, 0.0);
}

/** Answers a call with an error: `code` is the plugin's own (non-zero),
 *  `message` says what went wrong (valid until this returns). The host
 *  reports `pluginError(code, message)` and keeps the previous timeline. */
static inline void wh_complete_error(wh_complete_fn complete, void *completion_context, int32_t code,
                                     const char *message) {
    wh_result result;
    result.struct_size = (uint32_t)sizeof(wh_result);
    result.status = WH_STATUS_ERROR;
    result.entry_count = 0u;
    result.entry_size = (uint32_t)sizeof(wh_entry);
    result.entries = NULL;
    result.policy = 0u;
    result.reserved = 0u;
    result.policy_date = 0.0;
    result.error_code = code;
    result.reserved2 = 0u;
    result.error_message = message;
    complete(completion_context, &result);
}

#ifdef __cplusplus
}
#endif

#endif /* WIDGETHOST_PROVIDER_H */
