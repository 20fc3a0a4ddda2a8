/* metadata_outside (issue 14, item 6): the timeline tries to change the
 * metadata of the file at `path` (a decoy outside its data directory) with
 * every call there is, by path and by descriptor: chmod to 0777, chown to
 * 65534, a user.wh extended attribute, times set to 0. Then, as a control,
 * chmod of a file of its own in its data directory. Answers each errno
 * (0: it worked): {"chmod": e, ..., "inside_chmod": e}. */
#define FX_NAME "metadata_outside"
#include "hostile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>

#define TRY(call) ((call) == 0 ? 0 : errno)

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    char path[512];
    hx_string(ctx, "path", path, sizeof path);
    struct timespec zero[2] = {{0, 0}, {0, 0}};
    struct timeval zero_tv[2] = {{0, 0}, {0, 0}};
    int chmod_e = TRY(chmod(path, 0777));
    int fchmodat_e = TRY(fchmodat(AT_FDCWD, path, 0777, 0));
    int fchmodat2_e = TRY(syscall(452 /* fchmodat2 */, AT_FDCWD, path, 0777, 0));
    int chown_e = TRY(chown(path, 65534, 65534));
    int lchown_e = TRY(lchown(path, 65534, 65534));
    int setxattr_e = TRY(setxattr(path, "user.wh", "x", 1, 0));
    int removexattr_e = TRY(removexattr(path, "security.selinux"));
    int utimensat_e = TRY(utimensat(AT_FDCWD, path, zero, 0));
    int utimes_e = TRY(utimes(path, zero_tv));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int open_e = fd < 0 ? errno : 0;
    int fchmod_e = fd < 0 ? -1 : TRY(fchmod(fd, 0777));
    int fchown_e = fd < 0 ? -1 : TRY(fchown(fd, 65534, 65534));
    int fsetxattr_e = fd < 0 ? -1 : TRY(fsetxattr(fd, "user.wh", "x", 1, 0));
    int futimens_e = fd < 0 ? -1 : TRY(futimens(fd, zero));
    if (fd >= 0) close(fd);
    int own = open("own.txt", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (own >= 0) close(own);
    int inside_e = TRY(chmod("own.txt", 0600));
    static char json[1024];
    snprintf(json, sizeof json,
             "{\"chmod\":%d,\"fchmodat\":%d,\"fchmodat2\":%d,\"chown\":%d,\"lchown\":%d,\"setxattr\":%d,"
             "\"removexattr\":%d,\"utimensat\":%d,\"utimes\":%d,\"open\":%d,\"fchmod\":%d,\"fchown\":%d,"
             "\"fsetxattr\":%d,\"futimens\":%d,\"inside_chmod\":%d}",
             chmod_e, fchmodat_e, fchmodat2_e, chown_e, lchown_e, setxattr_e, removexattr_e, utimensat_e, utimes_e,
             open_e, fchmod_e, fchown_e, fsetxattr_e, futimens_e, inside_e);
    hx_report(ctx, complete, completion_context, json);
}

HX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
