/*
 * sandbox_view.c — the mount namespace layer: the plugin sees a minimal
 * root built of what it may use, as bubblewrap does, instead of the host's
 * whole tree.
 *
 * In a private mount namespace (sandbox_unshare.c) the runner builds a new
 * root on a small tmpfs and pivots into it. It holds, at their usual
 * paths: the system paths Landlock grants (sandbox_landlock.c,
 * wh_system_read_paths: /usr, /lib*, /bin, /opt, a few /etc files, ...),
 * the plugin file and its directory and the policy's extra read-only paths,
 * all bound read-only; the data directory and the extra read-write paths,
 * bound read-write (nosuid, nodev, noexec); /dev with null, zero, random
 * and urandom only; and a fresh /proc of the plugin's PID namespace
 * (sandbox_pidns.c), read-only. Symbolic links among them (/lib ->
 * usr/lib, /etc/localtime, /etc/resolv.conf) are links again, their
 * targets bound too. Then the tmpfs itself becomes read-only.
 *
 * What that closes, whatever the plugin's uid (root included; the mount
 * calls that could undo it are trapped by seccomp):
 *  - chmod, chown, setxattr, removexattr and utimes, by path or by
 *    descriptor, fail with EROFS everywhere but the data directory (the
 *    kernel checks the mount of the file, which seccomp cannot see);
 *  - pathname Unix sockets (the daemon's control socket, D-Bus, systemd,
 *    agents) are not in the tree, so cannot be connected to;
 *  - /proc lists only the plugin's own processes: no other process's
 *    environ, maps or auxv.
 * Landlock stays on top as a second, independent wall.
 */
#define _GNU_SOURCE
#include "sandbox_layers.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV 0x00000004
#define MOUNT_ATTR_NOEXEC 0x00000008
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
struct wh_mount_attr {
    uint64_t attr_set, attr_clr, propagation, userns_fd;
};

enum { VIEW_READ_ONLY, VIEW_READ_WRITE, VIEW_DEVICE };

typedef struct view_entry {
    char path[PATH_MAX];   /* where it appears in the new root */
    char link[PATH_MAX];   /* a symbolic link's text, or "" */
    int kind;              /* VIEW_* */
    int fd;                /* O_PATH of the source, or -1 for a link */
    int is_directory;
} view_entry;

#define VIEW_MAX_ENTRIES 220

typedef struct view {
    view_entry entries[VIEW_MAX_ENTRIES];
    size_t count;
    char staging[32];
} view;

/* True if `path` is `base` or beneath it. */
static int beneath(const char *path, const char *base) {
    size_t n = strlen(base);
    if (n == 1 && base[0] == '/') return 1;
    return strncmp(path, base, n) == 0 && (path[n] == 0 || path[n] == '/');
}

/* True if an entry of `kind` already shows `path` (the same or a parent). */
static int covered(const view *v, const char *path, int kind) {
    for (size_t i = 0; i < v->count; i++)
        if (v->entries[i].kind == kind && !v->entries[i].link[0] && beneath(path, v->entries[i].path)) return 1;
    return 0;
}

/* Adds `path` (absolute, existing); a symbolic link becomes a link plus
 * its target (followed up to 8 links deep). Missing paths are skipped. */
