/*
 * center.c — libwidgethost-center: the C client of the widgethost daemon's
 * control socket (<widgethost/center.h>). C99 + POSIX, libc only.
 *
 * One connection per wh_center, opened on first use and kept; when the
 * daemon has gone away since (it restarted, or closed an idle connection),
 * the request is sent once more on a new connection. Responses are read up
 * to the newline, at most WH_CENTER_MAX_LINE bytes, waiting at most
 * WH_CENTER_TIMEOUT_SECONDS for each read.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE 1

#include <widgethost/center.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#if defined(__GNUC__) && __GNUC__ >= 4
#define WH_EXPORT __attribute__((visibility("default")))
#else
#define WH_EXPORT
#endif

struct wh_center {
    char *socket_path;
    char *app;
    int fd;        /* -1 when not connected */
    long next_id;  /* id of the next request the library makes */
    char error[1024];
    char code[32];
};

/* ---------------------------------------------------------------------- */
/* Errors                                                                 */
/* ---------------------------------------------------------------------- */

static void clear_error(wh_center *c) {
    c->error[0] = 0;
    c->code[0] = 0;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(wh_center *c, const char *code, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(c->error, sizeof c->error, format, args);
    va_end(args);
    snprintf(c->code, sizeof c->code, "%s", code);
    return -1;
}

/* ---------------------------------------------------------------------- */
/* Growing text buffer                                                    */
/* ---------------------------------------------------------------------- */

typedef struct {
    char *data;
    size_t length;
    size_t capacity;
    int failed; /* out of memory */
} buffer;

static void buffer_reserve(buffer *b, size_t extra) {
    if (b->failed) return;
    if (b->length + extra + 1 <= b->capacity) return;
    size_t capacity = b->capacity ? b->capacity : 256;
    while (capacity < b->length + extra + 1) capacity *= 2;
    char *data = realloc(b->data, capacity);
    if (!data) {
        b->failed = 1;
        return;
    }
    b->data = data;
    b->capacity = capacity;
}

static void buffer_append(buffer *b, const char *bytes, size_t count) {
    buffer_reserve(b, count);
    if (b->failed) return;
    memcpy(b->data + b->length, bytes, count);
    b->length += count;
    b->data[b->length] = 0;
}

static void buffer_puts(buffer *b, const char *text) { buffer_append(b, text, strlen(text)); }

/* Whether `text` is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF). */
static int valid_utf8(const char *text) {
    const unsigned char *s = (const unsigned char *)text;
    while (*s) {
        unsigned char b = *s;
        int extra;
        unsigned long cp;
        if (b < 0x80) {
            s++;
            continue;
        } else if ((b & 0xE0) == 0xC0) {
            extra = 1;
            cp = b & 0x1F;
        } else if ((b & 0xF0) == 0xE0) {
            extra = 2;
            cp = b & 0x0F;
        } else if ((b & 0xF8) == 0xF0) {
            extra = 3;
            cp = b & 0x07;
        } else {
            return 0;
        }
        for (int i = 1; i <= extra; i++) {
            if ((s[i] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i] & 0x3F);
        }
        if ((extra == 1 && cp < 0x80) || (extra == 2 && cp < 0x800) || (extra == 3 && cp < 0x10000)) return 0;
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        s += extra + 1;
    }
    return 1;
}

/* Appends `text` as a JSON string, quotes included. */
static void buffer_json_string(buffer *b, const char *text) {
    static const char hex[] = "0123456789abcdef";
    buffer_append(b, "\"", 1);
    for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
        char escape[7];
        switch (*s) {
        case '"': buffer_append(b, "\\\"", 2); break;
        case '\\': buffer_append(b, "\\\\", 2); break;
        case '\n': buffer_append(b, "\\n", 2); break;
        case '\r': buffer_append(b, "\\r", 2); break;
        case '\t': buffer_append(b, "\\t", 2); break;
        case '\b': buffer_append(b, "\\b", 2); break;
        case '\f': buffer_append(b, "\\f", 2); break;
        default:
            if (*s < 0x20 || *s == 0x7F) {
                memcpy(escape, "\\u00", 4);
                escape[4] = hex[*s >> 4];
                escape[5] = hex[*s & 15];
                buffer_append(b, escape, 6);
            } else {
                buffer_append(b, (const char *)s, 1);
            }
        }
    }
    buffer_append(b, "\"", 1);
}

