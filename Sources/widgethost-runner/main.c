/*
 * widgethost-runner — the child process that loads one provider plugin and
 * calls it on the host's behalf.
 *
 * No plugin code ever runs in the host: `dlopen` (which runs the plugin's
 * constructors) and every entry-point call happen here. The host talks to
 * this process over the framed protocol of widgethost_wire.h on fd 3; the
 * plugin's stdout and stderr are pipes the host reads separately, so
 * nothing a plugin prints can corrupt the protocol.
 *
 * This program is deliberately small, single-threaded (plugins may start
 * threads; the runner itself never does) and free of anything that breaks
 * after fork(), so that the fork server can reuse it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"
#include "virtual_clock.h"
#include "widgethost_wire.h"
#include <widgethost/provider.h>

/* ------------------------------------------------------------------ */
/* Growable byte buffer with little-endian field writers               */
/* ------------------------------------------------------------------ */

typedef struct buffer {
    uint8_t *data;
    size_t length;
    size_t capacity;
    int failed; /* allocation failed */
} buffer;

static void buf_reserve(buffer *b, size_t extra) {
    if (b->failed) return;
    if (b->length + extra <= b->capacity) return;
    size_t cap = b->capacity ? b->capacity : 4096;
    while (cap < b->length + extra) cap *= 2;
    uint8_t *grown = realloc(b->data, cap);
    if (!grown) {
        b->failed = 1;
        return;
    }
    b->data = grown;
    b->capacity = cap;
}

static void buf_bytes(buffer *b, const void *bytes, size_t count) {
    buf_reserve(b, count);
    if (b->failed) return;
    if (count) memcpy(b->data + b->length, bytes, count);
    b->length += count;
}

static void buf_u32(buffer *b, uint32_t v) {
    uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    buf_bytes(b, le, 4);
}

static void buf_u64(buffer *b, uint64_t v) {
    buf_u32(b, (uint32_t)v);
    buf_u32(b, (uint32_t)(v >> 32));
}

static void buf_f64(buffer *b, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    buf_u64(b, bits);
}

static void buf_strn(buffer *b, const char *s, size_t n) {
    if (!s) n = 0;
    if (n > UINT32_MAX) n = UINT32_MAX;
    buf_u32(b, (uint32_t)n);
    buf_bytes(b, s, n);
}

static void buf_str(buffer *b, const char *s) { buf_strn(b, s, s ? strlen(s) : 0); }

/* ------------------------------------------------------------------ */
/* Reader over a received payload                                      */
/* ------------------------------------------------------------------ */

typedef struct reader {
    const uint8_t *data;
    size_t length;
    size_t offset;
    int failed;
} reader;

static uint32_t rd_u32(reader *r) {
    if (r->failed || r->length - r->offset < 4) {
        r->failed = 1;
        return 0;
    }
    const uint8_t *p = r->data + r->offset;
    r->offset += 4;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd_u64(reader *r) {
    uint64_t lo = rd_u32(r);
    uint64_t hi = rd_u32(r);
    return lo | hi << 32;
}

static double rd_f64(reader *r) {
    uint64_t bits = rd_u64(r);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* Returns a malloc'd NUL-terminated copy (never NULL unless failed). */
static char *rd_str(reader *r) {
    uint32_t n = rd_u32(r);
    if (r->failed || r->length - r->offset < n) {
        r->failed = 1;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        r->failed = 1;
        return NULL;
    }
    memcpy(s, r->data + r->offset, n);
    s[n] = 0;
    r->offset += n;
    return s;
}

/* u32 count, then that many str: a malloc'd NULL-terminated array. */
static char **rd_str_list(reader *r) {
    uint32_t n = rd_u32(r);
    if (r->failed || n > WH_SANDBOX_MAX_EXTRA_PATHS) {
        r->failed = 1;
        return NULL;
    }
    char **list = calloc((size_t)n + 1, sizeof *list);
    if (!list) {
        r->failed = 1;
        return NULL;
    }
    for (uint32_t i = 0; i < n && !r->failed; i++) list[i] = rd_str(r);
    return list;
}

/* ------------------------------------------------------------------ */
/* Framing on fd 3                                                     */
/* ------------------------------------------------------------------ */

static int write_all(int fd, const void *data, size_t n) {
    const uint8_t *p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* 1 = read everything, 0 = clean EOF before any byte, -1 = error/short. */
static int read_all(int fd, void *data, size_t n) {
    uint8_t *p = data;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (r == 0) return got == 0 ? 0 : -1;
        got += (size_t)r;
    }
    return 1;
}

static void send_frame(uint16_t type, const buffer *payload) {
    uint8_t header[WH_WIRE_HEADER_SIZE];
    uint32_t fields[4] = {WH_WIRE_MAGIC, (uint32_t)WH_WIRE_VERSION | (uint32_t)type << 16,
                          (uint32_t)payload->length, 0};
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 4; k++) header[i * 4 + k] = (uint8_t)(fields[i] >> (8 * k));
    /* One writev: the reader wakes once, for the whole frame. */
    struct iovec iov[2] = {{header, sizeof header}, {payload->data, payload->length}};
    size_t total = sizeof header + payload->length;
    ssize_t n;
    do n = writev(WH_WIRE_FD, iov, payload->length ? 2 : 1);
    while (n < 0 && errno == EINTR);
    if (n < 0) _exit(3); /* the host is gone or the socket is broken */
    if ((size_t)n < total) {
        /* A partial write (a large result and a full socket buffer). */
        size_t done = (size_t)n;
        if (done < sizeof header) {
            if (write_all(WH_WIRE_FD, header + done, sizeof header - done) != 0) _exit(3);
            done = sizeof header;
        }
        if (write_all(WH_WIRE_FD, payload->data + (done - sizeof header), total - done) != 0) _exit(3);
    }
}

/* Returns 1 and a malloc'd payload, or 0 on EOF. Exits on a protocol error. */
static int recv_frame(uint16_t *type, uint8_t **payload, uint32_t *length) {
    uint8_t header[WH_WIRE_HEADER_SIZE];
    int r = read_all(WH_WIRE_FD, header, sizeof header);
    if (r == 0) return 0;
    if (r < 0) _exit(3);
    uint32_t magic = (uint32_t)header[0] | (uint32_t)header[1] << 8 | (uint32_t)header[2] << 16 |
                     (uint32_t)header[3] << 24;
    uint16_t version = (uint16_t)(header[4] | header[5] << 8);
    *type = (uint16_t)(header[6] | header[7] << 8);
    *length = (uint32_t)header[8] | (uint32_t)header[9] << 8 | (uint32_t)header[10] << 16 |
              (uint32_t)header[11] << 24;
    if (magic != WH_WIRE_MAGIC || version != WH_WIRE_VERSION || *length > WH_WIRE_MAX_PAYLOAD) {
        _exit(4);
    }
    *payload = malloc(*length ? *length : 1);
    if (!*payload) _exit(5);
    if (*length && read_all(WH_WIRE_FD, *payload, *length) != 1) _exit(3);
    return 1;
}

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static uint64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t timeval_ns(struct timeval t) {
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_usec * 1000u;
}

static uint32_t thread_count(void) {
    FILE *f = fopen("/proc/self/status", "re");
    if (!f) return 0;
    char line[256];
    uint32_t n = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "Threads:", 8) == 0) {
            n = (uint32_t)strtoul(line + 8, NULL, 10);
            break;
        }
    }
    fclose(f);
    return n;
}

