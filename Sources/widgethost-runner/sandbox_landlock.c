/*
 * sandbox_landlock.c — the Landlock layer (docs/sandbox.md): read-only
 * system libraries, the plugin and its directory, read-write its data
 * directory; TCP bind/connect denied without network (ABI 4); signals and
 * abstract Unix sockets scoped to the sandbox (ABI 6).
 */
#define _GNU_SOURCE
#include "sandbox_layers.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Landlock, by raw system calls; constants newer than the installed   */
/* kernel headers are defined here (values from the kernel's uapi).   */
/* ------------------------------------------------------------------ */

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#define WH_LL_FS_EXECUTE (1ULL << 0)
#define WH_LL_FS_WRITE_FILE (1ULL << 1)
#define WH_LL_FS_READ_FILE (1ULL << 2)
#define WH_LL_FS_READ_DIR (1ULL << 3)
#define WH_LL_FS_REMOVE_DIR (1ULL << 4)
#define WH_LL_FS_REMOVE_FILE (1ULL << 5)
#define WH_LL_FS_MAKE_CHAR (1ULL << 6)
#define WH_LL_FS_MAKE_DIR (1ULL << 7)
#define WH_LL_FS_MAKE_REG (1ULL << 8)
#define WH_LL_FS_MAKE_SOCK (1ULL << 9)
#define WH_LL_FS_MAKE_FIFO (1ULL << 10)
#define WH_LL_FS_MAKE_BLOCK (1ULL << 11)
#define WH_LL_FS_MAKE_SYM (1ULL << 12)
#define WH_LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define WH_LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define WH_LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define WH_LL_NET_BIND_TCP (1ULL << 0)  /* ABI 4 */
#define WH_LL_NET_CONNECT_TCP (1ULL << 1)
#define WH_LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define WH_LL_SCOPE_SIGNAL (1ULL << 1)
#define WH_LL_RULE_PATH_BENEATH 1

struct wh_ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};
struct wh_ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

#define WH_LL_FILE_RIGHTS (WH_LL_FS_EXECUTE | WH_LL_FS_WRITE_FILE | WH_LL_FS_READ_FILE | WH_LL_FS_TRUNCATE | WH_LL_FS_IOCTL_DEV)
#define WH_LL_READ (WH_LL_FS_READ_FILE | WH_LL_FS_READ_DIR)
#define WH_LL_READ_EXEC (WH_LL_READ | WH_LL_FS_EXECUTE)

int wh_landlock_abi(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? -errno : (int)abi;
}

static uint64_t landlock_fs_rights(int abi) {
    uint64_t all = (WH_LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0..12 */
    if (abi >= 2) all |= WH_LL_FS_REFER;
    if (abi >= 3) all |= WH_LL_FS_TRUNCATE;
    if (abi >= 5) all |= WH_LL_FS_IOCTL_DEV;
    return all;
}

/* Adds a path-beneath rule; a path that does not exist is skipped. */
static int landlock_allow(int ruleset, const char *path, uint64_t access, uint64_t handled) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) access &= WH_LL_FILE_RIGHTS;
    struct wh_ll_path_beneath_attr rule = {.allowed_access = access & handled, .parent_fd = fd};
    int rc = rule.allowed_access == 0 ? 0 : (int)syscall(SYS_landlock_add_rule, ruleset, WH_LL_RULE_PATH_BENEATH, &rule, 0);
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}


/* What a plugin may read (and execute: a plugin may run system tools,
 * which inherit every layer). */
const char *const wh_system_read_paths[] = {
    "/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin", "/opt",
    /* the loader, time zones, name resolution, TLS roots, users */
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/timezone",
    "/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/etc/resolv.conf", "/etc/hosts",
    "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/host.conf", "/etc/services", "/etc/protocols",
    "/etc/passwd", "/etc/group", "/etc/locale.alias", "/etc/mime.types",
    /* what libc, the Swift runtime and Foundation read about the machine */
    "/sys/devices/system/cpu",
    /* /proc read-only: libdispatch (Swift concurrency) reads /proc/<tid>/stat
     * of its worker threads and traps if it cannot. With the PID namespace
     * and the view (sandbox_pidns.c, sandbox_view.c) it is a /proc of the
     * plugin's own processes only. */
    "/proc",
    NULL};

