/*
 * runner.h — what the runner's files share. One file per concern:
 *
 *   main.c         the loop on fd 3: LOAD, then CALLs, until the host closes it
 *   wire.c         frames, buffers, the reader, LOAD_FAILED / CALL_FAILED
 *   load.c         ELF checks, dlopen, the descriptor's checks, LOADED, warm-up
 *   templates.c    the templates extension (ext/templates.h), appended to LOADED
 *   call.c         one entry-point call: context, completion, RESULT
 *   fork_server.c  fork mode: standby call children, CHILD_STARTED / EXITED
 *   prefault.c     fork mode: the pages a call child needs, mapped in advance
 *   sandbox*.c     the sandbox layers (sandbox.h)
 *
 * The runner is single-threaded (plugins may start threads; the runner
 * never does) and uses nothing that breaks after fork().
 */
#ifndef WIDGETHOST_RUNNER_H
#define WIDGETHOST_RUNNER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>

#include "widgethost_wire.h"
#include <widgethost/provider.h>

/* ---- wire.c ---- */

/** A growable byte buffer with little-endian field writers; `failed` is set
 *  (and further writes ignored) when an allocation fails. */
typedef struct buffer {
    uint8_t *data;
    size_t length;
    size_t capacity;
    int failed;
} buffer;

void buf_u32(buffer *b, uint32_t v);
void buf_u64(buffer *b, uint64_t v);
void buf_f64(buffer *b, double v);
void buf_strn(buffer *b, const char *s, size_t n);
void buf_str(buffer *b, const char *s);

/** A bounds-checked reader over a received payload; `failed` is set on the
 *  first read past its end (reads then return zeros / NULL). */
typedef struct reader {
    const uint8_t *data;
    size_t length;
    size_t offset;
    int failed;
} reader;

uint32_t rd_u32(reader *r);
uint64_t rd_u64(reader *r);
double rd_f64(reader *r);
char *rd_str(reader *r);
char **rd_str_list(reader *r);

int write_all(int fd, const void *data, size_t n);
/** Sends one frame on fd 3 (one writev); exits if the host is gone. */
void send_frame(uint16_t type, const buffer *payload);
/** Returns 1 and a malloc'd payload, or 0 on EOF. Exits on a protocol error. */
int recv_frame(uint16_t *type, uint8_t **payload, uint32_t *length);

/** printf into one of a few rotating buffers: up to WH_FMT_SLOTS results
 *  may be used in one expression (e.g. `expected` and `found`). */
#define WH_FMT_SLOTS 4
const char *fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));

/** LOAD_FAILED, then exit: a runner that failed to load has nothing more to do. */
void fail_load(wh_load_failure code, const char *detail, const char *field, const char *expected,
               const char *found) __attribute__((noreturn));
void fail_call(wh_call_failure code, const char *detail, uint64_t found, uint64_t limit);

/* ---- main.c ---- */

uint64_t monotonic_ns(void);
uint64_t timeval_ns(struct timeval t);
uint32_t thread_count(void);

/* ---- elf_check.c ---- */

/** Refuses (LOAD_FAILED, exit) a file that is not an ELF shared object for
 *  this machine. */
void check_elf(const char *path);

/* ---- load.c ---- */

/* The smallest struct sizes ABI v1 accepts: v1 is the first version, so
 * these are the v1 sizes. A later ABI appends fields; an older plugin's
 * smaller struct is then zero-extended (see docs/abi.md). */
#define WH_V1_DESCRIPTOR_SIZE WH_DESCRIPTOR_SIZE_V1_0
#define WH_V1_KIND_SIZE sizeof(wh_kind)
#define WH_V1_PARAMETER_SIZE WH_PARAMETER_SIZE_V1_0
#define WH_V1_ENTRY_SIZE sizeof(wh_entry)
#define WH_V1_RESULT_SIZE sizeof(wh_result)

typedef struct loaded_kind {
    wh_kind kind; /* zero-extended copy */
} loaded_kind;

extern loaded_kind *g_kinds;
extern uint32_t g_kind_count;
extern uint32_t g_abi_version;
extern int g_loaded;
extern int64_t g_sandbox_active; /* wh_sandbox_layer bits in force */
extern uint32_t g_mode;          /* WH_RUNNER_* from LOAD */

/** Copies min(declared, known) bytes of a plugin struct into a zeroed
 *  local: the zero-extension rule. */
void copy_struct(void *dst, size_t known, const void *src, uint32_t declared);
/** LOAD: sandbox, checks, dlopen, LOADED, and (fork and worker modes) the
 *  warm-up. In fork mode it returns only in a call child. */
void handle_load(reader *r);

/* ---- templates.c ---- */

/** Appends the plugin's templates (`widgethost_provider_templates`, if it
 *  exports it) to LOADED as a tagged section, after checking every record;
 *  a list that breaks a rule fails the load (LOAD_FAILED, exit). */
void templates_append(buffer *b, void *handle);

/* ---- call.c ---- */

/** CALL: one entry-point call, answered with RESULT or CALL_FAILED. */
void handle_call(reader *r);

/* ---- fork_server.c ---- */

extern int g_call_child; /* this process is a fork server's call child */
extern int g_notify_fd;  /* in a call child: the pipe that says it took its CALL */
/** The fork server's loop; returns only in a call child. */
void serve(void);

/* ---- prefault.c ---- */

extern int g_train; /* in a call child: record the pages the call touched */
extern uint8_t *g_training;
extern size_t g_training_size;
/** Whether prefaulting is on (WIDGETHOST_PREFAULT is not off or 0). */
int prefault_enabled(void);
void prefault_parse_maps(void);
void prefault_record(void);
int prefault_learn(void);
void prefault(void);
/** Worker mode: populates the file-backed read-only mappings once. */
void prefault_worker(void);

#endif