static char scratch[512];

static const char *fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));
static const char *fmt(const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    vsnprintf(scratch, sizeof scratch, format, ap);
    va_end(ap);
    return scratch;
}

/* LOAD_FAILED: code, detail, field, expected, found. Then exit: a runner
 * that failed to load has nothing more to do. */
static void fail_load(wh_load_failure code, const char *detail, const char *field,
                      const char *expected, const char *found) {
    buffer b = {0};
    buf_u32(&b, (uint32_t)code);
    buf_str(&b, detail);
    buf_str(&b, field);
    buf_str(&b, expected);
    buf_str(&b, found);
    send_frame(WH_MSG_LOAD_FAILED, &b);
    _exit(0);
}

static void fail_call(wh_call_failure code, const char *detail, uint64_t found, uint64_t limit) {
    buffer b = {0};
    buf_u32(&b, (uint32_t)code);
    buf_str(&b, detail);
    buf_u64(&b, found);
    buf_u64(&b, limit);
    send_frame(WH_MSG_CALL_FAILED, &b);
}

static const char *machine_name(unsigned machine) {
    switch (machine) {
    case EM_X86_64: return "x86-64";
    case EM_386: return "i386";
    case EM_AARCH64: return "AArch64";
    case EM_ARM: return "ARM";
    case EM_RISCV: return "RISC-V";
    case EM_PPC64: return "PowerPC64";
    case EM_S390: return "s390";
    default: return NULL;
    }
}

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#elif defined(__riscv)
#define HOST_MACHINE EM_RISCV
#else
#define HOST_MACHINE 0
#endif

/* ------------------------------------------------------------------ */
/* Loading                                                             */
/* ------------------------------------------------------------------ */

/* The smallest struct sizes ABI v1 accepts: v1 is the first version, so
 * these are the v1 sizes. A later ABI appends fields; an older plugin's
 * smaller struct is then zero-extended (see docs/abi.md). */
#define WH_V1_DESCRIPTOR_SIZE WH_DESCRIPTOR_SIZE_V1_0
#define WH_V1_KIND_SIZE sizeof(wh_kind)
#define WH_V1_PARAMETER_SIZE sizeof(wh_parameter)
#define WH_V1_ENTRY_SIZE sizeof(wh_entry)
#define WH_V1_RESULT_SIZE sizeof(wh_result)
#define WH_MAX_KINDS 256u
#define WH_MAX_PARAMETERS 64u

typedef struct loaded_kind {
    wh_kind kind; /* zero-extended copy */
} loaded_kind;

static wh_plugin_descriptor g_descriptor; /* zero-extended copy */
static loaded_kind *g_kinds;
static uint32_t g_kind_count;
static uint32_t g_abi_version;
static int g_loaded;
static int64_t g_sandbox_active;  /* wh_sandbox_layer bits in force */
static int g_call_child;          /* this process is a fork server's call child */
static void serve(void);

/* Copies min(declared, known) bytes of a plugin struct into a zeroed local:
 * the zero-extension rule. */
static void copy_struct(void *dst, size_t known, const void *src, uint32_t declared) {
    memset(dst, 0, known);
    memcpy(dst, src, declared < known ? declared : known);
}

