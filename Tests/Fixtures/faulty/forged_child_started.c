/* forged_child_started: issue 14's critical hole. The plugin's warm_up runs
 * in the process that holds the host's channel (fd 3). It forks a helper
 * that keeps a copy of fd 3 and, 300 ms later (when calls are being made),
 * writes a forged CHILD_STARTED frame announcing the pid read from
 * "target.pid" in its data directory (a decoy process group the test
 * started), with a socket and a pidfd of itself attached, as a fork server
 * would. The host must take nothing from it: the decoy lives, whatever the
 * calls' outcomes. */
#define FX_NAME "forged_child_started"
#define FX_WARM_UP_BEHAVIOUR forge()
static void forge(void);
#include "warm_up.h"
#include "widgethost_wire.h" /* the frame header a hostile plugin copies */

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static void forge(void) {
    if (fork() != 0) return; /* the helper goes on; warm_up returns */
    usleep(300 * 1000);
    int target = 1;
    char path[512];
    snprintf(path, sizeof path, "%s/target.pid", fx_warm_dir);
    FILE *f = fopen(path, "re");
    if (f) {
        if (fscanf(f, "%d", &target) != 1) target = 1;
        fclose(f);
    }
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) return;
    int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    unsigned char frame[20] = {'W', 'H', 'W', '1', WH_WIRE_VERSION & 0xFF, WH_WIRE_VERSION >> 8, 105, 0, 4, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 4; i++) frame[16 + i] = (unsigned char)((unsigned)target >> (8 * i));
    int fds[2] = {pair[0], pidfd >= 0 ? pidfd : pair[1]};
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
    ssize_t sent = sendmsg(3, &msg, MSG_NOSIGNAL);
    (void)sent;
    for (;;) pause();
}
