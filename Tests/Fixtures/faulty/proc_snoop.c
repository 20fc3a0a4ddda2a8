/* proc_snoop (issue 14, item 5): the timeline reads the file at `path`
 * (the test's decoy process's /proc/PID/environ, which holds a secret),
 * then walks /proc and reads every process's environ it can, as an
 * attacker collecting secrets would. Whatever it reads goes to stderr and
 * into its answer: {"errno": e, "visible": processes listed in /proc,
 * "readable": environ files read, "stolen": "..."}. */
#define FX_NAME "proc_snoop"
#include "hostile.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

/* Reads `path` into out (NULs as spaces, quotes and controls as '_');
 * returns 0 or errno. */
static int read_environ(const char *path, char *out, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    ssize_t n = read(fd, out, size - 1);
    int e = errno;
    close(fd);
    if (n < 0) return e;
    out[n] = 0;
    for (ssize_t i = 0; i < n; i++)
        if (out[i] == 0) out[i] = ' ';
        else if (out[i] == '"' || out[i] == '\\' || !isprint((unsigned char)out[i])) out[i] = '_';
    return 0;
}

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    char path[512];
    hx_string(ctx, "path", path, sizeof path);
    static char stolen[1024], json[2048];
    int target = read_environ(path, stolen, 200);
    if (target == 0) fprintf(stderr, "stole: %s\n", stolen);
    else stolen[0] = 0;
    int visible = 0, readable = 0;
    DIR *proc = opendir("/proc");
    struct dirent *e;
    while (proc && (e = readdir(proc)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        visible++;
        char file[300], text[4096];
        snprintf(file, sizeof file, "/proc/%s/environ", e->d_name);
        if (read_environ(file, text, sizeof text) != 0) continue;
        readable++;
        fprintf(stderr, "environ of %s: %.300s\n", e->d_name, text);
    }
    if (proc) closedir(proc);
    snprintf(json, sizeof json, "{\"errno\":%d,\"visible\":%d,\"readable\":%d,\"stolen\":\"%s\"}", target, visible,
             readable, stolen);
    hx_report(ctx, complete, completion_context, json);
}

HX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