static void check_elf(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        int e = errno;
        if (e == ENOENT || e == ENOTDIR)
            fail_load(WH_LOAD_FILE_NOT_FOUND, strerror(e), "path", "an existing file", path);
        fail_load(WH_LOAD_NOT_READABLE, strerror(e), "path", "a readable file", path);
    }
    if (!S_ISREG(st.st_mode))
        fail_load(WH_LOAD_NOT_ELF, "not a regular file", "file type", "a regular file",
                  S_ISDIR(st.st_mode) ? "a directory" : "a special file");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fail_load(WH_LOAD_NOT_READABLE, strerror(errno), "path", "a readable file", path);
    }
    Elf64_Ehdr header;
    memset(&header, 0, sizeof header);
    ssize_t n = read(fd, &header, sizeof header);
    close(fd);
    if (n < 0) fail_load(WH_LOAD_NOT_READABLE, strerror(errno), "path", "a readable file", path);
    if (n < 4 || memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
        char found[64];
        if (n == 0) {
            snprintf(found, sizeof found, "an empty file (0 bytes)");
        } else {
            /* Show the first bytes, printable characters as they are. */
            size_t k = 0;
            k += (size_t)snprintf(found + k, sizeof found - k, "starts with \"");
            for (ssize_t i = 0; i < n && i < 8 && k < sizeof found - 8; i++) {
                unsigned char c = header.e_ident[i];
                if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
                    found[k++] = (char)c;
                else
                    k += (size_t)snprintf(found + k, sizeof found - k, "\\x%02x", c);
            }
            snprintf(found + k, sizeof found - k, "\"");
        }
        fail_load(WH_LOAD_NOT_ELF, "the file has no ELF header", "ELF magic",
                  "\\x7fELF (a shared object built for Linux)", found);
    }
    if ((size_t)n < sizeof header) {
        fail_load(WH_LOAD_NOT_ELF, "the ELF header is truncated", "ELF header size",
                  fmt("%zu bytes", sizeof header), fmt("%zd bytes", n));
    }
    if (header.e_ident[EI_CLASS] != ELFCLASS64) {
        fail_load(WH_LOAD_WRONG_MACHINE, "the file is a 32-bit ELF object", "ELF class",
                  "ELFCLASS64 (64-bit)", "ELFCLASS32 (32-bit)");
    }
    if (HOST_MACHINE != 0 && header.e_machine != HOST_MACHINE) {
        const char *found = machine_name(header.e_machine);
        char expected[64];
        snprintf(expected, sizeof expected, "%s (e_machine %u)", machine_name(HOST_MACHINE),
                 (unsigned)HOST_MACHINE);
        fail_load(WH_LOAD_WRONG_MACHINE, "the shared object was built for another architecture",
                  "ELF machine", expected,
                  found ? fmt("%s (e_machine %u)", found, (unsigned)header.e_machine)
                        : fmt("e_machine %u", (unsigned)header.e_machine));
    }
    if (header.e_type != ET_DYN) {
        fail_load(WH_LOAD_NOT_SHARED_OBJECT, "the file is an ELF object but not a shared object",
                  "ELF type", "ET_DYN (built with -shared)",
                  header.e_type == ET_EXEC  ? "ET_EXEC (an executable)"
                  : header.e_type == ET_REL ? "ET_REL (an object file: link it with -shared)"
                                            : fmt("e_type %u", (unsigned)header.e_type));
    }
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

static void handle_load(reader *r) {
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
        const uint8_t *pbase = (const uint8_t *)k->parameters;
        for (uint32_t j = 0; j < k->parameter_count; j++) {
            wh_parameter p;
            const wh_parameter *raw_p =
                (const wh_parameter *)(const void *)(pbase + (size_t)j * k->parameter_size);
            copy_struct(&p, sizeof p, raw_p, raw_p->struct_size);
            buf_str(&b, p.name);
            buf_u32(&b, p.type);
            buf_u32(&b, p.default_json ? 1u : 0u);
            buf_str(&b, p.default_json);
            buf_str(&b, p.description);
        }
    }
    wh_warm_up_fn warm_up = WH_DESCRIPTOR_HAS_WARM_UP(declared) ? g_descriptor.warm_up : NULL;
    buf_u32(&b, warm_up ? 1u : 0u);
    if (b.failed) _exit(5);
    send_frame(WH_MSG_LOADED, &b);
    free(b.data);
    g_loaded = 1;
    free(path);
    free(host_version);
    /* fork() copies only the calling thread: a plugin that started threads
     * while loading cannot be forked safely. The host sees the thread count
     * in LOADED and uses one runner per call instead. */
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

/* ------------------------------------------------------------------ */
/* Fork server                                                         */
/* ------------------------------------------------------------------ */

/* In a call child: the write end of the pipe that tells the server this
 * child has read its CALL (closed before any plugin code runs). */
static int g_notify_fd = -1;

/* Prefaulting the standby.
 *
 * fork() does not copy the page-table entries of file-backed mappings that
 * were never written (the Swift runtime's, Foundation's and ICU's code and
 * read-only data), so a call child faults them in again, 16 pages at a
 * time; and every heap page it writes is a copy-on-write fault. Both cost
 * more than the provider itself. Populating every executable mapping in each
 * standby costs milliseconds and, with calls back to back, delays the next
 * call; so the first call child of a server records which pages its call
 * touched (/proc/self/pagemap, just before it sends its answer), and every
 * later standby populates only those, before the server announces it:
 * MADV_POPULATE_READ for file pages, MADV_POPULATE_WRITE (a copy-on-write
 * break that keeps the contents) for private writable pages the call wrote.
 * No plugin code runs in a standby: this only maps memory the server already
 * has, and every call still starts from the server's state. Best effort:
 * nothing happens when /proc is unreadable or the kernel (< 5.14) lacks the
 * advice. */

#define WH_MADV_POPULATE_READ 22
#define WH_MADV_POPULATE_WRITE 23
#define WH_PREFAULT_MAX_PAGES (1u << 22) /* 16 GiB of mappings: give up beyond */

typedef struct prefault_region {
    uintptr_t start, end;
    int write; /* private writable: record written pages, populate for writing */
    int prot;  /* its protection, from /proc/self/maps */
    int forked_with_ptes; /* has an anon_vma: fork copies its page-table entries */
    size_t first_bit;
} prefault_region;

typedef struct prefault_run {
    uintptr_t start;
    size_t length;
    int advice;
} prefault_run;

