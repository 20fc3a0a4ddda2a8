/*
 * market-update — an "app" for the market-hours widget, in C: WidgetKit's
 * shared-container flow. It writes new prices into the data directory the
 * widget shares with it (market.json), then asks the widgethost daemon to
 * reload the widget's timelines, as an iOS app calls
 * WidgetCenter.shared.reloadTimelines(ofKind:).
 *
 *   market-update [--data-dir DIR] [--socket PATH] [--app APP] SYMBOL=PRICE...
 *
 * Without --data-dir, the directory is the one the daemon reports for the
 * app's widget of kind com.widgethost.market-hours
 * (wh_center_get_configurations). The app is com.example.broker unless
 * --app or $WIDGETHOST_APP says otherwise; the socket is the default one
 * ($WIDGETHOST_SOCKET, ...) unless --socket says otherwise.
 *
 * Exit status: 0 done, 1 failed (the daemon, the file), 2 usage.
 * README.md shows the whole flow.
 */
#define _POSIX_C_SOURCE 200809L

#include <widgethost/center.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MARKET_KIND "com.widgethost.market-hours"
#define DEFAULT_APP "com.example.broker"
#define MARKET_FILE "market.json"
#define MAX_FILE (1 << 20)

/* market.json when the data directory has none yet: the plugin's built-in
 * NYSE hours (Plugins/MarketHours/Market.swift), with the prices appended. */
static const char template_head[] = "{\n"
                                    "  \"exchange\": \"NYSE\",\n"
                                    "  \"utcOffset\": \"-05:00\",\n"
                                    "  \"open\": \"09:30\",\n"
                                    "  \"close\": \"16:00\",\n"
                                    "  \"weekend\": [\"saturday\", \"sunday\"],\n"
                                    "  \"prices\": {}\n"
                                    "}\n";

typedef struct {
    const char *symbol; /* NUL-terminated, points into argv */
    const char *price;  /* a JSON number, as the user wrote it */
    int used;           /* already written into the prices object */
} quote;

/* ---------------------------------------------------------------------- */
/* Text                                                                   */
/* ---------------------------------------------------------------------- */

typedef struct {
    char *data;
    size_t length, capacity;
} text;

static void append(text *t, const char *bytes, size_t n) {
    if (t->length + n + 1 > t->capacity) {
        size_t capacity = t->capacity ? t->capacity : 1024;
        while (capacity < t->length + n + 1) capacity *= 2;
        char *data = realloc(t->data, capacity);
        if (!data) {
            fprintf(stderr, "market-update: out of memory\n");
            exit(1);
        }
        t->data = data;
        t->capacity = capacity;
    }
    memcpy(t->data + t->length, bytes, n);
    t->length += n;
    t->data[t->length] = 0;
}

static void append_str(text *t, const char *s) { append(t, s, strlen(s)); }

static void append_json_string(text *t, const char *s) {
    append(t, "\"", 1);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            char escaped[2] = {'\\', (char)ch};
            append(t, escaped, 2);
        } else if (ch < 0x20) {
            char escaped[7];
            snprintf(escaped, sizeof escaped, "\\u%04x", ch);
            append(t, escaped, 6);
        } else {
            append(t, s, 1);
        }
    }
    append(t, "\"", 1);
}

/* ---------------------------------------------------------------------- */
/* Just enough JSON to find and rewrite the "prices" member               */
/* ---------------------------------------------------------------------- */

static const char *space(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

static const char *skip_string(const char *p) {
    if (*p != '"') return NULL;
    for (p++; *p; p++) {
        if (*p == '"') return p + 1;
        if (*p == '\\' && !*++p) return NULL;
        if ((unsigned char)*p < 0x20) return NULL;
    }
    return NULL;
}

static const char *skip_value(const char *p, int depth) {
    p = space(p);
    if (depth > 64) return NULL;
    if (*p == '"') return skip_string(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        int object = *p == '{';
        p = space(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            if (object) {
                p = skip_string(space(p));
                if (!p) return NULL;
                p = space(p);
                if (*p++ != ':') return NULL;
            }
            p = skip_value(p, depth + 1);
            if (!p) return NULL;
            p = space(p);
            if (*p == close) return p + 1;
            if (*p++ != ',') return NULL;
        }
    }
    const char *start = p;
    while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '+' || *p == '.' ||
           *p == 'E')
        p++;
    return p > start ? p : NULL;
}

