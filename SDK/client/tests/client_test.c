/*
 * client_test.c — libwidgethost-center against a scripted fake daemon: the
 * answers a real daemon does not give (malformed, oversized, out of step,
 * a connection closed before answering), the request lines the library
 * writes (escaping), and the default socket path and app rules.
 *
 *   make -C SDK/client test
 *
 * Prints one "ok" / "not ok" line per check (TAP); exits 1 if any failed.
 */
#define _POSIX_C_SOURCE 200809L

#include <widgethost/center.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures, checks;

static void check(int condition, const char *what, const char *detail) {
    checks++;
    if (!condition) failures++;
    printf("%s %d - %s%s%s\n", condition ? "ok" : "not ok", checks, what, condition ? "" : ": ",
           condition ? "" : detail);
}

/* What the fake daemon does for one request. */
typedef enum { ANSWER, CLOSE, REFUSE } action;
typedef struct {
    action what;
    const char *line; /* the answer, newline included (ANSWER; REFUSE: sent on accept, then closed) */
} step;

static char big_answer[(5 << 20) + 64];
static char deep_answer[20000];

/* The fake daemon: answers the requests on `listener` by the script, writing
 * every request line it reads to `log`. Runs in a child process. */
static void serve(int listener, const step *script, int count, FILE *log) {
    int fd = -1;
    for (int i = 0; i < count;) {
        if (fd < 0) {
            fd = accept(listener, NULL, NULL);
            if (fd < 0) _exit(3);
            if (script[i].what == REFUSE) { /* as the daemon does to another uid: answer, close, read nothing */
                if (send(fd, script[i].line, strlen(script[i].line), MSG_NOSIGNAL) < 0) _exit(4);
                close(fd);
                fd = -1;
                i++;
                continue;
            }
        }
        char line[65536];
        size_t n = 0;
        while (n < sizeof line - 1) {
            ssize_t got = read(fd, line + n, 1);
            if (got <= 0) break;
            n++;
            if (line[n - 1] == '\n') break;
        }
        if (n == 0) { /* the client closed this connection: take the next */
            close(fd);
            fd = -1;
            continue;
        }
        line[n] = 0;
        fputs(line, log);
        fflush(log);
        const step *s = &script[i++];
        if (s->what == CLOSE) {
            close(fd);
            fd = -1;
            continue;
        }
        size_t length = strlen(s->line), done = 0;
        while (done < length) {
            ssize_t put = send(fd, s->line + done, length - done, MSG_NOSIGNAL);
            if (put <= 0) break;
            done += (size_t)put;
        }
    }
    _exit(0);
}