static prefault_region *g_regions; /* the server's mappings, parsed once */
static size_t g_region_count;
static size_t g_region_pages;
/* Shared with the training child: a done flag (first 8 bytes), then one bit
 * per page of g_regions. Unmapped once the server has read it. */
static uint8_t *g_training;
static size_t g_training_size;
static int g_train;         /* in a call child: record the pages the call touched */
static prefault_run *g_runs; /* the server's plan, inherited by each standby */
static size_t g_run_count;

static void prefault_parse_maps(void) {
    FILE *maps = fopen("/proc/self/maps", "re");
    if (!maps) return;
    char line[512];
    size_t capacity = 0;
    while (fgets(line, sizeof line, maps)) {
        unsigned long start, end;
        char perms[8];
        int path_at = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &start, &end, perms, &path_at) < 3) continue;
        if (perms[0] != 'r' || perms[3] != 'p') continue;
        int file = path_at > 0 && line[path_at] == '/';
        int write = perms[1] == 'w';
        /* Read-only anonymous mappings ([vvar], guard areas) are skipped. */
        if (!write && !file) continue;
        size_t pages = (end - start) / 4096;
        if (g_region_pages + pages > WH_PREFAULT_MAX_PAGES) continue;
        if (g_region_count == capacity) {
            capacity = capacity ? capacity * 2 : 64;
            prefault_region *grown = realloc(g_regions, capacity * sizeof *g_regions);
            if (!grown) break;
            g_regions = grown;
        }
        int prot = PROT_READ | (write ? PROT_WRITE : 0) | (perms[2] == 'x' ? PROT_EXEC : 0);
        g_regions[g_region_count++] = (prefault_region){start, end, write, prot, 0, g_region_pages};
        g_region_pages += pages;
    }
    fclose(maps);
    if (g_region_count == 0) return;
    g_training_size = 8 + (g_region_pages + 7) / 8;
    void *shared = mmap(NULL, g_training_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    g_training = shared == MAP_FAILED ? NULL : shared;
}

/* In the training child, with the call answered: the file pages present and
 * the private writable pages this process owns alone (written since the
 * fork) are the pages a call needs. */
static void prefault_record(void) {
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    uint64_t entries[512];
    uint8_t *bits = g_training + 8;
    for (size_t i = 0; i < g_region_count; i++) {
        const prefault_region *r = &g_regions[i];
        size_t pages = (r->end - r->start) / 4096;
        for (size_t done = 0; done < pages;) {
            size_t want = pages - done < 512 ? pages - done : 512;
            ssize_t got = pread(fd, entries, want * 8, (off_t)((r->start / 4096 + done) * 8));
            if (got <= 0) break;
            size_t count = (size_t)got / 8;
            for (size_t k = 0; k < count; k++) {
                uint64_t e = entries[k];
                int present = (e >> 63) & 1;
                int exclusive = (e >> 56) & 1;
                if (present && (!r->write || exclusive)) {
                    size_t bit = r->first_bit + done + k;
                    bits[bit / 8] |= (uint8_t)(1u << (bit % 8));
                }
            }
            done += count;
        }
    }
    close(fd);
    __atomic_store_n((uint64_t *)(void *)g_training, 1, __ATOMIC_RELEASE);
}

/* Whether every page present in the mapping is a file page (pagemap bit
 * 61): a read-only mapping that was written before (relocations made
 * read-only again, RELRO) has anonymous pages and is left alone. */
static int only_file_pages(const prefault_region *r) {
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    uint64_t entries[512];
    size_t pages = (r->end - r->start) / 4096;
    int ok = 1;
    for (size_t done = 0; done < pages && ok;) {
        size_t want = pages - done < 512 ? pages - done : 512;
        ssize_t got = pread(fd, entries, want * 8, (off_t)((r->start / 4096 + done) * 8));
        if (got <= 0) {
            ok = 0;
            break;
        }
        for (size_t k = 0; k < (size_t)got / 8; k++) {
            if (((entries[k] >> 63) & 1) && !((entries[k] >> 61) & 1)) ok = 0;
        }
        done += (size_t)got / 8;
    }
    close(fd);
    return ok;
}

/* fork() copies the page-table entries of a mapping only if it has an
 * anon_vma (it was written to once), so the file pages a call reads would be
 * faulted in again by every child. Give each file mapping with pages in the
 * plan an anon_vma (make the whole mapping writable for a moment and write
 * its first byte back: a private copy of one page; protecting only that page
 * would split the mapping, and the parts are not merged back), drop its
 * other entries (fork's cost grows with them), populate the plan's pages
 * once here, and every standby inherits them with fork: no per-standby work
 * for them. Runs done here are dropped from the standbys' plan; a mapping
 * where this fails keeps its runs. */
static void prefault_in_server(void) {
    size_t kept = 0;
    for (size_t i = 0, r = 0; i < g_run_count; i++) {
        prefault_run run = g_runs[i];
        if (run.advice != WH_MADV_POPULATE_READ) {
            g_runs[kept++] = run;
            continue;
        }
        while (r < g_region_count && g_regions[r].end <= run.start) r++;
        if (r == g_region_count || g_regions[r].write || g_regions[r].start > run.start) {
            g_runs[kept++] = run;
            continue;
        }
        prefault_region *region = &g_regions[r];
        if (!region->forked_with_ptes) {
            if (!only_file_pages(region)) {
                g_runs[kept++] = run;
                continue;
            }
            volatile uint8_t *first = (volatile uint8_t *)region->start;
            size_t size = region->end - region->start;
            if (mprotect((void *)region->start, size, region->prot | PROT_WRITE) != 0) {
                g_runs[kept++] = run;
                continue;
            }
            *first = *first;
            mprotect((void *)region->start, size, region->prot);
            /* fork copies every entry present in the mapping: keep only the
             * plan's (file pages: dropping them loses nothing). */
            if (size > 4096) madvise((void *)(region->start + 4096), size - 4096, MADV_DONTNEED);
            region->forked_with_ptes = 1;
        }
        if (madvise((void *)run.start, run.length, WH_MADV_POPULATE_READ) != 0) g_runs[kept++] = run;
    }
    g_run_count = kept;
}