/* Whether the JSON string at p..end (quotes included) is exactly `s`,
 * honouring the simple escapes (\" \\ \/). */
static int string_equals(const char *p, const char *end, const char *s) {
    for (p++, end--; p < end; p++, s++) {
        char ch = *p;
        if (ch == '\\') {
            ch = *++p;
            if (ch != '"' && ch != '\\' && ch != '/') return 0;
        }
        if (*s != ch) return 0;
    }
    return *s == 0;
}

/* Whether `s` is a JSON number (RFC 8259 grammar). */
static int json_number(const char *s) {
    if (*s == '-') s++;
    if (*s == '0') {
        s++;
    } else if (*s >= '1' && *s <= '9') {
        while (*s >= '0' && *s <= '9') s++;
    } else {
        return 0;
    }
    if (*s == '.') {
        if (!(*++s >= '0' && *s <= '9')) return 0;
        while (*s >= '0' && *s <= '9') s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') s++;
        if (!(*s >= '0' && *s <= '9')) return 0;
        while (*s >= '0' && *s <= '9') s++;
    }
    return *s == 0;
}

/* Appends the new prices object: the old one's entries in their order
 * (with new values where given), then the new symbols. */
static int write_prices(text *out, const char *old, const char *old_end, quote *quotes, int count) {
    int first = 1;
    append(out, "{", 1);
    if (old) {
        const char *p = space(old + 1);
        while (p < old_end && *p != '}') {
            const char *key = space(p), *key_end = skip_string(key);
            if (!key_end) return -1;
            p = space(key_end);
            if (*p++ != ':') return -1;
            const char *value = space(p), *value_end = skip_value(value, 1);
            if (!value_end) return -1;
            const char *replacement = NULL;
            for (int i = 0; i < count; i++) {
                if (string_equals(key, key_end, quotes[i].symbol)) {
                    replacement = quotes[i].price;
                    quotes[i].used = 1;
                }
            }
            append_str(out, first ? "" : ", ");
            append(out, key, (size_t)(key_end - key));
            append_str(out, ": ");
            if (replacement)
                append_str(out, replacement);
            else
                append(out, value, (size_t)(value_end - value));
            first = 0;
            p = space(value_end);
            if (*p == ',') p = space(p + 1);
        }
    }
    for (int i = 0; i < count; i++) {
        if (quotes[i].used) continue;
        /* The same symbol twice on the command line: the last one wins. */
        int later = 0;
        for (int j = i + 1; j < count; j++) later |= strcmp(quotes[i].symbol, quotes[j].symbol) == 0;
        if (later) continue;
        append_str(out, first ? "" : ", ");
        append_json_string(out, quotes[i].symbol);
        append_str(out, ": ");
        append_str(out, quotes[i].price);
        first = 0;
    }
    append(out, "}", 1);
    return 0;
}

