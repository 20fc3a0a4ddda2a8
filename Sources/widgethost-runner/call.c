/*
 * call.c — one entry-point call: the context, the completion (from
 * any thread), the result copied and checked, RESULT or CALL_FAILED.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "virtual_clock.h"
#include "runner.h"


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
    if (result.status == WH_STATUS_OK || !result.error_message) {
        buf_str(b, NULL);
    } else {
        /* A plugin's message is capped (a 20 MiB message must stay a
         * pluginError, not break the frame limit); the host says it was cut. */
        size_t n = strnlen(result.error_message, WH_LIMIT_MAX_ERROR_MESSAGE_BYTES + 1);
        buf_strn(b, result.error_message, n);
    }
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

/* A plugin may still hold a call's completion context and its wh_context
 * after the call (a late or second completion), so neither is ever freed
 * or reused while the process lives: the first call uses these, each later
 * call of a warm worker a fresh allocation (the host recycles a worker
 * after a bounded number of calls, which bounds what this keeps). A spawned
 * runner and a fork server's call child make exactly one call. */
static call_state g_call = {.lock = PTHREAD_MUTEX_INITIALIZER, .done_cond = PTHREAD_COND_INITIALIZER};
static wh_context g_context;
static int g_called;

void handle_call(reader *r) {
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
    char *push_token = rd_str(r);
    if (r->failed) _exit(4);
    if (!g_loaded) {
        fail_call(WH_CALL_NOT_LOADED, "CALL before LOAD", 0, 0);
        return;
    }
    if (g_called && g_mode != WH_RUNNER_WORKER) _exit(6); /* one call per runner process */
    call_state *s = &g_call;
    wh_context *context = &g_context;
    if (g_called) {
        s = calloc(1, sizeof *s);
        context = calloc(1, sizeof *context);
        if (!s || !context) _exit(5);
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->done_cond, NULL);
    }
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
    wh_context ctx;
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
    ctx.push_token = push_token[0] ? push_token : NULL;

    /* The plugin's wall clock reads the host's time (virtual in simulations). */
    wh_virtual_clock_set(now);

    *context = ctx;
    s->caller = pthread_self();
    s->started_ns = monotonic_ns();
    fn(context, on_complete, s);

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
        /* The state stays (a late completion only counts a duplicate); the
         * copy of the answer is not needed any more. */
        free(s->payload.data);
        memset(&s->payload, 0, sizeof s->payload);
    }
    pthread_mutex_unlock(&s->lock);
}

