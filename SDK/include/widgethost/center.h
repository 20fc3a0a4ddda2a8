/*
 * widgethost/center.h — WidgetKit's WidgetCenter for C apps on Linux.
 *
 * An app asks the running `widgethost run` daemon to reload the timelines of
 * its widgets, and lists the widgets placed for it, over the daemon's control
 * socket (newline-delimited JSON, protocol v1, docs/control-protocol.md).
 * The usual flow is WidgetKit's shared container: write new data into the
 * widget's data directory, then ask for a reload of its kind.
 *
 *   wh_center *c = wh_center_open(NULL, NULL);
 *   ...write into the widget's data directory...
 *   if (wh_center_reload_timelines(c, "org.example.weather", NULL) < 0)
 *       fprintf(stderr, "%s\n", wh_center_last_error(c));
 *   wh_center_close(c);
 *
 * As in WidgetKit, a reload request is a request: the daemon's scheduler
 * decides when it happens (free while the app is in the foreground, counted
 * against each widget's daily budget otherwise; docs/scheduler.md).
 *
 * Conventions used throughout this header:
 *   - Every pointer says who owns it and how long it stays valid.
 *   - Strings are UTF-8 and NUL-terminated.
 *   - Functions that can fail return -1 on failure and a value >= 0 on
 *     success; wh_center_last_error() then says what went wrong.
 *   - A wh_center is not thread-safe: use one per thread, or a lock around
 *     every call. Distinct wh_center objects are independent.
 *   - The library never raises SIGPIPE and never writes to stdout or stderr.
 *
 * Build and link (from a clone; docs/center-c.md):
 *   make -C SDK/client
 *   export PKG_CONFIG_PATH=/path/to/widgethost/SDK
 *   cc app.c $(pkg-config --cflags --libs widgethost-center)
 *
 * This header is C99 and C++ clean under -Wall -Wextra -pedantic -Werror.
 */
#ifndef WIDGETHOST_CENTER_H
#define WIDGETHOST_CENTER_H

