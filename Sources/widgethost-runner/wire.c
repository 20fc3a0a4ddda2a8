/*
 * wire.c — the runner's side of the framed protocol on fd 3 (widgethost_wire.h):
 * buffers with little-endian writers, a bounds-checked reader, whole frames,
 * and the LOAD_FAILED / CALL_FAILED messages.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "runner.h"


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

void buf_u32(buffer *b, uint32_t v) {
    uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    buf_bytes(b, le, 4);
}

void buf_u64(buffer *b, uint64_t v) {
    buf_u32(b, (uint32_t)v);
    buf_u32(b, (uint32_t)(v >> 32));
}

void buf_f64(buffer *b, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    buf_u64(b, bits);
}

void buf_strn(buffer *b, const char *s, size_t n) {
    if (!s) n = 0;
    if (n > UINT32_MAX) n = UINT32_MAX;
    buf_u32(b, (uint32_t)n);
    buf_bytes(b, s, n);
}

void buf_str(buffer *b, const char *s) { buf_strn(b, s, s ? strlen(s) : 0); }


uint32_t rd_u32(reader *r) {
    if (r->failed || r->length - r->offset < 4) {
        r->failed = 1;
        return 0;
    }
    const uint8_t *p = r->data + r->offset;
    r->offset += 4;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t rd_u64(reader *r) {
    uint64_t lo = rd_u32(r);
    uint64_t hi = rd_u32(r);
    return lo | hi << 32;
}

double rd_f64(reader *r) {
    uint64_t bits = rd_u64(r);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* Returns a malloc'd NUL-terminated copy (never NULL unless failed). */
char *rd_str(reader *r) {
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
char **rd_str_list(reader *r) {
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

int write_all(int fd, const void *data, size_t n) {
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

void send_frame(uint16_t type, const buffer *payload) {
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
int recv_frame(uint16_t *type, uint8_t **payload, uint32_t *length) {
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


/* Rotating buffers: `fail_load(..., fmt("%u..%u", a, b), fmt("%u", c))`
 * must not have its second result overwrite its first. */
static char scratch[WH_FMT_SLOTS][512];
static unsigned scratch_next;

const char *fmt(const char *format, ...) {
    char *out = scratch[scratch_next++ % WH_FMT_SLOTS];
    va_list ap;
    va_start(ap, format);
    vsnprintf(out, sizeof scratch[0], format, ap);
    va_end(ap);
    return out;
}

/* LOAD_FAILED: code, detail, field, expected, found. Then exit: a runner
 * that failed to load has nothing more to do. */
void fail_load(wh_load_failure code, const char *detail, const char *field,
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

void fail_call(wh_call_failure code, const char *detail, uint64_t found, uint64_t limit) {
    buffer b = {0};
    buf_u32(&b, (uint32_t)code);
    buf_str(&b, detail);
    buf_u64(&b, found);
    buf_u64(&b, limit);
    send_frame(WH_MSG_CALL_FAILED, &b);
}