/* The new market.json: `old` with its top-level "prices" replaced (or added). */
static int update_document(const char *old, quote *quotes, int count, text *out, const char **problem) {
    const char *p = space(old);
    const char *end = skip_value(p, 0);
    if (*p != '{' || !end || *space(end) != 0) {
        *problem = "is not a JSON object";
        return -1;
    }
    const char *prices = NULL, *prices_end = NULL, *last_value_end = NULL;
    p = space(p + 1);
    while (*p != '}') {
        const char *key = p, *key_end = skip_string(key);
        p = space(key_end);
        p = space(p + 1); /* ':' */
        const char *value_end = skip_value(p, 1);
        if (string_equals(key, key_end, "prices")) {
            if (*p != '{') {
                *problem = "has a \"prices\" member that is not an object";
                return -1;
            }
            prices = p;
            prices_end = value_end;
        }
        last_value_end = value_end;
        p = space(value_end);
        if (*p == ',') p = space(p + 1);
    }
    if (prices) {
        append(out, old, (size_t)(prices - old));
        if (write_prices(out, prices, prices_end, quotes, count) != 0) {
            *problem = "has a malformed \"prices\" object";
            return -1;
        }
        append_str(out, prices_end);
    } else if (last_value_end) {
        append(out, old, (size_t)(last_value_end - old));
        append_str(out, ",\n  \"prices\": ");
        write_prices(out, NULL, NULL, quotes, count);
        append_str(out, last_value_end);
    } else {
        append(out, old, (size_t)(p - old));
        append_str(out, "\"prices\": ");
        write_prices(out, NULL, NULL, quotes, count);
        append_str(out, p);
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Files                                                                  */
/* ---------------------------------------------------------------------- */

/* The file's contents (NUL-terminated, caller frees), NULL with errno set. */
static char *read_file(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    char *data = malloc(MAX_FILE + 1);
    size_t n = data ? fread(data, 1, MAX_FILE + 1, file) : 0;
    int problem = !data ? ENOMEM : ferror(file) ? EIO : n > MAX_FILE ? EFBIG : 0;
    fclose(file);
    if (problem) {
        free(data);
        errno = problem;
        return NULL;
    }
    data[n] = 0;
    if (strlen(data) != n) {
        free(data);
        errno = EINVAL;
        return NULL;
    }
    return data;
}

/* Writes `contents` to `path` atomically: a temporary file in the same
 * directory, flushed to disk, renamed over `path`. The widget's plugin reads
 * either the old file or the new one, never half of one. */
static int write_atomically(const char *directory, const char *path, const char *contents, mode_t mode) {
    text temporary = {0};
    append_str(&temporary, directory);
    append_str(&temporary, "/." MARKET_FILE ".XXXXXX");
    int fd = mkstemp(temporary.data);
    if (fd < 0) {
        fprintf(stderr, "market-update: cannot create a file in %s: %s\n", directory, strerror(errno));
        free(temporary.data);
        return -1;
    }
    size_t length = strlen(contents), done = 0;
    while (done < length) {
        ssize_t n = write(fd, contents + done, length - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += (size_t)n;
    }
    int ok = done == length && fchmod(fd, mode) == 0 && fsync(fd) == 0;
    int saved = errno;
    ok = close(fd) == 0 && ok;
    if (ok && rename(temporary.data, path) == 0) {
        free(temporary.data);
        return 0;
    }
    if (ok) saved = errno;
    fprintf(stderr, "market-update: cannot write %s: %s\n", path, strerror(saved));
    unlink(temporary.data);
    free(temporary.data);
    return -1;
}

/* ---------------------------------------------------------------------- */
/* The app                                                                */
/* ---------------------------------------------------------------------- */

static int usage(const char *problem) {
    if (problem) {
        fprintf(stderr,
                "market-update: %s\n"
                "usage: market-update [--data-dir DIR] [--socket PATH] [--app APP] SYMBOL=PRICE... (--help for more)\n",
                problem);
        return 2;
    }
    printf(
            "usage: market-update [--data-dir DIR] [--socket PATH] [--app APP] SYMBOL=PRICE...\n"
            "\n"
            "Writes the prices into market.json in the data directory of the %s widget\n"
            "(the one the widgethost daemon reports for the app, unless --data-dir), then asks\n"
            "the daemon to reload the widget's timelines.\n"
            "\n"
            "  --data-dir DIR  write market.json in DIR (do not ask the daemon where)\n"
            "  --socket PATH   the daemon's control socket (default: $WIDGETHOST_SOCKET, ...)\n"
            "  --app APP       the app asking (default: $WIDGETHOST_APP, else %s)\n"
            "\n"
            "example: market-update AAPL=240.10 MSFT=415\n",
            MARKET_KIND, DEFAULT_APP);
    return 0;
}

int main(int argc, char **argv) {
    const char *data_dir = NULL, *socket_path = NULL, *app = getenv("WIDGETHOST_APP");
    if (!app || !*app) app = DEFAULT_APP;
    quote *quotes = calloc((size_t)argc, sizeof *quotes);
    int count = 0;
    if (!quotes) return 1;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char **option = NULL;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) return usage(NULL);
        if (strcmp(arg, "--data-dir") == 0) option = &data_dir;
        if (strcmp(arg, "--socket") == 0) option = &socket_path;
        if (strcmp(arg, "--app") == 0) option = &app;
        if (option) {
            if (i + 1 >= argc) return usage("an option needs a value");
            *option = argv[++i];
            continue;
        }
        if (arg[0] == '-' && arg[1] == '-') return usage("unknown option");
        char *equals = strchr(argv[i], '=');
        if (!equals || equals == argv[i]) return usage("each quote is SYMBOL=PRICE, e.g. AAPL=240.10");
        *equals = 0;
        if (!json_number(equals + 1)) {
            fprintf(stderr, "market-update: the price of %s is not a number: %s\n", argv[i], equals + 1);
            return 2;
        }
        quotes[count].symbol = argv[i];
        quotes[count].price = equals + 1;
        count++;
    }
    if (count == 0) return usage("no quotes given");

    wh_center *center = wh_center_open(socket_path, app);
    if (!center) {
        fprintf(stderr, "market-update: out of memory\n");
        return 1;
    }
    int status = 1;
    wh_widget_info *widgets = NULL;
    char *old = NULL;
    char **scheduled = NULL;
    text directory = {0}, path = {0}, updated = {0};
    struct stat info;
    mode_t mode = 0644;
    const char *problem = NULL;
    int reloading;

    /* 1. Where the widget's shared container is. */
    if (data_dir) {
        append_str(&directory, data_dir);
    } else {
        int n = wh_center_get_configurations(center, &widgets);
        if (n < 0) {
            fprintf(stderr, "market-update: %s\n", wh_center_last_error(center));
            goto done;
        }
        for (int i = 0; i < n && !directory.data; i++) {
            if (strcmp(widgets[i].kind, MARKET_KIND) == 0 && widgets[i].data_directory)
                append_str(&directory, widgets[i].data_directory);
        }
        if (!directory.data) {
            fprintf(stderr,
                    "market-update: the daemon at %s has no %s widget for app %s (%d widgets of the app placed); "
                    "add an instance to its configuration, or pass --data-dir\n",
                    wh_center_socket_path(center), MARKET_KIND, wh_center_app(center), n);
            goto done;
        }
    }
    append_str(&path, directory.data);
    append_str(&path, "/" MARKET_FILE);

    /* 2. The new data, written atomically. */
    old = read_file(path.data);
    if (!old && errno != ENOENT) {
        fprintf(stderr, "market-update: cannot read %s: %s\n", path.data, strerror(errno));
        goto done;
    }
    if (old && stat(path.data, &info) == 0) mode = info.st_mode & 07777;
    if (update_document(old ? old : template_head, quotes, count, &updated, &problem) != 0) {
        fprintf(stderr, "market-update: %s %s; fix or remove it\n", path.data, problem);
        goto done;
    }
    if (write_atomically(directory.data, path.data, updated.data, mode) != 0) goto done;
    printf("wrote %s\n", path.data);

    /* 3. WidgetCenter.shared.reloadTimelines(ofKind:) */
    reloading = wh_center_reload_timelines(center, MARKET_KIND, &scheduled);
    if (reloading < 0) {
        fprintf(stderr, "market-update: the prices are saved, but the reload request failed: %s\n",
                wh_center_last_error(center));
        goto done;
    }
    if (reloading == 0) {
        printf("no %s widget will reload now (a reload of each is already pending)\n", MARKET_KIND);
    } else {
        printf("will reload:");
        for (char **id = scheduled; *id; id++) printf(" %s", *id);
        printf("\n");
    }
    status = 0;

done:
    wh_center_free(scheduled);
    wh_center_free(widgets);
    wh_center_close(center);
    free(old);
    free(directory.data);
    free(path.data);
    free(updated.data);
    free(quotes);
    return status;
}
