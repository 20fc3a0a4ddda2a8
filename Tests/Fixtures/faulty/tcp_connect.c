/* tcp_connect: the timeline opens a TCP connection to 127.0.0.1:`port` (a
 * listener the test runs) and reports {"socket": errno, "connect": errno}
 * (0 = it worked). */
#define FX_NAME "tcp_connect"
#include "hostile.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    int socket_errno = 0, connect_errno = -1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        socket_errno = errno;
    } else {
        struct sockaddr_in address;
        memset(&address, 0, sizeof address);
        address.sin_family = AF_INET;
        address.sin_port = htons((uint16_t)hx_integer(ctx, "port"));
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        connect_errno = connect(fd, (struct sockaddr *)&address, sizeof address) == 0 ? 0 : errno;
        if (connect_errno == 0) {
            ssize_t n = write(fd, "exfiltrated", 11);
            (void)n;
        }
        close(fd);
    }
    static char json[96];
    snprintf(json, sizeof json, "{\"socket\":%d,\"connect\":%d}", socket_errno, connect_errno);
    hx_report(ctx, complete, completion_context, json);
}

HX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