static void add(view *v, const char *path, int kind, int depth) {
    if (!path || path[0] != '/' || depth > 8 || v->count >= VIEW_MAX_ENTRIES) return;
    if (strlen(path) >= PATH_MAX) return;
    struct stat st;
    if (lstat(path, &st) != 0) return;
    view_entry *e = &v->entries[v->count];
    memset(e, 0, sizeof *e);
    snprintf(e->path, sizeof e->path, "%s", path);
    e->kind = kind;
    e->fd = -1;
    if (S_ISLNK(st.st_mode)) {
        ssize_t n = readlink(path, e->link, sizeof e->link - 1);
        if (n <= 0) return;
        e->link[n] = 0;
        v->count++;
        char target[PATH_MAX];
        if (realpath(path, target) && !covered(v, target, kind)) add(v, target, kind, depth + 1);
        return;
    }
    e->fd = open(path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
    if (e->fd < 0) return;
    e->is_directory = S_ISDIR(st.st_mode);
    v->count++;
}

/* mkdir -p of `path`'s directories (the last component too if `last`). */
static int make_dirs(char *path, int last) {
    for (char *slash = strchr(path + 1, '/');; slash = strchr(slash + 1, '/')) {
        if (!slash && !last) return 0;
        if (slash) *slash = 0;
        int rc = mkdir(path, 0755);
        int e = errno;
        if (slash) *slash = '/';
        if (rc != 0 && e != EEXIST) {
            errno = e;
            return -1;
        }
        if (!slash) return 0;
    }
}

static int set_attributes(const char *target, uint64_t set) {
    struct wh_mount_attr attr = {set, 0, 0, 0};
    if (syscall(SYS_mount_setattr, AT_FDCWD, target, AT_RECURSIVE, &attr, sizeof attr) == 0) return 0;
    if (errno != ENOSYS) return -1;
    /* Before Linux 5.12: the top mount only. */
    unsigned long flags = MS_REMOUNT | MS_BIND | MS_NOSUID;
    if (set & MOUNT_ATTR_RDONLY) flags |= MS_RDONLY;
    if (set & MOUNT_ATTR_NODEV) flags |= MS_NODEV;
    if (set & MOUNT_ATTR_NOEXEC) flags |= MS_NOEXEC;
    return mount(NULL, target, NULL, flags, NULL);
}

/* Puts one entry into the staging root. */
static int place(const view *v, const view_entry *e, const wh_sandbox_policy *p, char *error, size_t error_size) {
    char target[PATH_MAX + 32];
    snprintf(target, sizeof target, "%s%s", v->staging, e->path);
    if (e->link[0]) {
        if (make_dirs(target, 0) != 0 || (symlink(e->link, target) != 0 && errno != EEXIST)) goto failed;
        return 0;
    }
    if (e->is_directory) {
        if (make_dirs(target, 1) != 0) goto failed;
    } else {
        if (make_dirs(target, 0) != 0) goto failed;
        int fd = open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0) close(fd);
        else if (errno != EEXIST && errno != EROFS && errno != EISDIR) goto failed;
    }
    char source[64];
    snprintf(source, sizeof source, "/proc/self/fd/%d", e->fd);
    if (mount(source, target, NULL, MS_BIND | MS_REC, NULL) != 0) goto failed;
    uint64_t attributes = MOUNT_ATTR_NOSUID;
    if (e->kind == VIEW_READ_ONLY) attributes |= MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV;
    if (e->kind == VIEW_READ_WRITE) {
        attributes |= MOUNT_ATTR_NODEV;
        /* No executable code from writable places (Landlock refuses execve
         * there; noexec refuses mmap(PROT_EXEC) too), unless the plugin
         * itself lives beneath. */
        if (!p->plugin_path || !beneath(p->plugin_path, e->path)) attributes |= MOUNT_ATTR_NOEXEC;
    }
    if (set_attributes(target, attributes) != 0) goto failed;
    return 0;
failed:
    snprintf(error, error_size, "%s: %s", target, strerror(errno));
    return -1;
}

static int by_path(const void *a, const void *b) {
    return strcmp(((const view_entry *)a)->path, ((const view_entry *)b)->path);
}

