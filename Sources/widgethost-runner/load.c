/*
 * load.c — loading a plugin: the ELF checks, the sandbox, dlopen, the
 * entry function, the descriptor checked field by field, LOADED, and the
 * warm-up.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"
#include "runner.h"



#define WH_MAX_KINDS 256u
#define WH_MAX_PARAMETERS 64u
#define WH_MAX_CHOICES 256u


static wh_plugin_descriptor g_descriptor; /* zero-extended copy */
loaded_kind *g_kinds;
uint32_t g_kind_count;
uint32_t g_abi_version;
int g_loaded;
int64_t g_sandbox_active;
uint32_t g_mode;  /* wh_sandbox_layer bits in force */


/* Copies min(declared, known) bytes of a plugin struct into a zeroed local:
 * the zero-extension rule. */
void copy_struct(void *dst, size_t known, const void *src, uint32_t declared) {
    memset(dst, 0, known);
    memcpy(dst, src, declared < known ? declared : known);
}

/* In a fork server, once the plugin is loaded: its warm_up, so that every
 * call child starts from the state it leaves (provider.h, wh_warm_up_fn).
 * WARMED tells the host how long it took and how many threads are alive
 * after it; with more than one the server does not serve (the host falls
 * back to a runner per call). A warm_up that crashes or hangs ends or
 * stalls this process before WARMED: the host sees that and starts a
 * server without it. Returns the thread count. */
static uint32_t run_warm_up(wh_warm_up_fn warm_up, const char *data_directory) {
    const char *locale = getenv("WIDGETHOST_LOCALE");
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    wh_warm_up_context context;
    memset(&context, 0, sizeof context);
    context.struct_size = sizeof context;
    context.abi_version = g_abi_version;
    context.now = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9;
    context.locale = locale && locale[0] ? locale : "en-US";
    context.data_directory = data_directory ? data_directory : ".";
    uint64_t start = monotonic_ns();
    warm_up(&context);
    uint64_t elapsed = monotonic_ns() - start;
    fflush(stdout);
    fflush(stderr);
    uint32_t threads = thread_count();
    buffer b = {0};
    buf_u64(&b, elapsed);
    buf_u32(&b, threads);
    if (b.failed) _exit(5);
    send_frame(WH_MSG_WARMED, &b);
    free(b.data);
    return threads;
}

/* The zero-extended copy of parameter `j` of `kind` (SDK 1.0-1.2
 * parameters end before `title`: their title and choices read as zero). */
static wh_parameter parameter_at(const wh_kind *kind, uint32_t j) {
    wh_parameter p;
    const uint8_t *base = (const uint8_t *)kind->parameters;
    const wh_parameter *raw = (const wh_parameter *)(const void *)(base + (size_t)j * kind->parameter_size);
    uint32_t declared = raw->struct_size;
    if (declared > kind->parameter_size) declared = kind->parameter_size;
    copy_struct(&p, sizeof p, raw, declared);
    if (!WH_PARAMETER_HAS_CHOICES(declared)) {
        p.title = NULL;
        p.choice_count = 0;
        p.flags = 0;
        p.choices = NULL;
        p.choice_titles = NULL;
    }
    return p;
}

/* The SDK 1.3 fields of kind `i`'s parameters: at most WH_MAX_CHOICES
 * choices, an array and a string for each. */
static void check_parameters(uint32_t i, const wh_kind *kind) {
    for (uint32_t j = 0; j < kind->parameter_count; j++) {
        wh_parameter p = parameter_at(kind, j);
        if (p.choice_count == 0) continue;
        int bad = p.choice_count > WH_MAX_CHOICES || p.choices == NULL;
        for (uint32_t c = 0; !bad && c < p.choice_count; c++) bad = p.choices[c] == NULL;
        if (bad) {
            char field[64];
            snprintf(field, sizeof field, "kinds[%u].parameters[%u].choices", i, j);
            fail_load(WH_LOAD_INVALID_DESCRIPTOR, "a parameter's choices are invalid", field,
                      fmt("at most %u non-NULL strings, choices set", WH_MAX_CHOICES),
                      fmt("%u choices at %p", p.choice_count, (const void *)p.choices));
        }
    }
}