#ifdef __cplusplus
extern "C" {
#endif

/** Version of this library, as a string. Informational. */
#define WH_CENTER_VERSION "1.0.0"

/** The control-protocol version the library speaks (the `"v"` of every request). */
#define WH_CENTER_PROTOCOL_VERSION 1

/** The longest response line the library accepts, in bytes (the protocol's
 *  own limit). A longer one fails with the error code "too-large". */
#define WH_CENTER_MAX_LINE (4 << 20)

/** Seconds the library waits for the daemon to answer one request before it
 *  fails with the error code "timeout". */
#define WH_CENTER_TIMEOUT_SECONDS 30

/** A connection to the daemon, on behalf of one app. Opaque; owned by the
 *  caller from wh_center_open() until wh_center_close(). */
typedef struct wh_center wh_center;

/** One placed widget, as wh_center_get_configurations() reports it
 *  (WidgetKit's WidgetInfo). Every pointer points into the same allocation
 *  as the array that holds the struct: valid until that array is given to
 *  wh_center_free(). */
typedef struct wh_widget_info {
    /** The instance id (the daemon configuration's "id"), e.g. "nyse". */
    const char *id;
    /** The widget kind, e.g. "com.widgethost.market-hours". */
    const char *kind;
    /** "systemSmall", "systemMedium", "accessoryCircular", ... */
    const char *family;
    /** The app the widget belongs to. */
    const char *app;
    /** The name of the plugin that provides it (the configuration's "plugin"). */
    const char *plugin;
    /** The instance's configuration (its parameter values) as JSON text, e.g. "{}". */
    const char *configuration;
    /** The widget's data directory, the container it shares with its app:
     *  write new data there, then ask for a reload. NULL when the daemon did
     *  not report one. */
    const char *data_directory;
} wh_widget_info;

/** Creates a center speaking for `app` to the daemon at `socket_path`. Does
 *  not connect: a daemon that cannot be reached is reported by the first call
 *  that needs it, and the connection is made again after the daemon restarts.
 *
 *  socket_path: borrowed, copied. NULL (or "") for the default:
 *               $WIDGETHOST_SOCKET, else $XDG_RUNTIME_DIR/widgethost/control.sock,
 *               else /tmp/widgethost-UID/control.sock.
 *  app:         borrowed, copied. NULL (or "") for the default:
 *               $WIDGETHOST_APP, else the executable's name (/proc/self/comm,
 *               at most 15 bytes: set WIDGETHOST_APP or pass a name).
 *  Returns a center owned by the caller (close it with wh_center_close()),
 *  or NULL only when out of memory. */
wh_center *wh_center_open(const char *socket_path, const char *app);

/** The socket path the center uses. Owned by `c`, valid until wh_center_close(). */
const char *wh_center_socket_path(const wh_center *c);

/** The app the center speaks for. Owned by `c`, valid until wh_center_close(). */
const char *wh_center_app(const wh_center *c);

/** WidgetCenter.reloadTimelines(ofKind:): asks for a reload of every widget
 *  of this app with `kind`.
 *
 *  kind:      borrowed, not kept. A kind no loaded plugin declares fails
 *             with the daemon's "unknown-kind" error; a declared kind this
 *             app has no placed widget of succeeds with 0 (as in WidgetKit).
 *  scheduled: NULL, or where to store the ids of the instances that will
 *             reload: a NULL-terminated array of strings in one allocation,
 *             owned by the caller, released with one wh_center_free(*scheduled).
 *             Set to NULL on failure.
 *  Returns the number of instances that will reload (0 when none: each
 *  already has a reload pending, or the kind's widgets all belong to other
 *  apps), or -1 on failure. */
int wh_center_reload_timelines(wh_center *c, const char *kind, char ***scheduled);

/** WidgetCenter.reloadAllTimelines(): the same for every widget of this app. */
int wh_center_reload_all_timelines(wh_center *c, char ***scheduled);

/** WidgetCenter.getCurrentConfigurations: the widgets of this app placed now.
 *
 *  widgets: where to store an array of the widgets, in one allocation with
 *           all their strings, owned by the caller, released with one
 *           wh_center_free(*widgets). Never NULL on success (an empty array
 *           when there are none); set to NULL on failure.
 *  Returns the number of widgets, or -1 on failure. */
int wh_center_get_configurations(wh_center *c, wh_widget_info **widgets);

/** Sends one raw request line and returns the response line: for every
 *  operation the functions above do not cover (hello, event, view, status,
 *  explain, configurations of every app, unquarantine; docs/control-protocol.md).
 *
 *  request_json:  borrowed, not kept. One JSON object without a newline, e.g.
 *                 {"v":1,"id":7,"op":"status"}. Sent as it is (the library adds
 *                 the newline); its "id" is yours to choose.
 *  response_json: where to store the response line (without the newline),
 *                 owned by the caller, released with wh_center_free(). Set
 *                 whenever a response arrived, even one with "ok":false;
 *                 NULL otherwise.
 *  Returns 0 when the response says "ok":true, -1 otherwise (the daemon's
 *  message, or what went wrong before an answer, in wh_center_last_error()). */
int wh_center_request(wh_center *c, const char *request_json, char **response_json);

/** What the last failed call of `c` went wrong with: the daemon's message
 *  when it refused (e.g. `no plugin declares kind "x"; kinds: ...`), or
 *  the library's own (e.g. "no widgethost daemon is listening on PATH ...;
 *  start one with `widgethost run` ..."). "" after a call that succeeded.
 *  Owned by `c`, valid until the next call with `c`. */
const char *wh_center_last_error(const wh_center *c);

/** The code of the last failure: the daemon's error code when it refused
 *  ("bad-request", "bad-argument", "unknown-kind", "unknown-instance",
 *  "shutting-down", ...; docs/control-protocol.md), or one of the library's:
 *  "not-running" (nothing listens on the socket), "connection" (another
 *  socket error), "timeout", "too-large", "malformed-response",
 *  "bad-argument" (an argument the library itself refused), "out-of-memory".
 *  "" after a call that succeeded. Owned by `c`, valid until the next call with `c`. */
const char *wh_center_last_error_code(const wh_center *c);

/** Releases memory the library handed to the caller (a response line, a
 *  `scheduled` array, a `widgets` array). NULL is allowed and ignored. */
void wh_center_free(void *memory);

/** Closes the connection and releases `c`. NULL is allowed and ignored.
 *  Strings `c` owns become invalid; memory handed to the caller does not. */
void wh_center_close(wh_center *c);

#ifdef __cplusplus
}
#endif

#endif /* WIDGETHOST_CENTER_H */