int wh_apply_landlock(const wh_sandbox_policy *p, char *error, size_t error_size, int *skipped) {
    int abi = wh_landlock_abi();
    if (abi < 0) {
        *skipped = 1;
        fprintf(stderr, "widgethost-runner: sandbox: Landlock unavailable (%s); files are not confined\n",
                strerror(-abi));
        return 0;
    }
    struct wh_ll_ruleset_attr attr = {0};
    attr.handled_access_fs = landlock_fs_rights(abi);
    size_t attr_size = sizeof attr.handled_access_fs;
    if (abi >= 4) {
        attr_size = 2 * sizeof(uint64_t);
        if (!p->allow_network) attr.handled_access_net = WH_LL_NET_BIND_TCP | WH_LL_NET_CONNECT_TCP;
    }
    if (abi >= 6) {
        attr_size = sizeof attr;
        attr.scoped = WH_LL_SCOPE_ABSTRACT_UNIX | WH_LL_SCOPE_SIGNAL;
    }
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
    if (ruleset < 0) {
        snprintf(error, error_size, "landlock_create_ruleset: %s", strerror(errno));
        return -1;
    }
    uint64_t handled = attr.handled_access_fs;
    int rc = 0;
    for (const char *const *path = wh_system_read_paths; *path && rc == 0; path++)
        rc = landlock_allow(ruleset, *path, WH_LL_READ_EXEC, handled);
    if (rc == 0) rc = landlock_allow(ruleset, "/dev/null", WH_LL_FS_READ_FILE | WH_LL_FS_WRITE_FILE, handled);
    if (rc == 0) rc = landlock_allow(ruleset, "/dev/zero", WH_LL_FS_READ_FILE, handled);
    if (rc == 0) rc = landlock_allow(ruleset, "/dev/urandom", WH_LL_FS_READ_FILE, handled);
    if (rc == 0) rc = landlock_allow(ruleset, "/dev/random", WH_LL_FS_READ_FILE, handled);
    char *plugin_dir = wh_dirname_of(p->plugin_path);
    if (rc == 0 && plugin_dir) rc = landlock_allow(ruleset, plugin_dir, WH_LL_READ, handled);
    free(plugin_dir);
    if (rc == 0 && p->plugin_path) rc = landlock_allow(ruleset, p->plugin_path, WH_LL_READ, handled);
    uint64_t data_rights = handled & ~(WH_LL_FS_MAKE_CHAR | WH_LL_FS_MAKE_BLOCK | WH_LL_FS_EXECUTE);
    if (rc == 0 && p->data_directory && p->data_directory[0])
        rc = landlock_allow(ruleset, p->data_directory, data_rights, handled);
    /* The plugin's own grants (SandboxPolicy.extraReadOnlyPaths and
     * extraReadWritePaths); a path that does not exist is skipped, with a
     * line in the call's log. */
    for (int w = 0; w < 2 && rc == 0; w++) {
        char **list = w ? p->extra_read_write : p->extra_read_only;
        for (size_t i = 0; list && list[i] && rc == 0; i++) {
            if (list[i][0] != '/') {
                fprintf(stderr, "widgethost-runner: sandbox: extra %s path %s is not absolute; not granted\n",
                        w ? "read-write" : "read-only", list[i]);
                continue;
            }
            if (access(list[i], F_OK) != 0) {
                fprintf(stderr, "widgethost-runner: sandbox: extra %s path %s: %s; not granted\n",
                        w ? "read-write" : "read-only", list[i], strerror(errno));
                continue;
            }
            rc = landlock_allow(ruleset, list[i], w ? data_rights : WH_LL_READ_EXEC, handled);
        }
    }
    if (rc != 0) {
        snprintf(error, error_size, "landlock_add_rule: %s", strerror(errno));
        close(ruleset);
        return -1;
    }
    if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
        snprintf(error, error_size, "landlock_restrict_self: %s", strerror(errno));
        close(ruleset);
        return -1;
    }
    close(ruleset);
    return 0;
}
int wh_landlock_scope_to_self(void) {
    if (wh_landlock_abi() < 6) return -1;
    struct wh_ll_ruleset_attr attr = {0, 0, WH_LL_SCOPE_ABSTRACT_UNIX | WH_LL_SCOPE_SIGNAL};
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (ruleset < 0) return -1;
    int rc = (int)syscall(SYS_landlock_restrict_self, ruleset, 0);
    close(ruleset);
    return rc == 0 ? 0 : -1;
}