/* ---------------------------------------------------------------------- */
/* A small JSON reader: enough to pick members out of a response line      */
/* ---------------------------------------------------------------------- */

typedef struct {
    const char *p;
    const char *end;
} span;

static const char *skip_space(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* Past the string that starts at `p` (a '"'); NULL if it is malformed. */
static const char *skip_string(const char *p, const char *end) {
    if (p >= end || *p != '"') return NULL;
    for (p++; p < end; p++) {
        if (*p == '"') return p + 1;
        if (*p == '\\') {
            p++;
            if (p >= end) return NULL;
        } else if ((unsigned char)*p < 0x20) {
            return NULL;
        }
    }
    return NULL;
}

/* Past the value that starts at `p`; NULL if it is malformed. */
static const char *skip_value(const char *p, const char *end, int depth) {
    p = skip_space(p, end);
    if (p >= end || depth > 64) return NULL;
    if (*p == '"') return skip_string(p, end);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        int object = *p == '{';
        p = skip_space(p + 1, end);
        if (p < end && *p == close) return p + 1;
        for (;;) {
            if (object) {
                p = skip_string(skip_space(p, end), end);
                if (!p) return NULL;
                p = skip_space(p, end);
                if (p >= end || *p != ':') return NULL;
                p++;
            }
            p = skip_value(p, end, depth + 1);
            if (!p) return NULL;
            p = skip_space(p, end);
            if (p >= end) return NULL;
            if (*p == close) return p + 1;
            if (*p != ',') return NULL;
            p++;
        }
    }
    /* A number, true, false or null: letters, digits, sign, point. */
    const char *start = p;
    while (p < end && (((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
                       *p == '+' || *p == '.'))
        p++;
    return p > start ? p : NULL;
}

static unsigned hex_digit(char ch) {
    if (ch >= '0' && ch <= '9') return (unsigned)(ch - '0');
    if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f') return (unsigned)((ch | 0x20) - 'a' + 10);
    return 16;
}

static int read_hex4(const char *p, const char *end, unsigned long *out) {
    if (end - p < 4) return 0;
    unsigned long value = 0;
    for (int i = 0; i < 4; i++) {
        unsigned digit = hex_digit(p[i]);
        if (digit > 15) return 0;
        value = value * 16 + digit;
    }
    *out = value;
    return 1;
}

static void buffer_utf8(buffer *b, unsigned long cp) {
    char out[4];
    size_t n;
    if (cp < 0x80) {
        out[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        out[0] = (char)(0xF0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    buffer_append(b, out, n);
}

/* Decodes the JSON string `value` (quotes included) into `out` (cleared
 * first). A NUL escaped in it (\u0000) ends the C string early. 0 if malformed. */
static int decode_string(span value, buffer *out) {
    out->length = 0;
    buffer_reserve(out, 0);
    if (out->data) out->data[0] = 0;
    const char *p = value.p, *end = value.end;
    if (end - p < 2 || *p != '"' || end[-1] != '"') return 0;
    end--;
    for (p++; p < end; p++) {
        if (*p != '\\') {
            buffer_append(out, p, 1);
            continue;
        }
        if (++p >= end) return 0;
        switch (*p) {
        case '"': buffer_append(out, "\"", 1); break;
        case '\\': buffer_append(out, "\\", 1); break;
        case '/': buffer_append(out, "/", 1); break;
        case 'b': buffer_append(out, "\b", 1); break;
        case 'f': buffer_append(out, "\f", 1); break;
        case 'n': buffer_append(out, "\n", 1); break;
        case 'r': buffer_append(out, "\r", 1); break;
        case 't': buffer_append(out, "\t", 1); break;
        case 'u': {
            unsigned long cp, low;
            if (!read_hex4(p + 1, end, &cp)) return 0;
            p += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF && end - p >= 7 && p[1] == '\\' && p[2] == 'u' &&
                read_hex4(p + 3, end, &low) && low >= 0xDC00 && low <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                p += 6;
            } else if (cp >= 0xD800 && cp <= 0xDFFF) {
                cp = 0xFFFD; /* a lone surrogate */
            }
            buffer_utf8(out, cp);
            break;
        }
        default: return 0;
        }
    }
    return !out->failed;
}

/* The value of member `key` of the object `object`; {NULL, NULL} if absent
 * or if `object` is not an object. Keys are compared decoded. */
static span member(span object, const char *key) {
    span none = {NULL, NULL};
    const char *p = skip_space(object.p, object.end), *end = object.end;
    if (p >= end || *p != '{') return none;
    p = skip_space(p + 1, end);
    if (p < end && *p == '}') return none;
    buffer name = {0};
    for (;;) {
        const char *key_start = skip_space(p, end);
        const char *key_end = skip_string(key_start, end);
        if (!key_end) break;
        span key_span = {key_start, key_end};
        int same = decode_string(key_span, &name) && name.data && strcmp(name.data, key) == 0;
        p = skip_space(key_end, end);
        if (p >= end || *p != ':') break;
        const char *value_start = skip_space(p + 1, end);
        const char *value_end = skip_value(value_start, end, 1);
        if (!value_end) break;
        if (same) {
            free(name.data);
            span found = {value_start, value_end};
            return found;
        }
        p = skip_space(value_end, end);
        if (p >= end || *p != ',') break;
        p++;
    }
    free(name.data);
    return none;
}

static int is_string(span value) { return value.p && value.p < value.end && *value.p == '"'; }

/* Calls `each` on every element of the array `array`; 0 if it is not one. */
static int for_each_element(span array, int (*each)(span element, void *context), void *context) {
    const char *p = skip_space(array.p, array.end), *end = array.end;
    if (!p || p >= end || *p != '[') return 0;
    p = skip_space(p + 1, end);
    if (p < end && *p == ']') return 1;
    for (;;) {
        const char *start = skip_space(p, end);
        const char *stop = skip_value(start, end, 1);
        if (!stop) return 0;
        span element = {start, stop};
        if (!each(element, context)) return 0;
        p = skip_space(stop, end);
        if (p >= end) return 0;
        if (*p == ']') return 1;
        if (*p != ',') return 0;
        p++;
    }
}

/* ---------------------------------------------------------------------- */
/* Opening                                                                */
/* ---------------------------------------------------------------------- */

static char *duplicate(const char *text) {
    size_t n = strlen(text) + 1;
    char *copy = malloc(n);
    if (copy) memcpy(copy, text, n);
    return copy;
}

static const char *environment(const char *name) {
    const char *value = getenv(name);
    return value && *value ? value : NULL;
}

static char *default_socket_path(void) {
    const char *explicit_path = environment("WIDGETHOST_SOCKET");
    if (explicit_path) return duplicate(explicit_path);
    buffer b = {0};
    const char *runtime = environment("XDG_RUNTIME_DIR");
    if (runtime) {
        buffer_puts(&b, runtime);
        buffer_puts(&b, "/widgethost/control.sock");
    } else {
        char text[64];
        snprintf(text, sizeof text, "/tmp/widgethost-%lu/control.sock", (unsigned long)getuid());
        buffer_puts(&b, text);
    }
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    return b.data;
}

static char *default_app(void) {
    const char *explicit_app = environment("WIDGETHOST_APP");
    if (explicit_app) return duplicate(explicit_app);
    char name[256] = {0};
    FILE *file = fopen("/proc/self/comm", "r");
    if (file) {
        size_t n = fread(name, 1, sizeof name - 1, file);
        fclose(file);
        name[n] = 0;
        while (n > 0 && (name[n - 1] == '\n' || name[n - 1] == ' ')) name[--n] = 0;
    }
    return duplicate(name[0] ? name : "app");
}

WH_EXPORT wh_center *wh_center_open(const char *socket_path, const char *app) {
    wh_center *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->fd = -1;
    c->next_id = 1;
    c->socket_path = socket_path && *socket_path ? duplicate(socket_path) : default_socket_path();
    c->app = app && *app ? duplicate(app) : default_app();
    if (!c->socket_path || !c->app) {
        wh_center_close(c);
        return NULL;
    }
    return c;
}

WH_EXPORT const char *wh_center_socket_path(const wh_center *c) { return c->socket_path; }
WH_EXPORT const char *wh_center_app(const wh_center *c) { return c->app; }
WH_EXPORT const char *wh_center_last_error(const wh_center *c) { return c->error; }
WH_EXPORT const char *wh_center_last_error_code(const wh_center *c) { return c->code; }
WH_EXPORT void wh_center_free(void *memory) { free(memory); }

static void disconnect(wh_center *c) {
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
}

WH_EXPORT void wh_center_close(wh_center *c) {
    if (!c) return;
    disconnect(c);
    free(c->socket_path);
    free(c->app);
    free(c);
}

/* ---------------------------------------------------------------------- */
/* The socket                                                             */
/* ---------------------------------------------------------------------- */

static int connect_socket(wh_center *c) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    size_t length = strlen(c->socket_path);
    if (length >= sizeof address.sun_path)
        return fail(c, "bad-argument",
                    "socket path %s is longer than the %zu bytes a Unix socket address holds; choose a shorter one",
                    c->socket_path, sizeof address.sun_path - 1);
    memcpy(address.sun_path, c->socket_path, length + 1);
#ifdef SOCK_CLOEXEC
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
#else
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd >= 0) fcntl(fd, F_SETFD, FD_CLOEXEC);
#endif
    if (fd < 0) return fail(c, "connection", "socket() failed: %s", strerror(errno));
    int result;
    do {
        result = connect(fd, (struct sockaddr *)&address, sizeof address);
    } while (result != 0 && errno == EINTR);
    if (result != 0) {
        int code = errno;
        close(fd);
        if (code == ENOENT || code == ECONNREFUSED)
            return fail(c, "not-running",
                        "no widgethost daemon is listening on %s (%s); start one with `widgethost run`, or set "
                        "WIDGETHOST_SOCKET",
                        c->socket_path, strerror(code));
        return fail(c, "connection", "connect to %s failed: %s", c->socket_path, strerror(code));
    }
    c->fd = fd;
    return 0;
}

static int send_all(int fd, const char *bytes, size_t count) {
    while (count > 0) {
        ssize_t n = send(fd, bytes, count, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        bytes += n;
        count -= (size_t)n;
    }
    return 0;
}

static double monotonic_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

enum exchange_result { EXCHANGE_OK, EXCHANGE_FAILED, EXCHANGE_GONE /* nothing read: worth a new connection */ };

/* Writes `line` (with its newline) and reads one response line into
 * `response` (without the newline). */
static enum exchange_result exchange(wh_center *c, const buffer *line, buffer *response) {
    response->length = 0;
    if (send_all(c->fd, line->data, line->length) != 0) {
        /* A daemon that refuses the connection (another uid) answers and
         * closes before reading: its answer is still readable, so read on.
         * Nothing to read means the daemon went away (EXCHANGE_GONE below). */
        if (errno != EPIPE && errno != ECONNRESET && errno != ENOTCONN) {
            fail(c, "connection", "writing to %s failed: %s", c->socket_path, strerror(errno));
            return EXCHANGE_FAILED;
        }
    }
    double deadline = monotonic_seconds() + WH_CENTER_TIMEOUT_SECONDS;
    size_t scanned = 0;
    for (;;) {
        char *newline = response->length > scanned ? memchr(response->data + scanned, '\n', response->length - scanned)
                                                    : NULL;
        if (newline) {
            *newline = 0;
            response->length = (size_t)(newline - response->data);
            return EXCHANGE_OK;
        }
        scanned = response->length;
        if (response->length >= WH_CENTER_MAX_LINE) {
            fail(c, "too-large", "the daemon's answer is longer than %d bytes", WH_CENTER_MAX_LINE);
            return EXCHANGE_FAILED;
        }
        double left = deadline - monotonic_seconds();
        if (left <= 0) {
            fail(c, "timeout", "the daemon at %s did not answer within %d s", c->socket_path,
                 WH_CENTER_TIMEOUT_SECONDS);
            return EXCHANGE_FAILED;
        }
        struct pollfd item = {c->fd, POLLIN, 0};
        int ready = poll(&item, 1, (int)(left * 1000) + 1);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) {
            fail(c, "connection", "poll on %s failed: %s", c->socket_path, strerror(errno));
            return EXCHANGE_FAILED;
        }
        if (ready == 0) continue;
        buffer_reserve(response, 64 * 1024);
        if (response->failed) {
            fail(c, "out-of-memory", "out of memory reading the daemon's answer");
            return EXCHANGE_FAILED;
        }
        size_t room = response->capacity - response->length - 1;
        if (room > (size_t)WH_CENTER_MAX_LINE - response->length) room = (size_t)WH_CENTER_MAX_LINE - response->length;
        ssize_t n = recv(c->fd, response->data + response->length, room, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) {
            if (response->length == 0 && (n == 0 || errno == ECONNRESET)) return EXCHANGE_GONE;
            fail(c, "connection", "the daemon at %s closed the connection before answering", c->socket_path);
            return EXCHANGE_FAILED;
        }
        response->length += (size_t)n;
        response->data[response->length] = 0;
    }
}

/* Sends `line` and reads the answer, connecting (again) as needed. */
static int round_trip(wh_center *c, buffer *line, buffer *response) {
    if (line->failed) return fail(c, "out-of-memory", "out of memory building the request");
    buffer_append(line, "\n", 1);
    for (int attempt = 0; attempt < 2; attempt++) {
        int fresh = c->fd < 0;
        if (fresh && connect_socket(c) != 0) return -1;
        enum exchange_result result = exchange(c, line, response);
        if (result == EXCHANGE_OK) return 0;
        disconnect(c);
        if (result == EXCHANGE_FAILED) return -1;
        /* The daemon went away: from a kept connection, try a new one once. */
        if (fresh) break;
    }
    return fail(c, "connection", "the daemon at %s closed the connection before answering", c->socket_path);
}

static int check_response(wh_center *c, const buffer *response, long expected_id);

/* Sends `line` (freed here), reads the answer into `response` and checks it
 * against request `id`. 0 with `response` owned by the caller, or -1 with
 * the error set and nothing left to free. */
static int request_checked(wh_center *c, buffer *line, buffer *response, long id) {
    int result = round_trip(c, line, response);
    free(line->data);
    line->data = NULL;
    if (result == 0) result = check_response(c, response, id);
    if (result != 0) {
        free(response->data);
        response->data = NULL;
        return -1;
    }
    return 0;
}

/* Checks a response line: 0 if "ok":true, else -1 with the daemon's error.
 * `expected_id` < 0: do not check the id. */
static int check_response(wh_center *c, const buffer *response, long expected_id) {
    span line = {response->data, response->data + response->length};
    const char *stop = skip_value(line.p, line.end, 0);
    if (!stop || skip_space(stop, line.end) != line.end || *skip_space(line.p, line.end) != '{') {
        disconnect(c); /* out of step with the daemon: start afresh next time */
        return fail(c, "malformed-response", "the daemon's answer is not a protocol line: %.200s", response->data);
    }
    span ok = member(line, "ok");
    int is_ok = ok.p && ok.end - ok.p == 4 && memcmp(ok.p, "true", 4) == 0;
    if (!is_ok) {
        span error = member(line, "error");
        span message = member(error, "message");
        span code = member(error, "code");
        buffer text = {0};
        if (is_string(code) && decode_string(code, &text) && text.data)
            snprintf(c->code, sizeof c->code, "%s", text.data);
        else
            snprintf(c->code, sizeof c->code, "%s", "malformed-response");
        if (is_string(message) && decode_string(message, &text) && text.data)
            snprintf(c->error, sizeof c->error, "%s", text.data);
        else
            snprintf(c->error, sizeof c->error, "the daemon refused the request: %.200s", response->data);
        free(text.data);
        return -1;
    }
    if (expected_id >= 0) {
        span id = member(line, "id");
        char *after = NULL;
        long got = id.p ? strtol(id.p, &after, 10) : -1;
        if (!id.p || after != id.end || got != expected_id) {
            disconnect(c);
            return fail(c, "malformed-response", "the daemon answered request %ld with another id: %.200s",
                        expected_id, response->data);
        }
    }
    return 0;
}

/* Starts a request line of operation `op` with the center's id and app. */
static long begin_request(wh_center *c, buffer *line, const char *op) {
    char head[96];
    long id = c->next_id++;
    if (c->next_id > 1000000000L) c->next_id = 1;
    snprintf(head, sizeof head, "{\"v\":%d,\"id\":%ld,\"op\":\"%s\",\"app\":", WH_CENTER_PROTOCOL_VERSION, id, op);
    buffer_puts(line, head);
    buffer_json_string(line, c->app);
    return id;
}

/* ---------------------------------------------------------------------- */
/* Operations                                                             */
/* ---------------------------------------------------------------------- */

typedef struct {
    size_t count;
    size_t bytes; /* of the strings, NULs included */
    buffer text;
    int bad;
} string_list;

static int count_string(span element, void *context) {
    string_list *list = context;
    if (!is_string(element) || !decode_string(element, &list->text)) {
        list->bad = 1;
        return 0;
    }
    list->count++;
    list->bytes += list->text.length + 1;
    return 1;
}

typedef struct {
    char **slots;
    char *next;
    buffer text;
} string_fill;

static int fill_string(span element, void *context) {
    string_fill *fill = context;
    if (!decode_string(element, &fill->text)) return 0;
    size_t n = fill->text.length;
    memcpy(fill->next, fill->text.data ? fill->text.data : "", n);
    fill->next[n] = 0;
    *fill->slots++ = fill->next;
    fill->next += n + 1;
    return 1;
}

static int reload(wh_center *c, const char *kind, char ***scheduled) {
    if (scheduled) *scheduled = NULL;
    clear_error(c);
    if (kind && !*kind) return fail(c, "bad-argument", "the kind is empty");
    if (kind && !valid_utf8(kind)) return fail(c, "bad-argument", "the kind is not valid UTF-8");
    if (!valid_utf8(c->app)) return fail(c, "bad-argument", "the app name is not valid UTF-8");
    buffer line = {0}, response = {0};
    long id = begin_request(c, &line, "reload");
    if (kind) {
        buffer_puts(&line, ",\"kind\":");
        buffer_json_string(&line, kind);
    }
    buffer_puts(&line, "}");
    if (request_checked(c, &line, &response, id) != 0) return -1;
    span whole = {response.data, response.data + response.length};
    span ids = member(whole, "scheduled");
    string_list list = {0};
    if (ids.p && !for_each_element(ids, count_string, &list)) list.bad = 1;
    free(list.text.data);
    if (list.bad) {
        fail(c, "malformed-response", "the daemon's \"scheduled\" is not an array of strings: %.200s", response.data);
        free(response.data);
        return -1;
    }
    if (scheduled) {
        char **array = malloc((list.count + 1) * sizeof(char *) + list.bytes);
        if (!array) {
            free(response.data);
            return fail(c, "out-of-memory", "out of memory");
        }
        string_fill fill = {array, (char *)(array + list.count + 1), {0}};
        if (ids.p) for_each_element(ids, fill_string, &fill);
        *fill.slots = NULL;
        free(fill.text.data);
        *scheduled = array;
    }
    free(response.data);
    return list.count > 0x7FFFFFFF ? 0x7FFFFFFF : (int)list.count;
}

WH_EXPORT int wh_center_reload_timelines(wh_center *c, const char *kind, char ***scheduled) {
    if (!kind) {
        if (scheduled) *scheduled = NULL;
        clear_error(c);
        return fail(c, "bad-argument", "the kind is NULL; use wh_center_reload_all_timelines for every kind");
    }
    return reload(c, kind, scheduled);
}

WH_EXPORT int wh_center_reload_all_timelines(wh_center *c, char ***scheduled) { return reload(c, NULL, scheduled); }

/* The members of wh_widget_info, in order, and their JSON names. */
static const char *const widget_fields[7] = {"id", "kind", "family", "app", "plugin", "configuration",
                                             "dataDirectory"};

typedef struct {
    size_t count;
    size_t bytes;
    buffer text;
    int bad;
    /* filling */
    wh_widget_info *widgets;
    char *next;
} widget_list;

static int visit_widget(span element, void *context) {
    widget_list *list = context;
    const char *values[7];
    for (int i = 0; i < 7; i++) {
        span value = member(element, widget_fields[i]);
        values[i] = NULL;
        if (!value.p || (i == 6 && value.end - value.p == 4 && memcmp(value.p, "null", 4) == 0)) {
            if (i < 6) {
                list->bad = 1; /* every member but dataDirectory is required */
                return 0;
            }
            continue;
        }
        if (!is_string(value) || !decode_string(value, &list->text)) {
            list->bad = 1;
            return 0;
        }
        size_t n = list->text.length;
        if (!list->widgets) {
            list->bytes += n + 1;
            continue;
        }
        memcpy(list->next, list->text.data ? list->text.data : "", n);
        list->next[n] = 0;
        values[i] = list->next;
        list->next += n + 1;
    }
    if (list->widgets) {
        wh_widget_info *w = &list->widgets[list->count];
        w->id = values[0];
        w->kind = values[1];
        w->family = values[2];
        w->app = values[3];
        w->plugin = values[4];
        w->configuration = values[5];
        w->data_directory = values[6];
    }
    list->count++;
    return 1;
}

WH_EXPORT int wh_center_get_configurations(wh_center *c, wh_widget_info **widgets) {
    if (widgets) *widgets = NULL;
    clear_error(c);
    if (!widgets) return fail(c, "bad-argument", "widgets is NULL");
    if (!valid_utf8(c->app)) return fail(c, "bad-argument", "the app name is not valid UTF-8");
    buffer line = {0}, response = {0};
    long id = begin_request(c, &line, "configurations");
    buffer_puts(&line, "}");
    if (request_checked(c, &line, &response, id) != 0) return -1;
    span whole = {response.data, response.data + response.length};
    span array = member(whole, "configurations");
    widget_list list = {0};
    if (!array.p || !for_each_element(array, visit_widget, &list)) list.bad = 1;
    if (list.bad) {
        free(list.text.data);
        fail(c, "malformed-response", "the daemon's \"configurations\" is not an array of widgets: %.200s",
             response.data);
        free(response.data);
        return -1;
    }
    size_t count = list.count;
    /* Second pass: copy into one allocation (at least one byte, so never NULL). */
    list.widgets = malloc(count * sizeof(wh_widget_info) + list.bytes + 1);
    if (!list.widgets) {
        free(list.text.data);
        free(response.data);
        return fail(c, "out-of-memory", "out of memory");
    }
    list.next = (char *)(list.widgets + count);
    list.count = 0;
    for_each_element(array, visit_widget, &list);
    free(list.text.data);
    free(response.data);
    *widgets = list.widgets;
    return count > 0x7FFFFFFF ? 0x7FFFFFFF : (int)count;
}

WH_EXPORT int wh_center_request(wh_center *c, const char *request_json, char **response_json) {
    if (response_json) *response_json = NULL;
    clear_error(c);
    if (!request_json || !*request_json) return fail(c, "bad-argument", "the request is empty");
    if (strchr(request_json, '\n')) return fail(c, "bad-argument", "the request contains a newline; send one line");
    if (strlen(request_json) >= WH_CENTER_MAX_LINE)
        return fail(c, "too-large", "the request is longer than %d bytes", WH_CENTER_MAX_LINE);
    buffer line = {0}, response = {0};
    buffer_puts(&line, request_json);
    int result = round_trip(c, &line, &response);
    free(line.data);
    if (result != 0) {
        free(response.data);
        return -1;
    }
    result = check_response(c, &response, -1);
    if (response_json) {
        *response_json = response.data ? response.data : duplicate("");
    } else {
        free(response.data);
    }
    return result;
}