/* In the server, once the training child is reaped: turns its bits into the
 * plan later standbys follow. Returns 0 when there was nothing to read (the
 * child died before recording). */
static int prefault_learn(void) {
    if (__atomic_load_n((uint64_t *)(void *)g_training, __ATOMIC_ACQUIRE) != 1) return 0;
    const uint8_t *bits = g_training + 8;
    size_t capacity = 0;
    for (size_t i = 0; i < g_region_count; i++) {
        const prefault_region *r = &g_regions[i];
        size_t pages = (r->end - r->start) / 4096;
        /* File pages: neighbouring runs a few pages apart are merged (a
         * fault maps 16 pages around it anyway). Written pages: exact. */
        size_t gap = r->write ? 0 : 8;
        for (size_t p = 0; p < pages; p++) {
            size_t bit = r->first_bit + p;
            if (!(bits[bit / 8] & (1u << (bit % 8)))) continue;
            uintptr_t address = r->start + p * 4096;
            prefault_run *last = g_run_count ? &g_runs[g_run_count - 1] : NULL;
            if (last && last->advice == (r->write ? WH_MADV_POPULATE_WRITE : WH_MADV_POPULATE_READ) &&
                address >= last->start + last->length && address - (last->start + last->length) <= gap * 4096 &&
                address < r->end && last->start >= r->start) {
                last->length = address + 4096 - last->start;
                continue;
            }
            if (g_run_count == capacity) {
                capacity = capacity ? capacity * 2 : 256;
                prefault_run *grown = realloc(g_runs, capacity * sizeof *g_runs);
                if (!grown) return 1;
                g_runs = grown;
            }
            g_runs[g_run_count++] =
                (prefault_run){address, 4096, r->write ? WH_MADV_POPULATE_WRITE : WH_MADV_POPULATE_READ};
        }
    }
    prefault_in_server();
    return 1;
}

/* In a standby, before it waits for its baton. */
static void prefault(void) {
    for (size_t i = 0; i < g_run_count; i++)
        madvise((void *)g_runs[i].start, g_runs[i].length, g_runs[i].advice);
}

/* Forks a call child with its own channel: a new socketpair whose other
 * end the server passes to the host in CHILD_STARTED (SCM_RIGHTS, with a
 * pidfd of the child). The server's fd 3 is written by the server alone,
 * each child's fd 3 by that child alone, so nothing ever interleaves and
 * the next child never waits for the previous one to be reaped. In the
 * server returns the child's pid, *notify (read end: one byte when the
 * child has read its CALL, EOF if it died first) and *pidfd. Returns 0 in
 * the child, with its own socket as fd 3. */
static int g_train_pending; /* in the server: the next child forked trains */
static pid_t g_trainer;

static void send_child_started(pid_t pid, int host_end, int pidfd) {
    uint8_t frame[WH_WIRE_HEADER_SIZE + 4];
    uint32_t fields[5] = {WH_WIRE_MAGIC, (uint32_t)WH_WIRE_VERSION | (uint32_t)WH_MSG_CHILD_STARTED << 16, 4u, 0u,
                          (uint32_t)pid};
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < 4; k++) frame[i * 4 + k] = (uint8_t)(fields[i] >> (8 * k));
    /* The descriptors travel with the frame's first byte; the rest of the
     * frame follows in the same message. */
    int fds[2] = {host_end, pidfd};
    struct iovec iov = {frame, sizeof frame};
    union {
        char buf[CMSG_SPACE(sizeof fds)];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof control.buf};
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(cmsg), fds, sizeof fds);
    ssize_t sent;
    do sent = sendmsg(WH_WIRE_FD, &msg, MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    if (sent < 0) _exit(3);
    if ((size_t)sent < sizeof frame && write_all(WH_WIRE_FD, frame + sent, sizeof frame - (size_t)sent) != 0)
        _exit(3);
}