/* Builds the new root in v->staging (a tmpfs). */
static int build(view *v, const wh_sandbox_policy *p, int fresh_proc, char *error, size_t error_size) {
    qsort(v->entries, v->count, sizeof v->entries[0], by_path);
    for (size_t i = 0; i < v->count; i++)
        if (place(v, &v->entries[i], p, error, error_size) != 0) return -1;
    char target[64];
    snprintf(target, sizeof target, "%s/proc", v->staging);
    mkdir(target, 0555);
    if (fresh_proc && mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, NULL) != 0) {
        if (errno != EPERM && errno != EACCES) {
            snprintf(error, error_size, "mounting a fresh /proc: %s", strerror(errno));
            return -1;
        }
        /* A user namespace may not mount proc where parts of the host's
         * are hidden (a container's masked /proc paths). */
        fprintf(stderr, "widgethost-runner: sandbox: a fresh /proc could not be mounted (%s); /proc shows the "
                        "host's processes\n", strerror(errno));
        fresh_proc = 0;
    }
    if (!fresh_proc && (mount("/proc", target, NULL, MS_BIND | MS_REC, NULL) != 0 ||
                        set_attributes(target, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                                   MOUNT_ATTR_NOEXEC) != 0)) {
        snprintf(error, error_size, "binding /proc: %s", strerror(errno));
        return -1;
    }
    static const char *const dev_links[][2] = {
        {"/dev/fd", "/proc/self/fd"}, {"/dev/stdin", "/proc/self/fd/0"},
        {"/dev/stdout", "/proc/self/fd/1"}, {"/dev/stderr", "/proc/self/fd/2"}};
    for (size_t i = 0; i < sizeof dev_links / sizeof dev_links[0]; i++) {
        char link[64];
        snprintf(link, sizeof link, "%s%s", v->staging, dev_links[i][0]);
        char dev[64];
        snprintf(dev, sizeof dev, "%s/dev", v->staging);
        mkdir(dev, 0755);
        if (symlink(dev_links[i][1], link) != 0 && errno != EEXIST) {
            snprintf(error, error_size, "%s: %s", link, strerror(errno));
            return -1;
        }
    }
    /* The tmpfs itself read-only (the binds keep their own flags). */
    if (mount(NULL, v->staging, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0) {
        snprintf(error, error_size, "read-only root: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* Collects the entries, mounts the staging tmpfs, builds and pivots. */
static int make_root(view *v, const wh_sandbox_policy *p, int fresh_proc, char *error, size_t error_size) {
    for (const char *const *path = wh_system_read_paths; *path; path++)
        if (strcmp(*path, "/proc") != 0) add(v, *path, VIEW_READ_ONLY, 0);
    static const char *const devices[] = {"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", NULL};
    for (const char *const *path = devices; *path; path++) add(v, *path, VIEW_DEVICE, 0);
    /* The plugin's directory (libraries and resources beside it), but never
     * "/": a plugin at the top level gets its file alone, not the whole host
     * tree (which, bound over the new root, also left no room for /dev). */
    char *plugin_dir = wh_dirname_of(p->plugin_path);
    if (plugin_dir) add(v, strcmp(plugin_dir, "/") == 0 ? p->plugin_path : plugin_dir, VIEW_READ_ONLY, 0);
    free(plugin_dir);
    for (size_t i = 0; p->extra_read_only && p->extra_read_only[i]; i++)
        add(v, p->extra_read_only[i], VIEW_READ_ONLY, 0);
    if (p->data_directory && p->data_directory[0]) add(v, p->data_directory, VIEW_READ_WRITE, 0);
    for (size_t i = 0; p->extra_read_write && p->extra_read_write[i]; i++)
        add(v, p->extra_read_write[i], VIEW_READ_WRITE, 0);

    /* Staging: a tmpfs over a directory of the old tree; every source was
     * opened above, so covering that directory hides none of them. */
    static const char *const stagings[] = {"/tmp", "/mnt", "/run", "/var/tmp", NULL};
    int rc = -1;
    for (const char *const *s = stagings; *s && rc != 0; s++) {
        snprintf(v->staging, sizeof v->staging, "%s", *s);
        rc = mount("widgethost-root", v->staging, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=0755");
    }
    if (rc != 0) {
        snprintf(error, error_size, "mounting the new root's tmpfs: %s", strerror(errno));
        return -1;
    }
    rc = build(v, p, fresh_proc, error, error_size);
    if (rc == 0 && (chdir(v->staging) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 ||
                    umount2(".", MNT_DETACH) != 0 || chdir("/") != 0)) {
        snprintf(error, error_size, "pivot_root: %s", strerror(errno));
        rc = -1;
    }
    if (rc != 0) umount2(v->staging, MNT_DETACH);
    return rc;
}

int wh_apply_view(const wh_sandbox_policy *p, int fresh_proc, char *error, size_t error_size, int *skipped) {
    /* Nothing done here may reach the host's mounts. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        *skipped = 1;
        fprintf(stderr,
                "widgethost-runner: sandbox: no private mount namespace (%s); the plugin sees the host's file tree "
                "(Landlock still confines it)\n",
                strerror(errno));
        return 0;
    }
    view *v = calloc(1, sizeof *v);
    if (!v) {
        snprintf(error, error_size, "the new root: out of memory");
        return -1;
    }
    int rc = make_root(v, p, fresh_proc, error, error_size);
    for (size_t i = 0; i < v->count; i++)
        if (v->entries[i].fd >= 0) close(v->entries[i].fd);
    free(v);
    if (rc != 0) return -1;
    if (p->data_directory && p->data_directory[0] && chdir(p->data_directory) != 0) {
        snprintf(error, error_size, "chdir(%s) in the new root: %s", p->data_directory, strerror(errno));
        return -1;
    }
    return 0;
}