int main(void) {
    char directory[] = "/tmp/wh-center-test.XXXXXX";
    if (!mkdtemp(directory)) return 2;
    char socket_path[128], log_path[128];
    snprintf(socket_path, sizeof socket_path, "%s/s.sock", directory);
    snprintf(log_path, sizeof log_path, "%s/requests.log", directory);

    memset(big_answer, 'a', sizeof big_answer);
    memcpy(big_answer, "{\"v\":1,\"id\":10,\"ok\":true,\"x\":\"", 30);
    memcpy(big_answer + sizeof big_answer - 4, "\"}\n", 4);
    memset(deep_answer, '[', sizeof deep_answer - 2);
    deep_answer[sizeof deep_answer - 2] = '\n';
    deep_answer[sizeof deep_answer - 1] = 0;

    const step script[] = {
        /* 1 */ {ANSWER,
                 "{\"v\":1,\"id\":1,\"ok\":false,\"error\":{\"code\":\"unknown-kind\",\"message\":\"caf\\u00e9 "
                 "\\ud83d\\ude00 \\\"q\\\" \\\\ \\/\"}}\n"},
        /* 2 */ {ANSWER, "{\"v\":1,\"id\":2,\"ok\":true,\"scheduled\":[\"a\", \"b\\u00e9\" ,\"c\"]}\n"},
        /* 3 */ {ANSWER, "{\"v\":1,\"id\":3,\"ok\":true,\"scheduled\":\"nope\"}\n"},
        /* 4: another id; the library drops the connection */
        {ANSWER, "{\"v\":1,\"id\":99,\"ok\":true,\"scheduled\":[]}\n"},
        /* 5 */ {ANSWER, "not json\n"},
        /* 6 */
        {ANSWER, "{\"v\":1,\"id\":6,\"ok\":true,\"configurations\":["
                 "{\"id\":\"x\",\"kind\":\"k\",\"family\":\"systemSmall\",\"app\":\"a\",\"plugin\":\"p\","
                 "\"configuration\":\"{\\\"city\\\":\\\"Lyon\\\"}\",\"dataDirectory\":\"/d/x\"},"
                 "{\"id\":\"y\",\"kind\":\"k\",\"family\":\"f\",\"app\":\"a\",\"plugin\":\"p\",\"configuration\":\"{}\","
                 "\"dataDirectory\":null},"
                 "{\"dataDirectory\":\"/d/z\",\"id\":\"z\",\"kind\":\"k\",\"family\":\"f\",\"app\":\"a\",\"plugin\":\"p\","
                 "\"configuration\":\"{}\",\"future\":{\"n\":[1,2]}}]}\n"},
        /* 7 */ {ANSWER, "{\"v\":1,\"id\":7,\"ok\":true,\"configurations\":[{\"id\":\"x\"}]}\n"},
        /* 8 */ {ANSWER, "{\"v\":1,\"id\":8,\"ok\":false}\n"},
        /* 9 */ {ANSWER, "{\"v\":1,\"id\":9,\"ok\":true,\"configurations\":[]}\n"},
        /* 10 */ {ANSWER, big_answer},
        /* 11: a kept connection closed before answering (the daemon restarted): sent again */
        {ANSWER, "{\"v\":1,\"id\":11,\"ok\":true,\"scheduled\":[\"k1\"]}\n"},
        {CLOSE, NULL},
        {ANSWER, "{\"v\":1,\"id\":12,\"ok\":true,\"scheduled\":[\"k2\"]}\n"},
        /* 13: a fresh connection closed before answering: reported */
        {CLOSE, NULL},
        {CLOSE, NULL},
        /* 14 */ {ANSWER, "{\"v\":1,\"id\":15,\"ok\":true,\"scheduled\":[]} trailing\n"},
        /* 15 */ {ANSWER, deep_answer},
        /* 16: raw request, refused */
        {ANSWER, "{\"v\":1,\"id\":5,\"ok\":false,\"error\":{\"code\":\"bad-request\",\"message\":\"nope\"}}\n"},
        /* 17: escaping of kind and app */
        {ANSWER, "{\"v\":1,\"id\":16,\"ok\":true,\"scheduled\":[]}\n"},
        /* 18: a new connection refused on accept, before the request is read */
        {REFUSE, "{\"error\":{\"code\":\"permission-denied\",\"message\":\"this daemon belongs to uid 1\"},"
                 "\"ok\":false,\"v\":1}\n"},
    };
    const int steps = (int)(sizeof script / sizeof script[0]);

    int listener = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    strcpy(address.sun_path, socket_path);
    if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 8) != 0)
        return 2;
    FILE *log = fopen(log_path, "w");
    if (!log) return 2;
    fflush(stdout);
    pid_t server = fork();
    if (server == 0) {
        alarm(120); /* never outlive a broken test */
        serve(listener, script, steps, log);
    }
    alarm(120);
    fclose(log);
    close(listener);

    wh_center *c = wh_center_open(socket_path, "a\"pp\x01");
    char **ids = NULL;
    wh_widget_info *w = NULL;
    char *response = NULL;
    int rc;

    rc = wh_center_reload_timelines(c, "k", &ids);
    check(rc == -1 && strcmp(wh_center_last_error_code(c), "unknown-kind") == 0, "a refusal gives the daemon's code",
          wh_center_last_error_code(c));
    check(strcmp(wh_center_last_error(c), "caf\xc3\xa9 \xf0\x9f\x98\x80 \"q\" \\ /") == 0,
          "and its message, unescaped (\\u, surrogate pairs)", wh_center_last_error(c));
    check(ids == NULL, "no ids on failure", "");

    rc = wh_center_reload_timelines(c, "k", &ids);
    check(rc == 3 && ids && strcmp(ids[0], "a") == 0 && strcmp(ids[1], "b\xc3\xa9") == 0 &&
              strcmp(ids[2], "c") == 0 && ids[3] == NULL,
          "scheduled ids, NULL-terminated", wh_center_last_error(c));
    check(wh_center_last_error(c)[0] == 0 && wh_center_last_error_code(c)[0] == 0, "no error after a success", "");
    wh_center_free(ids);

    rc = wh_center_reload_timelines(c, "k", &ids);
    check(rc == -1 && ids == NULL && strcmp(wh_center_last_error_code(c), "malformed-response") == 0,
          "scheduled that is not an array", wh_center_last_error(c));

    rc = wh_center_reload_all_timelines(c, NULL);
    check(rc == -1 && strstr(wh_center_last_error(c), "another id") != NULL, "an answer to another request id",
          wh_center_last_error(c));

    rc = wh_center_reload_all_timelines(c, NULL);
    check(rc == -1 && strstr(wh_center_last_error(c), "not a protocol line") != NULL, "an answer that is not JSON",
          wh_center_last_error(c));

    rc = wh_center_get_configurations(c, &w);
    check(rc == 3 && strcmp(w[0].id, "x") == 0 && strcmp(w[0].family, "systemSmall") == 0 &&
              strcmp(w[0].configuration, "{\"city\":\"Lyon\"}") == 0 && strcmp(w[0].data_directory, "/d/x") == 0,
          "configurations: every field, configuration unescaped", wh_center_last_error(c));
    check(rc == 3 && w[1].data_directory == NULL && strcmp(w[2].data_directory, "/d/z") == 0 &&
              strcmp(w[2].id, "z") == 0,
          "dataDirectory null is NULL; members in any order; unknown members ignored", "");
    wh_center_free(w);

    rc = wh_center_get_configurations(c, &w);
    check(rc == -1 && w == NULL && strcmp(wh_center_last_error_code(c), "malformed-response") == 0,
          "a widget without its required members", wh_center_last_error(c));

    rc = wh_center_get_configurations(c, &w);
    check(rc == -1 && strcmp(wh_center_last_error_code(c), "malformed-response") == 0,
          "ok:false without an error", wh_center_last_error(c));

    rc = wh_center_get_configurations(c, &w);
    check(rc == 0 && w != NULL, "no widgets: 0 and an empty array, not NULL", wh_center_last_error(c));
    wh_center_free(w);

    rc = wh_center_reload_all_timelines(c, NULL);
    check(rc == -1 && strcmp(wh_center_last_error_code(c), "too-large") == 0, "an answer over 4 MiB",
          wh_center_last_error(c));

    rc = wh_center_reload_all_timelines(c, NULL);
    check(rc == 1, "a request on a new connection", wh_center_last_error(c));
    rc = wh_center_reload_all_timelines(c, &ids);
    check(rc == 1 && strcmp(ids[0], "k2") == 0, "a kept connection closed before answering: sent again on a new one",
          wh_center_last_error(c));
    wh_center_free(ids);

    rc = wh_center_reload_all_timelines(c, NULL);
    check(rc == -1 && strcmp(wh_center_last_error_code(c), "connection") == 0 &&
              strstr(wh_center_last_error(c), "closed the connection before answering") != NULL,
          "a new connection closed before answering: reported, not retried forever", wh_center_last_error(c));

    rc = wh_center_reload_all_timelines(c, NULL);
    check(rc == -1 && strcmp(wh_center_last_error_code(c), "malformed-response") == 0, "text after the JSON object",
          wh_center_last_error(c));

    rc = wh_center_reload_all_timelines(c, NULL);
    check(rc == -1 && strcmp(wh_center_last_error_code(c), "malformed-response") == 0,
          "10000 nested arrays: refused, no stack overflow", wh_center_last_error(c));

    rc = wh_center_request(c, "{\"v\":1,\"id\":5,\"op\":\"x\"}", &response);
    check(rc == -1 && response && strstr(response, "bad-request") && strcmp(wh_center_last_error(c), "nope") == 0,
          "raw request refused: -1, the response line, the message", wh_center_last_error(c));
    wh_center_free(response);

    rc = wh_center_reload_timelines(c, "q\"b\\s\n\t\x1f/\xc3\xa9", NULL);
    check(rc == 0, "a kind that needs escaping", wh_center_last_error(c));

    /* Refused before sending. */
    rc = wh_center_request(c, "{}\n{}", &response);
    check(rc == -1 && response == NULL && strcmp(wh_center_last_error_code(c), "bad-argument") == 0,
          "a raw request with a newline", wh_center_last_error(c));
    rc = wh_center_reload_timelines(c, "\xff", NULL);
    check(rc == -1 && strcmp(wh_center_last_error_code(c), "bad-argument") == 0, "a kind that is not UTF-8",
          wh_center_last_error(c));
    rc = wh_center_reload_timelines(c, NULL, NULL);
    check(rc == -1 && strcmp(wh_center_last_error_code(c), "bad-argument") == 0, "a NULL kind",
          wh_center_last_error(c));
    wh_center_close(c);

    /* A new connection the daemon refuses on accept (another uid): it answers
     * and closes without reading, so the write may fail; the answer is read. */
    c = wh_center_open(socket_path, "app");
    rc = wh_center_reload_all_timelines(c, NULL);
    check(rc == -1 && strcmp(wh_center_last_error_code(c), "permission-denied") == 0 &&
              strcmp(wh_center_last_error(c), "this daemon belongs to uid 1") == 0,
          "a connection refused before the request is read: the refusal, not a broken pipe",
          wh_center_last_error(c));
    wh_center_close(c);

    int status = 0;
    waitpid(server, &status, 0);
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the fake daemon saw every request of its script", "");

    /* The request lines, as the fake daemon read them. */
    FILE *lines = fopen(log_path, "r");
    static char line[65536], first[65536], last[65536];
    int count = 0;
    while (lines && fgets(line, sizeof line, lines)) {
        if (count++ == 0) snprintf(first, sizeof first, "%s", line);
        snprintf(last, sizeof last, "%s", line);
    }
    if (lines) fclose(lines);
    check(strcmp(first, "{\"v\":1,\"id\":1,\"op\":\"reload\",\"app\":\"a\\\"pp\\u0001\",\"kind\":\"k\"}\n") == 0,
          "request line: v, id, op, app escaped, kind", first);
    check(strcmp(last, "{\"v\":1,\"id\":16,\"op\":\"reload\",\"app\":\"a\\\"pp\\u0001\",\"kind\":"
                       "\"q\\\"b\\\\s\\n\\t\\u001f/\xc3\xa9\"}\n") == 0,
          "request line: quotes, backslashes and control characters escaped, UTF-8 kept", last);

    /* Nothing listens any more. */
    c = wh_center_open(socket_path, "app");
    rc = wh_center_reload_all_timelines(c, NULL);
    check(rc == -1 && strcmp(wh_center_last_error_code(c), "not-running") == 0 &&
              strstr(wh_center_last_error(c), socket_path) && strstr(wh_center_last_error(c), "`widgethost run`"),
          "no daemon: not-running, naming the socket", wh_center_last_error(c));
    wh_center_close(c);
    char long_path[200];
    memset(long_path, 'x', sizeof long_path - 1);
    long_path[0] = '/';
    long_path[sizeof long_path - 1] = 0;
    c = wh_center_open(long_path, "app");
    rc = wh_center_reload_all_timelines(c, NULL);
    check(rc == -1 && strstr(wh_center_last_error(c), "107 bytes"), "a socket path too long for sockaddr_un",
          wh_center_last_error(c));
    wh_center_close(c);

    /* Defaults. */
    char expected[256];
    setenv("WIDGETHOST_SOCKET", "/x/explicit.sock", 1);
    setenv("XDG_RUNTIME_DIR", "/run/user/7", 1);
    setenv("WIDGETHOST_APP", "org.example.app", 1);
    c = wh_center_open(NULL, "");
    check(strcmp(wh_center_socket_path(c), "/x/explicit.sock") == 0, "$WIDGETHOST_SOCKET first",
          wh_center_socket_path(c));
    check(strcmp(wh_center_app(c), "org.example.app") == 0, "$WIDGETHOST_APP", wh_center_app(c));
    wh_center_close(c);
    setenv("WIDGETHOST_SOCKET", "", 1);
    unsetenv("WIDGETHOST_APP");
    c = wh_center_open("", NULL);
    check(strcmp(wh_center_socket_path(c), "/run/user/7/widgethost/control.sock") == 0,
          "then $XDG_RUNTIME_DIR/widgethost/control.sock", wh_center_socket_path(c));
    check(strcmp(wh_center_app(c), "client_test") == 0, "then the executable's name", wh_center_app(c));
    wh_center_close(c);
    unsetenv("XDG_RUNTIME_DIR");
    c = wh_center_open(NULL, "given");
    snprintf(expected, sizeof expected, "/tmp/widgethost-%lu/control.sock", (unsigned long)getuid());
    check(strcmp(wh_center_socket_path(c), expected) == 0, "then /tmp/widgethost-UID/control.sock",
          wh_center_socket_path(c));
    check(strcmp(wh_center_app(c), "given") == 0, "an app given wins", wh_center_app(c));
    wh_center_close(c);
    wh_center_close(NULL);
    wh_center_free(NULL);

    unlink(log_path);
    unlink(socket_path);
    rmdir(directory);
    printf("1..%d\n", checks);
    return failures ? 1 : 0;
}
