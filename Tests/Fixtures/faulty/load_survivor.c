/* load_survivor (issue 14, item 8): a constructor and the warm-up each
 * fork a process that leaves the runner's process group (setpgid(0, 0),
 * then setsid()), records what worked in `survivor.txt` in the data
 * directory and sleeps for an hour, holding every descriptor it inherited.
 * Both name themselves after the data directory (hx_mark_process) so the
 * test finds them. The entry points answer normally. */
#define FX_NAME "load_survivor"
#include <widgethost/provider.h>
static void warm_up(const wh_warm_up_context *context);
#define FX_WARM_UP warm_up
#include "hostile.h"

#include <fcntl.h>
#include <unistd.h>

static void start_survivor(const char *data_directory, const char *when) {
    /* The loader waits until the survivor has recorded itself (EOF on the
     * pipe), so the record never races the end of the call. */
    int recorded[2];
    if (pipe(recorded) != 0) return;
    pid_t pid = fork();
    if (pid != 0) {
        close(recorded[1]);
        char byte;
        while (pid > 0 && read(recorded[0], &byte, 1) > 0) {}
        close(recorded[0]);
        return;
    }
    close(recorded[0]);
    wh_context fake;
    memset(&fake, 0, sizeof fake);
    fake.data_directory = data_directory;
    hx_mark_process(&fake);
    int setpgid_e = setpgid(0, 0) == 0 ? 0 : errno;
    int setsid_e = setsid() >= 0 ? 0 : errno;
    char line[128];
    int n = snprintf(line, sizeof line, "%s %d %d\n", when, setpgid_e, setsid_e);
    int fd = open("survivor.txt", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
        ssize_t ignored = write(fd, line, (size_t)n);
        (void)ignored;
        close(fd);
    }
    close(recorded[1]);
    sleep(3600);
    _exit(0);
}

__attribute__((constructor)) static void at_load(void) {
    static char cwd[512];
    if (getcwd(cwd, sizeof cwd)) start_survivor(cwd, "constructor");
}

static void warm_up(const wh_warm_up_context *context) { start_survivor(context->data_directory, "warm_up"); }

HX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, fx_timeline_ok)