static pid_t fork_child(pid_t server, int *notify, int *pidfd) {
    int channel[2], notify_pipe[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, channel) != 0 ||
        pipe2(notify_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        _exit(8);
    fflush(stdout);
    fflush(stderr);
    /* EAGAIN: the pids cgroup is full, e.g. of the current call's fork
     * bomb; the host kills that call's group at its deadline, so retry
     * (for at most a minute) instead of ending the server. */
    pid_t pid;
    for (int tries = 0; (pid = fork()) < 0 && errno == EAGAIN && tries < 6000; tries++) usleep(10 * 1000);
    if (pid < 0) _exit(8);
    if (pid > 0) {
        close(channel[1]);
        close(notify_pipe[1]);
        *notify = notify_pipe[0];
        *pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (*pidfd < 0) _exit(8);
        if (g_train_pending) {
            g_trainer = pid;
            g_train_pending = 0;
        }
        /* The host's end is non-blocking (a flag of the open file, which
         * the host's copy shares): the host never blocks on a child. */
        if (fcntl(channel[0], F_SETFL, fcntl(channel[0], F_GETFL) | O_NONBLOCK) != 0) _exit(8);
        send_child_started(pid, channel[0], *pidfd);
        close(channel[0]);
        return pid;
    }
    g_train = g_train_pending;
    close(channel[0]);
    close(notify_pipe[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != server) _exit(7);
    /* Its own process group, so a timeout kills the child and all it
     * started while the server lives on; then seal setpgid/setsid as a
     * spawned runner's filter does. */
    if (setpgid(0, 0) != 0) _exit(9);
    if ((g_sandbox_active & WH_SANDBOX_SECCOMP) && wh_sandbox_seal_process_group() != 0) _exit(9);
    /* Its own channel replaces the server's, its notify pipe goes to fd 4,
     * and everything else the server holds (the other children's pidfds
     * and pipes) is closed. */
    if (dup2(channel[1], WH_WIRE_FD) < 0 || dup2(notify_pipe[1], WH_WIRE_FD + 1) < 0) _exit(8);
    if (syscall(SYS_close_range, WH_WIRE_FD + 2, ~0u, 0) != 0) _exit(8);
    /* Only the training child writes the shared page list. */
    if (!g_train && g_training) munmap(g_training, g_training_size);
    if (!g_train) prefault();
    g_notify_fd = WH_WIRE_FD + 1;
    g_call_child = 1;
    return 0;
}

typedef struct live_child {
    pid_t pid;
    int pidfd;
    int notify; /* while it may be a standby: the read end of its pipe; then -1 */
    int ended;  /* the host said CALL_ENDED for it (it is being killed) */
} live_child;

/* Whether a child still waits for its call: its pipe is read only when the
 * server has something to decide (never polled, so taking a call does not
 * wake the server). One byte: it took a call. EOF without it: it died
 * before one. Counts early deaths; a server whose children keep dying
 * before any call gives up. */
static int still_standby(live_child *child, int *early_deaths) {
    if (child->notify < 0) return 0;
    char c;
    ssize_t n;
    do n = read(child->notify, &c, 1);
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN) return 1;
    close(child->notify);
    child->notify = -1;
    *early_deaths = n == 1 ? 0 : *early_deaths + 1;
    if (*early_deaths > 5) _exit(9);
    return 0;
}

#define WH_MAX_LIVE_CHILDREN 32

/* The server: reads only CALL_ENDED from fd 3 and never calls plugin code
 * (its warm_up aside, before this). It keeps WH_FORK_SERVER_STANDBYS
 * standby children announced to the host. When one takes a call, its
 * replacement is forked once no call is running (the host said CALL_ENDED
 * for every child that took one, or they exited), so the fork and the
 * standby's prefault do not compete with the call for a CPU; if no standby
 * is left, at once. Children are reaped as they exit (CHILD_EXITED, with
 * the wait status). Exits when the host closes the channel. Returns only
 * in a child, which goes back to main's loop to read its CALL on its own
 * channel. */
static void serve(void) {
    pid_t server = getpid();
    prefault_parse_maps();
    g_train_pending = g_training != NULL;
    live_child live[WH_MAX_LIVE_CHILDREN];
    size_t live_count = 0;
    int early_deaths = 0;
    for (;;) {
        size_t standbys = 0, calling = 0;
        for (size_t i = 0; i < live_count; i++) {
            int standby = still_standby(&live[i], &early_deaths);
            standbys += standby;
            calling += !standby && !live[i].ended;
        }
        if (live_count < WH_MAX_LIVE_CHILDREN && standbys < WH_FORK_SERVER_STANDBYS &&
            (standbys == 0 || calling == 0)) {
            int notify = -1, pidfd = -1;
            pid_t pid = fork_child(server, &notify, &pidfd);
            if (pid == 0) return;
            live[live_count++] = (live_child){pid, pidfd, notify, 0};
            continue;
        }
        struct pollfd fds[1 + WH_MAX_LIVE_CHILDREN];
        fds[0] = (struct pollfd){WH_WIRE_FD, POLLIN, 0}; /* CALL_ENDED; POLLHUP: the host closed it */
        for (size_t i = 0; i < live_count; i++) fds[1 + i] = (struct pollfd){live[i].pidfd, POLLIN, 0};
        if (poll(fds, 1 + live_count, -1) < 0) {
            if (errno == EINTR) continue;
            _exit(8);
        }
        if (fds[0].revents & POLLIN) {
            uint16_t type;
            uint8_t *payload;
            uint32_t length;
            if (!recv_frame(&type, &payload, &length)) _exit(0); /* EOF: the host closed it */
            if (type != WH_MSG_CALL_ENDED || length != 4) _exit(4);
            pid_t pid = (pid_t)((uint32_t)payload[0] | (uint32_t)payload[1] << 8 | (uint32_t)payload[2] << 16 |
                                (uint32_t)payload[3] << 24);
            free(payload);
            for (size_t i = 0; i < live_count; i++)
                if (live[i].pid == pid) live[i].ended = 1;
        } else if (fds[0].revents & (POLLHUP | POLLERR)) {
            _exit(0);
        }
        size_t kept = 0;
        for (size_t i = 0; i < live_count; i++) {
            if (!fds[1 + i].revents) {
                live[kept++] = live[i];
                continue;
            }
            pid_t pid = live[i].pid;
            int status = 0;
            struct rusage usage;
            while (wait4(pid, &status, 0, &usage) < 0) {
                if (errno != EINTR) _exit(8);
            }
            close(live[i].pidfd);
            still_standby(&live[i], &early_deaths); /* reads and closes its pipe */
            if (pid == g_trainer) {
                g_trainer = 0;
                if (prefault_learn()) {
                    munmap(g_training, g_training_size);
                    g_training = NULL;
                } else {
                    g_train_pending = 1; /* it died first: the next child records */
                }
            }
            buffer b = {0};
            buf_u32(&b, (uint32_t)pid);
            buf_u32(&b, (uint32_t)status);
            buf_u64(&b, timeval_ns(usage.ru_utime) + timeval_ns(usage.ru_stime));
            struct timespec own;
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &own);
            buf_u64(&b, (uint64_t)own.tv_sec * 1000000000u + (uint64_t)own.tv_nsec);
            send_frame(WH_MSG_CHILD_EXITED, &b);
            free(b.data);
        }
        live_count = kept;
    }
}