void handle_load(reader *r) {
    char *path = rd_str(r);
    uint32_t abi_min = rd_u32(r);
    uint32_t abi_max = rd_u32(r);
    char *host_version = rd_str(r);
    wh_sandbox_policy policy;
    memset(&policy, 0, sizeof policy);
    policy.plugin_path = path;
    policy.data_directory = rd_str(r);
    policy.allow_network = rd_u32(r) != 0;
    policy.flags = rd_u32(r);
    policy.address_space_bytes = rd_u64(r);
    policy.cpu_seconds = rd_u64(r);
    policy.open_files = rd_u64(r);
    policy.file_size_bytes = rd_u64(r);
    policy.processes = rd_u64(r);
    uint32_t mode = rd_u32(r);
    policy.fork_server = mode == WH_RUNNER_FORK_SERVER;
    if (mode > WH_RUNNER_WORKER) _exit(4);
    g_mode = mode;
    policy.max_tasks = rd_u64(r);
    policy.extra_read_only = rd_str_list(r);
    policy.extra_read_write = rd_str_list(r);
    uint32_t warm_up_wanted = rd_u32(r);
    if (r->failed) _exit(4);
    if (g_loaded) fail_load(WH_LOAD_DLOPEN_FAILED, "a plugin is already loaded", "", "", "");

    /* The sandbox goes up before any plugin code runs: dlopen runs the
     * plugin's constructors. */
    char sandbox_error[256] = "";
    g_sandbox_active = wh_sandbox_apply(&policy, sandbox_error, sizeof sandbox_error);
    if (g_sandbox_active < 0)
        fail_load(WH_LOAD_SANDBOX_FAILED, sandbox_error, "sandbox", "every available layer applied", "");

    check_elf(path);

    uint64_t start = monotonic_ns();
    dlerror();
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *err = dlerror();
        if (!err) err = "dlopen failed without a message";
        if (strstr(err, "cannot open shared object file"))
            fail_load(WH_LOAD_MISSING_DEPENDENCY, err, "", "", "");
        if (strstr(err, "undefined symbol")) fail_load(WH_LOAD_UNRESOLVED_SYMBOL, err, "", "", "");
        fail_load(WH_LOAD_DLOPEN_FAILED, err, "", "", "");
    }
    dlerror();
    void *symbol = dlsym(handle, WH_ENTRY_SYMBOL);
    if (!symbol) {
        const char *err = dlerror();
        fail_load(WH_LOAD_NO_ENTRY_FUNCTION, err ? err : "symbol not found", "symbol",
                  WH_ENTRY_SYMBOL, "absent");
    }
    wh_entry_function entry;
    memcpy(&entry, &symbol, sizeof entry);

    wh_host_offer offer;
    memset(&offer, 0, sizeof offer);
    offer.struct_size = sizeof offer;
    offer.abi_min = abi_min;
    offer.abi_max = abi_max;
    offer.host_version = host_version;
    const wh_plugin_descriptor *raw = entry(&offer);
    uint64_t load_ns = monotonic_ns() - start;
    if (!raw) {
        fail_load(WH_LOAD_ENTRY_RETURNED_NULL, "widgethost_provider_entry returned NULL", "return value",
                  "a pointer to a wh_plugin_descriptor", "NULL");
    }

    /* Field by field, in the order a reader must trust them. */
    uint32_t declared = raw->struct_size;
    if (declared < WH_V1_DESCRIPTOR_SIZE) {
        char expected[64];
        snprintf(expected, sizeof expected, "at least %zu (sizeof(wh_plugin_descriptor) in ABI v1)",
                 WH_V1_DESCRIPTOR_SIZE);
        fail_load(WH_LOAD_ABI_MISMATCH, "the descriptor is smaller than any ABI version defines",
                  "struct_size", expected, fmt("%u", declared));
    }
    copy_struct(&g_descriptor, sizeof g_descriptor, raw, declared);
    if (g_descriptor.magic != WH_PLUGIN_MAGIC) {
        char expected[32];
        snprintf(expected, sizeof expected, "0x%08x (WH_PLUGIN_MAGIC)", WH_PLUGIN_MAGIC);
        fail_load(WH_LOAD_ABI_MISMATCH, "the descriptor does not start with the widgethost magic",
                  "magic", expected, fmt("0x%08x", g_descriptor.magic));
    }
    if (g_descriptor.abi_version == 0) {
        fail_load(WH_LOAD_PLUGIN_REFUSED,
                  g_descriptor.refusal ? g_descriptor.refusal : "the plugin gave no reason",
                  "abi_version", fmt("%u..%u", abi_min, abi_max), "0 (refused)");
    }
    if (g_descriptor.abi_version < abi_min || g_descriptor.abi_version > abi_max) {
        char expected[32];
        snprintf(expected, sizeof expected, "%u..%u", abi_min, abi_max);
        fail_load(WH_LOAD_ABI_MISMATCH, "the plugin chose an ABI version the host did not offer",
                  "abi_version", expected, fmt("%u", g_descriptor.abi_version));
    }
    g_abi_version = g_descriptor.abi_version;
    struct {
        const char *name;
        uint32_t found;
        size_t minimum;
    } sizes[] = {
        {"kind_size", g_descriptor.kind_size, WH_V1_KIND_SIZE},
        {"entry_size", g_descriptor.entry_size, WH_V1_ENTRY_SIZE},
        {"result_size", g_descriptor.result_size, WH_V1_RESULT_SIZE},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (sizes[i].found < sizes[i].minimum) {
            char expected[64];
            snprintf(expected, sizeof expected, "at least %zu (ABI v1)", sizes[i].minimum);
            fail_load(WH_LOAD_ABI_MISMATCH, "a struct size is smaller than ABI v1 defines",
                      sizes[i].name, expected, fmt("%u", sizes[i].found));
        }
    }
    if (g_descriptor.kind_count == 0 || g_descriptor.kinds == NULL) {
        fail_load(WH_LOAD_INVALID_DESCRIPTOR, "the plugin declares no widget kinds", "kind_count",
                  "at least 1 kind, with kinds pointing to them",
                  fmt("%u kinds, kinds = %s", g_descriptor.kind_count,
                      g_descriptor.kinds ? "set" : "NULL"));
    }
    if (g_descriptor.kind_count > WH_MAX_KINDS) {
        fail_load(WH_LOAD_INVALID_DESCRIPTOR, "the plugin declares too many kinds", "kind_count",
                  fmt("at most %u", WH_MAX_KINDS), fmt("%u", g_descriptor.kind_count));
    }
    g_kind_count = g_descriptor.kind_count;
    g_kinds = calloc(g_kind_count, sizeof *g_kinds);
    if (!g_kinds) _exit(5);
    const uint8_t *base = (const uint8_t *)g_descriptor.kinds;
    for (uint32_t i = 0; i < g_kind_count; i++) {
        const wh_kind *k = (const wh_kind *)(const void *)(base + (size_t)i * g_descriptor.kind_size);
        uint32_t ksize = k->struct_size;
        if (ksize < WH_V1_KIND_SIZE) {
            char field[48];
            snprintf(field, sizeof field, "kinds[%u].struct_size", i);
            fail_load(WH_LOAD_ABI_MISMATCH, "a kind is smaller than ABI v1 defines", field,
                      fmt("at least %zu", WH_V1_KIND_SIZE), fmt("%u", ksize));
        }
        copy_struct(&g_kinds[i].kind, sizeof(wh_kind), k, ksize);
        const wh_kind *kind = &g_kinds[i].kind;
        if (!kind->id || !kind->id[0]) {
            char field[32];
            snprintf(field, sizeof field, "kinds[%u].id", i);
            fail_load(WH_LOAD_INVALID_DESCRIPTOR, "a kind has no id", field,
                      "a non-empty string such as \"com.example.weather\"",
                      kind->id ? "\"\"" : "NULL");
        }
        if (kind->parameter_count > WH_MAX_PARAMETERS ||
            (kind->parameter_count > 0 &&
             (kind->parameters == NULL || kind->parameter_size < WH_V1_PARAMETER_SIZE))) {
            char field[48];
            snprintf(field, sizeof field, "kinds[%u].parameters", i);
            fail_load(WH_LOAD_INVALID_DESCRIPTOR, "a kind's parameter array is invalid", field,
                      fmt("at most %u parameters, each at least %zu bytes, pointer set",
                          WH_MAX_PARAMETERS, WH_V1_PARAMETER_SIZE),
                      fmt("%u parameters of %u bytes at %p", kind->parameter_count,
                          kind->parameter_size, (const void *)kind->parameters));
        }
        check_parameters(i, kind);
    }

    buffer b = {0};
    buf_u32(&b, g_descriptor.abi_version);
    buf_u32(&b, declared);
    buf_str(&b, g_descriptor.id);
    buf_str(&b, g_descriptor.name);
    buf_str(&b, g_descriptor.version);
    buf_str(&b, g_descriptor.vendor);
    buf_str(&b, g_descriptor.sdk_version);
    buf_u64(&b, load_ns);
    uint32_t threads = thread_count();
    buf_u32(&b, threads);
    buf_u32(&b, g_kind_count);
    for (uint32_t i = 0; i < g_kind_count; i++) {
        const wh_kind *k = &g_kinds[i].kind;
        buf_str(&b, k->id);
        buf_str(&b, k->display_name);
        buf_str(&b, k->description);
        buf_u32(&b, k->families);
        buf_u32(&b, k->flags);
        buf_u32(&b, (k->placeholder ? 1u : 0u) | (k->snapshot ? 2u : 0u) | (k->timeline ? 4u : 0u));
        buf_u32(&b, k->parameter_count);
        for (uint32_t j = 0; j < k->parameter_count; j++) {
            wh_parameter p = parameter_at(k, j);
            buf_str(&b, p.name);
            buf_u32(&b, p.type);
            buf_u32(&b, p.default_json ? 1u : 0u);
            buf_str(&b, p.default_json);
            buf_str(&b, p.description);
            buf_str(&b, p.title);
            buf_u32(&b, p.flags);
            buf_u32(&b, p.choice_count);
            for (uint32_t c = 0; c < p.choice_count; c++) {
                buf_str(&b, p.choices[c]);
                buf_str(&b, p.choice_titles ? p.choice_titles[c] : NULL);
            }
        }
    }
    wh_warm_up_fn warm_up = WH_DESCRIPTOR_HAS_WARM_UP(declared) ? g_descriptor.warm_up : NULL;
    buf_u32(&b, warm_up ? 1u : 0u);
    templates_append(&b, handle);
    if (b.failed) _exit(5);
    send_frame(WH_MSG_LOADED, &b);
    free(b.data);
    g_loaded = 1;
    free(path);
    free(host_version);
    /* fork() copies only the calling thread: a plugin that started threads
     * while loading cannot be forked safely. The host sees the thread count
     * in LOADED and uses one runner per call instead. */
    /* A warm worker runs the warm-up once and then answers every call
     * itself (main's loop): threads are no obstacle, nothing is forked. */
    if (mode == WH_RUNNER_WORKER && warm_up && warm_up_wanted) run_warm_up(warm_up, policy.data_directory);
    if (mode == WH_RUNNER_WORKER && prefault_enabled()) prefault_worker();
    if (policy.fork_server && threads == 1) {
        if (warm_up && warm_up_wanted) threads = run_warm_up(warm_up, policy.data_directory);
        if (threads == 1) {
            free((char *)policy.data_directory);
            serve();
            return;
        }
    }
    free((char *)policy.data_directory);
}

