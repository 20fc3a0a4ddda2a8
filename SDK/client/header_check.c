/* Compiled by `make check` as C99 and as C++11 under -Wall -Wextra -pedantic
 * -Werror: the header must be clean in both, and included twice. */
#include <widgethost/center.h>
#include <widgethost/center.h>

typedef struct {
    wh_center *(*open)(const char *, const char *);
    const char *(*socket_path)(const wh_center *);
    const char *(*app)(const wh_center *);
    int (*reload_timelines)(wh_center *, const char *, char ***);
    int (*reload_all_timelines)(wh_center *, char ***);
    int (*get_configurations)(wh_center *, wh_widget_info **);
    int (*request)(wh_center *, const char *, char **);
    const char *(*last_error)(const wh_center *);
    const char *(*last_error_code)(const wh_center *);
    void (*free_memory)(void *);
    void (*close)(wh_center *);
} center_api;

int main(void) {
    center_api api = {wh_center_open,     wh_center_socket_path, wh_center_app,
                      wh_center_reload_timelines, wh_center_reload_all_timelines,
                      wh_center_get_configurations, wh_center_request, wh_center_last_error,
                      wh_center_last_error_code, wh_center_free, wh_center_close};
    wh_widget_info info = {0, 0, 0, 0, 0, 0, 0};
    char line[WH_CENTER_MAX_LINE > 0 && WH_CENTER_TIMEOUT_SECONDS > 0 && WH_CENTER_PROTOCOL_VERSION == 1 ? 1 : -1];
    line[0] = WH_CENTER_VERSION[0];
    (void)api;
    (void)info;
    return line[0] == '1' ? 0 : 1;
}