/* ------------------------------------------------------------------ */
/* Calling                                                             */
/* ------------------------------------------------------------------ */

typedef struct call_state {
    pthread_mutex_t lock;
    pthread_cond_t done_cond;
    int done;
    uint32_t duplicates;
    pthread_t caller;
    uint64_t started_ns;
    /* Filled by the completion: either a RESULT payload or a failure. */
    buffer payload;
    int failure; /* 0, or a wh_call_failure */
    char failure_detail[256];
    uint64_t failure_found;
    uint64_t failure_limit;
} call_state;

static void set_failure(call_state *s, wh_call_failure code, uint64_t found, uint64_t limit,
                        const char *detail) {
    s->failure = (int)code;
    s->failure_found = found;
    s->failure_limit = limit;
    snprintf(s->failure_detail, sizeof s->failure_detail, "%s", detail);
}

/* Copies the plugin's result into the payload. Runs on whatever thread the
 * plugin completes on, with the state's lock held. */
static void encode_result(call_state *s, const wh_result *raw, uint64_t elapsed_ns) {
    if (!raw) {
        set_failure(s, WH_CALL_NULL_RESULT, 0, 0, "the completion was called with a NULL result");
        return;
    }
    if (raw->struct_size < WH_V1_RESULT_SIZE) {
        set_failure(s, WH_CALL_BAD_RESULT_STRUCT, raw->struct_size, WH_V1_RESULT_SIZE,
                    "wh_result.struct_size is smaller than ABI v1's sizeof(wh_result)");
        return;
    }
    wh_result result;
    copy_struct(&result, sizeof result, raw, raw->struct_size);
    uint32_t count = result.status == WH_STATUS_OK ? result.entry_count : 0;
    if (count > WH_LIMIT_MAX_ENTRIES) {
        set_failure(s, WH_CALL_TOO_MANY_ENTRIES, count, WH_LIMIT_MAX_ENTRIES,
                    "the result has more entries than the host accepts");
        return;
    }
    if (count > 0 && (result.entries == NULL || result.entry_size < WH_V1_ENTRY_SIZE)) {
        set_failure(s, WH_CALL_BAD_RESULT_STRUCT, result.entry_size, WH_V1_ENTRY_SIZE,
                    result.entries == NULL ? "wh_result.entries is NULL but entry_count > 0"
                                           : "wh_result.entry_size is smaller than ABI v1's "
                                             "sizeof(wh_entry)");
        return;
    }
    buffer *b = &s->payload;
    b->length = 0;
    buf_u32(b, (uint32_t)result.status);
    buf_u32(b, result.policy);
    buf_f64(b, result.policy_date);
    buf_u32(b, (uint32_t)result.error_code);
    buf_str(b, result.status == WH_STATUS_OK ? NULL : result.error_message);
    buf_u64(b, elapsed_ns);
    buf_u32(b, pthread_equal(pthread_self(), s->caller) ? 1u : 0u);
    buf_u32(b, count);
    uint64_t total = 0;
    const uint8_t *base = (const uint8_t *)result.entries;
    for (uint32_t i = 0; i < count; i++) {
        const wh_entry *raw_e = (const wh_entry *)(const void *)(base + (size_t)i * result.entry_size);
        wh_entry e;
        uint32_t esize = raw_e->struct_size;
        if (esize < WH_V1_ENTRY_SIZE) {
            char detail[128];
            snprintf(detail, sizeof detail,
                     "entries[%u].struct_size is smaller than ABI v1's sizeof(wh_entry)", i);
            set_failure(s, WH_CALL_BAD_RESULT_STRUCT, esize, WH_V1_ENTRY_SIZE, detail);
            return;
        }
        copy_struct(&e, sizeof e, raw_e, esize);
        size_t n = e.content_json ? (e.content_length ? e.content_length : strlen(e.content_json)) : 0;
        total += n;
        if (total > WH_LIMIT_MAX_RESULT_BYTES) {
            set_failure(s, WH_CALL_RESULT_TOO_LARGE, total, WH_LIMIT_MAX_RESULT_BYTES,
                        "the entries' content is larger than the host accepts");
            return;
        }
        buf_u32(b, e.flags);
        buf_f64(b, e.date);
        buf_f64(b, e.relevance_score);
        buf_f64(b, e.relevance_duration);
        buf_strn(b, e.content_json, n);
    }
    if (b->failed) {
        set_failure(s, WH_CALL_RESULT_TOO_LARGE, total, WH_LIMIT_MAX_RESULT_BYTES,
                    "the runner ran out of memory copying the result");
        return;
    }
}

static void on_complete(void *context, const wh_result *result) {
    call_state *s = context;
    uint64_t elapsed = monotonic_ns() - s->started_ns;
    pthread_mutex_lock(&s->lock);
    if (s->done) {
        s->duplicates++;
        pthread_mutex_unlock(&s->lock);
        return;
    }
    encode_result(s, result, elapsed);
    s->done = 1;
    pthread_cond_broadcast(&s->done_cond);
    pthread_mutex_unlock(&s->lock);
}

/* One call state for the runner's lifetime: a plugin may still hold the
 * completion context after the call (a late or second completion), so it
 * must never be freed or reused while the process lives. Each call gets a
 * fresh runner (or, with the fork server, a fresh child). */
static call_state g_call = {.lock = PTHREAD_MUTEX_INITIALIZER, .done_cond = PTHREAD_COND_INITIALIZER};
static int g_called;

static void handle_call(reader *r) {
    uint32_t entry_point = rd_u32(r);
    uint32_t family = rd_u32(r);
    uint32_t is_preview = rd_u32(r);
    double width = rd_f64(r);
    double height = rd_f64(r);
    double now = rd_f64(r);
    double timeout = rd_f64(r);
    char *kind_id = rd_str(r);
    char *configuration = rd_str(r);
    char *locale = rd_str(r);
    char *data_directory = rd_str(r);
    if (r->failed) _exit(4);
    if (!g_loaded) {
        fail_call(WH_CALL_NOT_LOADED, "CALL before LOAD", 0, 0);
        return;
    }
    if (g_called) _exit(6); /* one call per runner process */
    g_called = 1;

    const wh_kind *kind = NULL;
    for (uint32_t i = 0; i < g_kind_count; i++) {
        if (strcmp(g_kinds[i].kind.id, kind_id) == 0) kind = &g_kinds[i].kind;
    }
    if (!kind) {
        fail_call(WH_CALL_UNKNOWN_KIND, kind_id, 0, 0);
        return;
    }
    wh_entry_fn fn = entry_point == WH_ENTRY_PLACEHOLDER ? kind->placeholder
                     : entry_point == WH_ENTRY_SNAPSHOT  ? kind->snapshot
                     : entry_point == WH_ENTRY_TIMELINE  ? kind->timeline
                                                         : NULL;
    if (!fn) {
        fail_call(WH_CALL_MISSING_ENTRY_POINT, kind_id, entry_point, 0);
        return;
    }

    /* Host-owned context: lives until the process exits, so it outlives the
     * deadline as the ABI promises. */
    static wh_context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.struct_size = sizeof ctx;
    ctx.abi_version = g_abi_version;
    ctx.entry_point = entry_point;
    ctx.family = family;
    ctx.is_preview = is_preview;
    ctx.kind = kind_id;
    ctx.display_width = width;
    ctx.display_height = height;
    ctx.now = now;
    ctx.timeout = timeout;
    ctx.configuration_json = configuration;
    ctx.locale = locale;
    ctx.data_directory = data_directory;
    ctx.kind_context = kind->context;

    /* The plugin's wall clock reads the host's time (virtual in simulations). */
    wh_virtual_clock_set(now);

    call_state *s = &g_call;
    s->caller = pthread_self();
    s->started_ns = monotonic_ns();
    fn(&ctx, on_complete, s);

    pthread_mutex_lock(&s->lock);
    while (!s->done) pthread_cond_wait(&s->done_cond, &s->lock);
    /* The first child of a fork server records the pages its call touched,
     * for the standbys that follow (see prefault). */
    if (g_train) prefault_record();
    /* Flush what the plugin printed with stdio, so the host's log has it
     * before the result. */
    fflush(stdout);
    fflush(stderr);
    if (s->failure) {
        fail_call((wh_call_failure)s->failure, s->failure_detail, s->failure_found,
                  s->failure_limit);
    } else {
        buf_u32(&s->payload, s->duplicates);
        send_frame(WH_MSG_RESULT, &s->payload);
    }
    pthread_mutex_unlock(&s->lock);
}

/* ------------------------------------------------------------------ */

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "--sandbox-check") == 0)
        return wh_sandbox_check(stdout, argc >= 3 && strcmp(argv[2], "--json") == 0);
    struct stat st;
    if (argc > 1 || fstat(WH_WIRE_FD, &st) != 0 || !S_ISSOCK(st.st_mode)) {
        fprintf(stderr,
                "widgethost-runner: this program is started by widgethost to load and call a\n"
                "plugin in an isolated process; it is not meant to be run by hand.\n"
                "Use `widgethost load PLUGIN.so` instead.\n");
        return 2;
    }
    /* Die with the host: PDEATHSIG fires when the parent thread exits;
     * re-check the parent after setting it, in case it already died. */
    pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent || parent == 1) _exit(7);
    signal(SIGPIPE, SIG_IGN);
    /* Plugin output goes to pipes; make stdio line-buffered so a crash
     * loses as little of the plugin's log as possible. */
    setvbuf(stdout, NULL, _IOLBF, 0);

    for (;;) {
        uint16_t type;
        uint8_t *payload;
        uint32_t length;
        if (!recv_frame(&type, &payload, &length)) break;
        reader r = {payload, length, 0, 0};
        switch (type) {
        case WH_MSG_LOAD: handle_load(&r); break;
        case WH_MSG_CALL:
            if (g_notify_fd >= 0) {
                /* Mark this child as taken for the server (which reads the
                 * pipe when it next decides on forking; nobody is woken),
                 * then close it: the plugin sees only fds 0-3. */
                ssize_t w;
                do w = write(g_notify_fd, "c", 1);
                while (w < 0 && errno == EINTR);
                close(g_notify_fd);
                g_notify_fd = -1;
            }
            handle_call(&r);
            /* A call child answered its one call (the answer is in the
             * host's socket buffer, which outlives this process): it ends
             * now, plugin threads and all, and the host still kills its
             * process group for whatever the plugin started. Ending here
             * rather than waiting for that SIGKILL spares the host waking a
             * sleeping process on another CPU (an IPI; measured: ~8 µs less
             * host CPU per call). Its teardown (freeing its memory) runs as
             * SCHED_BATCH at nice 19: it does not preempt the host or the
             * next call, and gets a CPU as soon as one is free (still a
             * small share under sustained load, where SCHED_IDLE could
             * starve teardowns and pile up dying children). */
            if (g_call_child) {
                struct sched_param batch = {0};
                sched_setscheduler(0, SCHED_BATCH, &batch);
                setpriority(PRIO_PROCESS, 0, 19);
                _exit(0);
            }
            break;
        default: _exit(4);
        }
        free(payload);
    }
    /* The host closed the channel. Do not run the plugin's destructors or
     * atexit handlers: they are not part of any call. */
    _exit(0);
}
