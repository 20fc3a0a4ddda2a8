/*
 * sandbox.c — the layers around plugin code (docs/sandbox.md).
 *
 * Applied in the runner, single-threaded, after LOAD and before dlopen:
 *   1. session: data directory as cwd, stdin /dev/null, fds above 3 closed
 *      (close_range), own session and process group (checked)
 *   1b. pids: a pids cgroup of its own (pids.max), which binds root too
 *   2. netns: a network namespace with no interface (unless the plugin may
 *      use the network): unshare(CLONE_NEWNET), or with CLONE_NEWUSER when
 *      unprivileged
 *   3. rlimits: address space, CPU, open files, file size, processes, no core
 *   4. PR_SET_NO_NEW_PRIVS
 *   5. Landlock: read-only system libraries, the plugin and its directory;
 *      read-write its data directory; nothing else. TCP bind/connect denied
 *      without network (ABI 4); signals and abstract sockets scoped (ABI 6)
 *   6. seccomp-bpf (libseccomp): dangerous calls fail with EPERM or trap:
 *      the runner's SIGSYS handler reports which call to the host, then
 *      the process dies of SIGSYS
 * A layer the kernel lacks is skipped with a line on stderr.
 */
#define _GNU_SOURCE
#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sched.h>
#include <seccomp.h>
#include <linux/filter.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "widgethost_wire.h"

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

static int landlock_abi(void) {
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

/* The parent directory of `path` (malloc'd). */
static char *dirname_of(const char *path) {
    char *copy = strdup(path ? path : "");
    if (!copy) return NULL;
    char *slash = strrchr(copy, '/');
    if (slash == copy) slash[1] = 0;
    else if (slash) *slash = 0;
    else strcpy(copy, ".");
    return copy;
}

/* What a plugin may read (and execute: a plugin may run system tools,
 * which inherit every layer). */
static const char *const system_read_paths[] = {
    "/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin", "/opt",
    /* the loader, time zones, name resolution, TLS roots, users */
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/timezone",
    "/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/etc/resolv.conf", "/etc/hosts",
    "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/host.conf", "/etc/services", "/etc/protocols",
    "/etc/passwd", "/etc/group", "/etc/locale.alias", "/etc/mime.types",
    /* what libc, the Swift runtime and Foundation read about the machine */
    "/sys/devices/system/cpu",
    /* /proc read-only: libdispatch (Swift concurrency) reads /proc/<tid>/stat
     * of its worker threads and traps if it cannot. Other processes' private
     * entries (mem, environ, fd, ...) stay closed: they need ptrace access,
     * which Landlock refuses across domains. */
    "/proc",
    NULL};

static int apply_landlock(const wh_sandbox_policy *p, char *error, size_t error_size, int *skipped) {
    int abi = landlock_abi();
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
    for (const char *const *path = system_read_paths; *path && rc == 0; path++)
        rc = landlock_allow(ruleset, *path, WH_LL_READ_EXEC, handled);
    if (rc == 0) rc = landlock_allow(ruleset, "/dev/null", WH_LL_FS_READ_FILE | WH_LL_FS_WRITE_FILE, handled);
    if (rc == 0) rc = landlock_allow(ruleset, "/dev/zero", WH_LL_FS_READ_FILE, handled);
    if (rc == 0) rc = landlock_allow(ruleset, "/dev/urandom", WH_LL_FS_READ_FILE, handled);
    if (rc == 0) rc = landlock_allow(ruleset, "/dev/random", WH_LL_FS_READ_FILE, handled);
    char *plugin_dir = dirname_of(p->plugin_path);
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

/* ------------------------------------------------------------------ */
/* seccomp-bpf                                                         */
/* ------------------------------------------------------------------ */

/* Calls no provider needs and that attack the machine: the filter traps
 * them (SECCOMP_RET_TRAP: the call does not run, SIGSYS is forced on the
 * thread); the runner's handler reports the call to the host and kills the
 * process with SIGSYS, which the host reports as forbiddenSyscall. */
static const char *const killed_syscalls[] = {
    "ptrace", "process_vm_readv", "process_vm_writev", "kexec_load", "kexec_file_load",
    "init_module", "finit_module", "delete_module", "mount", "umount2", "pivot_root",
    "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "bpf", "open_by_handle_at", "reboot", "swapon", "swapoff", "iopl", "ioperm",
    "settimeofday", "clock_settime", "clock_adjtime", "sethostname", "setdomainname", NULL};

/* Calls a library may try and cope with failing: EPERM. */
static const char *const eperm_syscalls[] = {
    "perf_event_open", "keyctl", "add_key", "request_key", "unshare", "setns", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "name_to_handle_at", "fanotify_init",
    "acct", "quotactl", "syslog", "adjtimex", "chroot", "lookup_dcookie", "vhangup",
    /* leaving the process group would let a grandchild outlive the call */
    "setsid", "setpgid", NULL};

/* ------------------------------------------------------------------ */
/* Naming the forbidden call: a SIGSYS handler                         */
/* ------------------------------------------------------------------ */

/* The trapped calls' numbers and names on this architecture, filled while
 * the filter is built (the handler may not call libseccomp: it allocates). */
#define WH_MAX_TRAPPED 64
static struct {
    int nr;
    const char *name;
} trapped[WH_MAX_TRAPPED];
static size_t trapped_count;

#if defined(__x86_64__)
#define WH_NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define WH_NATIVE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
#define WH_NATIVE_AUDIT_ARCH AUDIT_ARCH_RISCV64
#else
#define WH_NATIVE_AUDIT_ARCH 0
#endif

static size_t put_u32(uint8_t *at, uint32_t v) {
    at[0] = (uint8_t)v;
    at[1] = (uint8_t)(v >> 8);
    at[2] = (uint8_t)(v >> 16);
    at[3] = (uint8_t)(v >> 24);
    return 4;
}

/* Async-signal-safe: raw system calls and a static table only. Reports the
 * trapped call in one write to fd 3 (WH_MSG_FORBIDDEN_SYSCALL), then dies
 * of SIGSYS: SA_RESETHAND put the default action back, SA_NODEFER leaves
 * the signal unblocked, so the self-directed SIGSYS terminates the whole
 * process (every thread) with the status the host expects. */
static void on_sigsys(int signal, siginfo_t *info, void *context) {
    (void)context;
    int saved = errno;
    if (info && info->si_code == 1 /* SYS_SECCOMP */) {
        uint32_t nr = (uint32_t)info->si_syscall;
        uint32_t arch = (uint32_t)info->si_arch;
        const char *name = "";
        for (size_t i = 0; i < trapped_count && arch == WH_NATIVE_AUDIT_ARCH; i++)
            if ((uint32_t)trapped[i].nr == nr) name = trapped[i].name;
        size_t name_length = strlen(name);
        if (name_length > 64) name_length = 64;
        uint8_t frame[WH_WIRE_HEADER_SIZE + 16 + 64];
        size_t payload = 16 + name_length, n = 0;
        n += put_u32(frame + n, WH_WIRE_MAGIC);
        n += put_u32(frame + n, (uint32_t)WH_WIRE_VERSION | (uint32_t)WH_MSG_FORBIDDEN_SYSCALL << 16);
        n += put_u32(frame + n, (uint32_t)payload);
        n += put_u32(frame + n, 0);
        n += put_u32(frame + n, (uint32_t)syscall(SYS_getpid));
        n += put_u32(frame + n, nr);
        n += put_u32(frame + n, arch);
        n += put_u32(frame + n, (uint32_t)name_length);
        memcpy(frame + n, name, name_length);
        n += name_length;
        ssize_t ignored = write(WH_WIRE_FD, frame, n);
        (void)ignored;
    }
    syscall(SYS_tgkill, (pid_t)syscall(SYS_getpid), (pid_t)syscall(SYS_gettid), signal);
    errno = saved;
}

/* Installs the handler; the filter then refuses to replace it (EPERM for
 * rt_sigaction(SIGSYS, act != NULL)). A plugin that blocks SIGSYS still
 * dies of it (the kernel forces a trap's SIGSYS with the default action),
 * unnamed. */
static int install_sigsys_handler(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_sigsys;
    action.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    return sigaction(SIGSYS, &action, NULL);
}

static int rule(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned count,
                const struct scmp_arg_cmp *args) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return 0; /* not on this architecture */
    return seccomp_rule_add_array(ctx, action, nr, count, args);
}

static int apply_seccomp(const wh_sandbox_policy *p, char *error, size_t error_size, int *skipped) {
    if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL) {
        *skipped = 1;
        fprintf(stderr, "widgethost-runner: sandbox: seccomp unavailable (kernel without CONFIG_SECCOMP)\n");
        return 0;
    }
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        snprintf(error, error_size, "seccomp_init failed");
        return -1;
    }
    /* A call of a foreign ABI (int 0x80 from x86-64 code, x32) traps too:
     * the handler reports its number and architecture, without a name. */
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_TRAP);
    trapped_count = 0;
    for (const char *const *n = killed_syscalls; *n && rc == 0; n++) {
        int nr = seccomp_syscall_resolve_name(*n);
        if (nr != __NR_SCMP_ERROR && trapped_count < WH_MAX_TRAPPED) {
            trapped[trapped_count].nr = nr;
            trapped[trapped_count].name = *n;
            trapped_count++;
        }
        rc = rule(ctx, SCMP_ACT_TRAP, *n, 0, NULL);
    }
    /* Keep the runner's SIGSYS handler: changing SIGSYS's action fails. */
    if (rc == 0) {
        struct scmp_arg_cmp a[] = {SCMP_A0(SCMP_CMP_EQ, SIGSYS), SCMP_A1(SCMP_CMP_NE, 0)};
        rc = rule(ctx, SCMP_ACT_ERRNO(EPERM), "rt_sigaction", 2, a);
    }
    for (const char *const *n = eperm_syscalls; *n && rc == 0; n++) {
        if (p->fork_server && strcmp(*n, "setpgid") == 0) continue; /* sealed per call child */
        rc = rule(ctx, SCMP_ACT_ERRNO(EPERM), *n, 0, NULL);
    }
    /* personality: only the query (0xffffffff); changing it (e.g.
     * READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE) fails. */
    if (rc == 0) {
        struct scmp_arg_cmp a = SCMP_A0(SCMP_CMP_NE, 0xffffffffu);
        rc = rule(ctx, SCMP_ACT_ERRNO(EPERM), "personality", 1, &a);
    }
    /* New namespaces through clone: EPERM. clone3 passes its flags in
     * memory a filter cannot read: ENOSYS makes libc fall back to clone. */
    static const unsigned long ns_flags[] = {CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
                                             CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, 0x00000080UL /* CLONE_NEWTIME */};
    for (size_t i = 0; i < sizeof ns_flags / sizeof ns_flags[0] && rc == 0; i++) {
        struct scmp_arg_cmp a = SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]);
        rc = rule(ctx, SCMP_ACT_ERRNO(EPERM), "clone", 1, &a);
    }
    if (rc == 0) rc = rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL);
    /* Sockets: Unix sockets always; internet (and netlink) only with network;
     * raw and packet sockets never. */
    if (rc == 0 && !p->allow_network) {
        struct scmp_arg_cmp a = SCMP_A0(SCMP_CMP_NE, AF_UNIX);
        rc = rule(ctx, SCMP_ACT_ERRNO(EPERM), "socket", 1, &a);
    }
    if (rc == 0 && p->allow_network) {
        struct scmp_arg_cmp packet = SCMP_A0(SCMP_CMP_EQ, AF_PACKET);
        rc = rule(ctx, SCMP_ACT_ERRNO(EPERM), "socket", 1, &packet);
        struct scmp_arg_cmp raw = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_RAW);
        if (rc == 0) rc = rule(ctx, SCMP_ACT_ERRNO(EPERM), "socket", 1, &raw);
    }
    if (rc != 0) {
        snprintf(error, error_size, "seccomp_rule_add: %s", strerror(-rc));
        seccomp_release(ctx);
        return -1;
    }
    rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc != 0) {
        snprintf(error, error_size, "seccomp_load: %s", strerror(-rc));
        return -1;
    }
    return 0;
}

int wh_sandbox_seal_process_group(void) {
    /* A hand-written filter rather than libseccomp: this runs in every call
     * child, so it must cost microseconds. No architecture check is needed:
     * the process-wide filter already kills calls of a foreign ABI. */
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_setpgid, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_setsid, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
    };
    struct sock_fprog program = {(unsigned short)(sizeof code / sizeof code[0]), code};
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* Network namespace                                                   */
/* ------------------------------------------------------------------ */

static int write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = write(fd, text, strlen(text));
    int e = errno;
    close(fd);
    errno = e;
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Returns 0 and how in *how, or -errno. */
static int enter_netns(const char **how) {
    if (unshare(CLONE_NEWNET) == 0) {
        *how = "unshare(CLONE_NEWNET)";
        return 0;
    }
    if (errno != EPERM) return -errno;
    /* Unprivileged: a user namespace first, mapping our own ids. */
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) return -errno;
    char map[64];
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    if (write_file("/proc/self/uid_map", map) != 0) return -errno;
    write_file("/proc/self/setgroups", "deny\n");
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    if (write_file("/proc/self/gid_map", map) != 0) return -errno;
    *how = "unshare(CLONE_NEWUSER | CLONE_NEWNET)";
    return 0;
}

/* ------------------------------------------------------------------ */
/* pids cgroup                                                         */
/* ------------------------------------------------------------------ */

/* RLIMIT_NPROC does not bind root; a pids cgroup does. The runner makes a
 * cgroup of its own next to where it runs, sets pids.max and moves itself
 * in: everything it starts (fork server children, a plugin's processes and
 * threads) counts against the one limit. A cgroup cannot remove itself, so
 * each runner first removes the `widgethost-<pid>-*` cgroups of runners
 * that are gone (rmdir fails with EBUSY on one still in use). */

#define WH_CGROUP_PREFIX "widgethost-"

static int read_text(const char *path, char *text, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, text, size - 1);
    int e = errno;
    close(fd);
    if (n < 0) {
        errno = e;
        return -1;
    }
    text[n] = 0;
    return 0;
}

/* True if the space- or comma-separated `list` holds `word`. */
static int has_word(const char *list, const char *word) {
    size_t n = strlen(word);
    for (const char *at = list; (at = strstr(at, word)) != NULL; at += n) {
        int starts = at == list || at[-1] == ' ' || at[-1] == ',';
        int ends = at[n] == 0 || at[n] == ' ' || at[n] == ',' || at[n] == '\n';
        if (starts && ends) return 1;
    }
    return 0;
}

/* The directory of the pids hierarchy where the runner makes its cgroup:
 * cgroup v1, the pids hierarchy's directory of our own cgroup; v2, our own
 * cgroup if it is the root, else its parent when the parent gives its
 * children the pids controller (a delegated subtree where the host runs in
 * a leaf). Returns 1 (v1) or 2 (v2) and the directory in `dir`, or 0 with
 * the reason in `why`. */
static int pids_base(char *dir, size_t size, char *why, size_t why_size) {
    char line[1024], v1_path[512] = "", v2_path[512] = "";
    int have_v1 = 0, have_v2 = 0;
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f) {
        snprintf(why, why_size, "/proc/self/cgroup: %s", strerror(errno));
        return 0;
    }
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *controllers = strchr(line, ':');
        char *path = controllers ? strchr(controllers + 1, ':') : NULL;
        if (!path) continue;
        *path++ = 0;
        controllers++;
        if (!controllers[0] && strcmp(line, "0") == 0) {
            snprintf(v2_path, sizeof v2_path, "%s", path);
            have_v2 = 1;
        } else if (has_word(controllers, "pids")) {
            snprintf(v1_path, sizeof v1_path, "%s", path);
            have_v1 = 1;
        }
    }
    fclose(f);
    /* Mount points from mountinfo: "... root mountpoint ... - fstype src opts". */
    char v1_mount[512] = "", v1_root[512] = "", v2_mount[512] = "", v2_root[512] = "";
    f = fopen("/proc/self/mountinfo", "re");
    if (!f) {
        snprintf(why, why_size, "/proc/self/mountinfo: %s", strerror(errno));
        return 0;
    }
    while (fgets(line, sizeof line, f)) {
        char root[512], mount[512], fstype[64], options[512];
        char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %*s %511s %511s", root, mount) != 2) continue;
        if (sscanf(dash + 3, "%63s %*s %511s", fstype, options) != 2) continue;
        if (strcmp(fstype, "cgroup") == 0 && has_word(options, "pids") && !v1_mount[0]) {
            snprintf(v1_mount, sizeof v1_mount, "%s", mount);
            snprintf(v1_root, sizeof v1_root, "%s", root);
        } else if (strcmp(fstype, "cgroup2") == 0 && !v2_mount[0]) {
            snprintf(v2_mount, sizeof v2_mount, "%s", mount);
            snprintf(v2_root, sizeof v2_root, "%s", root);
        }
    }
    fclose(f);
    const char *path = NULL, *mount = NULL, *root = NULL;
    int version = 0;
    if (have_v1 && v1_mount[0]) path = v1_path, mount = v1_mount, root = v1_root, version = 1;
    else if (have_v2 && v2_mount[0]) path = v2_path, mount = v2_mount, root = v2_root, version = 2;
    if (!version) {
        snprintf(why, why_size, "no pids cgroup controller is mounted (cgroup v1 pids or cgroup2)");
        return 0;
    }
    /* The mount shows the hierarchy from `root` down. */
    size_t root_length = strcmp(root, "/") == 0 ? 0 : strlen(root);
    if (root_length && strncmp(path, root, root_length) == 0) path += root_length;
    snprintf(dir, size, "%s%s", mount, strcmp(path, "/") == 0 ? "" : path);
    if (version == 1) return 1;
    char text[256], file[1100];
    snprintf(file, sizeof file, "%s/cgroup.controllers", dir);
    if (read_text(file, text, sizeof text) != 0 || !has_word(text, "pids")) {
        snprintf(why, why_size, "cgroup v2: the pids controller is not available in %s", dir);
        return 0;
    }
    snprintf(file, sizeof file, "%s/cgroup.subtree_control", dir);
    if (read_text(file, text, sizeof text) == 0 && has_word(text, "pids")) return 2;
    if (strcmp(path, "/") == 0 || !path[0]) {
        /* The root cgroup may have processes and enabled controllers. */
        if (write_file(file, "+pids") == 0) return 2;
        snprintf(why, why_size, "cgroup v2: enabling pids in %s: %s", file, strerror(errno));
        return 0;
    }
    /* A non-root cgroup with processes (ours) cannot enable controllers for
     * children: make ours a sibling, in the parent, if the parent allows. */
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    snprintf(file, sizeof file, "%s/cgroup.subtree_control", dir);
    if (read_text(file, text, sizeof text) == 0 && has_word(text, "pids") && access(dir, W_OK) == 0) return 2;
    snprintf(why, why_size,
             "cgroup v2: the host's cgroup %s has processes and its parent does not delegate the pids controller "
             "(run widgethost in a leaf of a delegated subtree, e.g. systemd Delegate=yes)",
             path);
    return 0;
}

/* Removes the empty cgroups of runners that are gone from `base`. Each is
 * named after its runner's pid: one whose runner lives (it may be between
 * mkdir and moving in) is left alone. */
static void sweep_pids_cgroups(const char *base) {
    DIR *d = opendir(base);
    if (!d) return;
    struct dirent *e;
    char path[1400];
    size_t prefix = strlen(WH_CGROUP_PREFIX);
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, WH_CGROUP_PREFIX, prefix) != 0) continue;
        long owner = strtol(e->d_name + prefix, NULL, 10);
        if (owner > 0 && (kill((pid_t)owner, 0) == 0 || errno == EPERM)) continue;
        snprintf(path, sizeof path, "%s/%s", base, e->d_name);
        rmdir(path); /* EBUSY while a runner or its processes are in it */
    }
    closedir(d);
}

/* Moves this process into a new pids cgroup with pids.max = `max`. Returns
 * 1 and the cgroup's path in `where`, 0 when unavailable (`where` says
 * why), or -1 when it failed half-way (`where` says why). */
static int enter_pids_cgroup(uint64_t max, char *where, size_t where_size) {
    char base[1024], why[512] = "";
    int version = pids_base(base, sizeof base, why, sizeof why);
    if (!version) {
        snprintf(where, where_size, "%s", why);
        return 0;
    }
    if (access(base, W_OK) != 0) {
        snprintf(where, where_size, "cannot create a cgroup in %s: %s", base, strerror(errno));
        return 0;
    }
    sweep_pids_cgroups(base);
    char dir[1200], file[1300], value[32];
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    snprintf(value, sizeof value, "%llu\n", (unsigned long long)max);
    for (int attempt = 0;; attempt++) {
        snprintf(dir, sizeof dir, "%s/" WH_CGROUP_PREFIX "%d-%lx", base, (int)getpid(),
                 (unsigned long)(now.tv_nsec + attempt));
        if (mkdir(dir, 0755) != 0) {
            if (errno == EEXIST && attempt < 3) continue;
            snprintf(where, where_size, "mkdir %s: %s", dir, strerror(errno));
            return errno == EACCES || errno == EPERM || errno == EROFS ? 0 : -1;
        }
        snprintf(file, sizeof file, "%s/pids.max", dir);
        if (write_file(file, value) != 0) {
            /* Another runner's sweep may have removed it before we were in. */
            if (errno == ENOENT && attempt < 3) continue;
            snprintf(where, where_size, "%s: %s", file, strerror(errno));
            rmdir(dir);
            return -1;
        }
        snprintf(file, sizeof file, "%s/cgroup.procs", dir);
        if (write_file(file, "0\n") != 0) {
            if (errno == ENOENT && attempt < 3) continue;
            snprintf(where, where_size, "%s: %s", file, strerror(errno));
            rmdir(dir);
            return -1;
        }
        snprintf(where, where_size, "%s", dir);
        return version;
    }
}

/* ------------------------------------------------------------------ */
/* rlimits                                                             */
/* ------------------------------------------------------------------ */

static int set_limit(int resource, uint64_t value, uint64_t hard_extra) {
    if (value == 0) return 0;
    struct rlimit current;
    if (getrlimit(resource, &current) != 0) return -1;
    struct rlimit next = {(rlim_t)value, (rlim_t)(value + hard_extra)};
    /* Never raise a limit the host already has lower. */
    if (current.rlim_max != RLIM_INFINITY && next.rlim_max > current.rlim_max) next.rlim_max = current.rlim_max;
    if (next.rlim_cur > next.rlim_max) next.rlim_cur = next.rlim_max;
    return setrlimit(resource, &next);
}

static int apply_rlimits(const wh_sandbox_policy *p) {
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -1;
    /* CPU: SIGXCPU at the soft limit, SIGKILL a second later. */
    if (set_limit(RLIMIT_CPU, p->cpu_seconds, 1) != 0) return -1;
    if (set_limit(RLIMIT_AS, p->address_space_bytes, 0) != 0) return -1;
    if (set_limit(RLIMIT_NOFILE, p->open_files, 0) != 0) return -1;
    if (set_limit(RLIMIT_FSIZE, p->file_size_bytes, 0) != 0) return -1;
    if (set_limit(RLIMIT_NPROC, p->processes, 0) != 0) return -1;
    return 0;
}

/* ------------------------------------------------------------------ */

int64_t wh_sandbox_apply(const wh_sandbox_policy *p, char *error, size_t error_size) {
    int64_t active = 0;
    /* Session layer (always): the host's posix_spawn set most of it up;
     * make sure of each piece here, where it is cheap. */
    if (p->data_directory && p->data_directory[0] && chdir(p->data_directory) != 0) {
        snprintf(error, error_size, "chdir(%s): %s", p->data_directory, strerror(errno));
        return -1;
    }
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd >= 0) {
        if (null_fd != 0) {
            dup2(null_fd, 0);
            close(null_fd);
        }
    }
    syscall(SYS_close_range, WH_WIRE_FD + 1, ~0U, 0);
    if (getsid(0) != getpid()) setsid();

    /* Before the network namespace: a user namespace would not be allowed
     * to write the host's cgroup files. */
    if ((p->flags & WH_SANDBOX_PIDS) && p->max_tasks > 0) {
        char where[1400];
        int rc = enter_pids_cgroup(p->max_tasks, where, sizeof where);
        if (rc > 0) active |= WH_SANDBOX_PIDS;
        else if (rc == 0)
            fprintf(stderr, "widgethost-runner: sandbox: no pids cgroup (%s); processes are not limited for root\n",
                    where);
        else {
            snprintf(error, error_size, "pids cgroup: %s", where);
            return -1;
        }
    }
    if ((p->flags & WH_SANDBOX_NETNS) && !p->allow_network) {
        const char *how = NULL;
        int rc = enter_netns(&how);
        if (rc == 0) active |= WH_SANDBOX_NETNS;
        else fprintf(stderr, "widgethost-runner: sandbox: no network namespace (%s); relying on seccomp and Landlock\n",
                     strerror(-rc));
    }
    if (p->flags & WH_SANDBOX_RLIMITS) {
        if (apply_rlimits(p) != 0) {
            snprintf(error, error_size, "setrlimit: %s", strerror(errno));
            return -1;
        }
        active |= WH_SANDBOX_RLIMITS;
    }
    if (p->flags & (WH_SANDBOX_NO_NEW_PRIVS | WH_SANDBOX_LANDLOCK | WH_SANDBOX_SECCOMP)) {
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
            snprintf(error, error_size, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
            return -1;
        }
        active |= WH_SANDBOX_NO_NEW_PRIVS;
    }
    if (p->flags & WH_SANDBOX_LANDLOCK) {
        int skipped = 0;
        if (apply_landlock(p, error, error_size, &skipped) != 0) return -1;
        if (!skipped) active |= WH_SANDBOX_LANDLOCK;
    }
    if (p->flags & WH_SANDBOX_SECCOMP) {
        int skipped = 0;
        if (install_sigsys_handler() != 0) {
            snprintf(error, error_size, "sigaction(SIGSYS): %s", strerror(errno));
            return -1;
        }
        if (apply_seccomp(p, error, error_size, &skipped) != 0) return -1;
        if (!skipped) active |= WH_SANDBOX_SECCOMP;
    }
    return active;
}

/* ------------------------------------------------------------------ */
/* sandbox-check                                                       */
/* ------------------------------------------------------------------ */

typedef struct check_result {
    int active;
    char detail[256];
} check_result;

/* Runs `probe` in a throwaway child; it writes its detail line to `fd`
 * and exits 0 when the layer works. */
static check_result run_probe(void (*probe)(int fd)) {
    check_result r = {0, ""};
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(r.detail, sizeof r.detail, "pipe: %s", strerror(errno));
        return r;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(r.detail, sizeof r.detail, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return r;
    }
    if (pid == 0) {
        close(fds[0]);
        probe(fds[1]);
        _exit(1);
    }
    close(fds[1]);
    ssize_t n = 0, got;
    while ((got = read(fds[0], r.detail + n, sizeof r.detail - 1 - (size_t)n)) > 0) n += got;
    r.detail[n > 0 ? n : 0] = 0;
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    r.active = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (WIFSIGNALED(status) && !r.detail[0])
        snprintf(r.detail, sizeof r.detail, "the probe was killed by signal %d", WTERMSIG(status));
    return r;
}

static void say(int fd, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void say(int fd, const char *format, ...) {
    char line[256];
    va_list ap;
    va_start(ap, format);
    vsnprintf(line, sizeof line, format, ap);
    va_end(ap);
    ssize_t ignored = write(fd, line, strlen(line));
    (void)ignored;
}

static void probe_session(int fd) {
    /* keep the report pipe as fd 3, the highest fd close_range leaves */
    if (dup2(fd, WH_WIRE_FD) < 0) _exit(1);
    fd = WH_WIRE_FD;
    if (setsid() < 0 && getsid(0) != getpid()) {
        say(fd, "setsid: %s", strerror(errno));
        _exit(1);
    }
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
        say(fd, "PR_SET_PDEATHSIG: %s", strerror(errno));
        _exit(1);
    }
    if (syscall(SYS_close_range, WH_WIRE_FD + 1, ~0U, 0) != 0) {
        say(fd, "close_range: %s", strerror(errno));
        _exit(1);
    }
    say(fd, "new session and process group, PR_SET_PDEATHSIG(SIGKILL), close_range, clean environment, "
            "cwd = data directory, stdin = /dev/null");
    _exit(0);
}

static void probe_rlimits(int fd) {
    wh_sandbox_policy p = {0};
    p.address_space_bytes = WH_SANDBOX_DEFAULT_ADDRESS_SPACE_MIB * 1024ULL * 1024ULL;
    p.cpu_seconds = WH_SANDBOX_DEFAULT_CPU_SECONDS;
    p.open_files = WH_SANDBOX_DEFAULT_OPEN_FILES;
    p.file_size_bytes = WH_SANDBOX_DEFAULT_FILE_SIZE_MIB * 1024ULL * 1024ULL;
    p.processes = WH_SANDBOX_DEFAULT_PROCESSES;
    if (apply_rlimits(&p) != 0) {
        say(fd, "setrlimit: %s", strerror(errno));
        _exit(1);
    }
    say(fd, "address space %u MiB, CPU %u s, %u open files, file size %u MiB, %u processes%s, no core files",
        (unsigned)WH_SANDBOX_DEFAULT_ADDRESS_SPACE_MIB, (unsigned)WH_SANDBOX_DEFAULT_CPU_SECONDS,
        (unsigned)WH_SANDBOX_DEFAULT_OPEN_FILES, (unsigned)WH_SANDBOX_DEFAULT_FILE_SIZE_MIB,
        (unsigned)WH_SANDBOX_DEFAULT_PROCESSES,
        geteuid() == 0 ? " (RLIMIT_NPROC does not bind root: the pids layer does)" : "");
    _exit(0);
}

static void probe_nnp(int fd) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
        say(fd, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
        _exit(1);
    }
    say(fd, "execve cannot gain privileges (setuid bits and file capabilities are ignored)");
    _exit(0);
}

static void probe_landlock(int fd) {
    int abi = landlock_abi();
    if (abi < 0) {
        say(fd, "%s", abi == -ENOSYS ? "the kernel has no Landlock (CONFIG_SECURITY_LANDLOCK)"
                      : abi == -EOPNOTSUPP ? "Landlock is built in but disabled (add landlock to the lsm= boot parameter)"
                                          : strerror(-abi));
        _exit(1);
    }
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    wh_sandbox_policy p = {0};
    p.plugin_path = "/nonexistent/plugin.so";
    p.data_directory = "/tmp";
    char error[128] = "";
    int skipped = 0;
    if (apply_landlock(&p, error, sizeof error, &skipped) != 0) {
        say(fd, "ABI %d, but applying it failed: %s", abi, error);
        _exit(1);
    }
    /* Outside the allowed paths, opening must now fail. */
    if (open("/var", O_RDONLY | O_CLOEXEC) >= 0) {
        say(fd, "ABI %d applied but did not confine opening /var", abi);
        _exit(1);
    }
    say(fd, "ABI %d: files%s%s", abi, abi >= 4 ? ", TCP bind/connect" : " (TCP needs ABI 4)",
        abi >= 6 ? ", signal and abstract-socket scoping" : " (scoping needs ABI 6)");
    _exit(0);
}

static void probe_seccomp(int fd) {
    if (fd == WH_WIRE_FD) fd = dup(fd); /* fd 3 is the test frame's */
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    install_sigsys_handler();
    wh_sandbox_policy p = {0};
    char error[128] = "";
    int skipped = 0;
    if (apply_seccomp(&p, error, sizeof error, &skipped) != 0 || skipped) {
        say(fd, "%s", skipped ? "the kernel has no seccomp filter mode" : error);
        _exit(1);
    }
    if (syscall(SYS_keyctl, 0, 0, 0, 0, 0) == 0 || errno != EPERM) {
        say(fd, "the filter loaded but keyctl was not denied");
        _exit(1);
    }
    /* A trapped call is named: a grandchild with the runner's handler and a
     * socket as fd 3 calls ptrace; it must die of SIGSYS after one
     * FORBIDDEN_SYSCALL frame naming ptrace. */
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
        say(fd, "socketpair: %s", strerror(errno));
        _exit(1);
    }
    pid_t child = fork();
    if (child == 0) {
        if (dup2(pair[1], WH_WIRE_FD) < 0) _exit(1);
        syscall(SYS_ptrace, 0, 0, 0, 0);
        _exit(0);
    }
    close(pair[1]);
    uint8_t frame[128];
    ssize_t got = child > 0 ? read(pair[0], frame, sizeof frame) : -1;
    int status = 0;
    if (child > 0) waitpid(child, &status, 0);
    int named = got >= (ssize_t)WH_WIRE_HEADER_SIZE + 16 + 6 && frame[6] == (uint8_t)WH_MSG_FORBIDDEN_SYSCALL &&
                memcmp(frame + WH_WIRE_HEADER_SIZE + 16, "ptrace", 6) == 0;
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS || !named) {
        say(fd, "the filter loaded but a trapped ptrace was not %s", named ? "killed by SIGSYS" : "named");
        _exit(1);
    }
    const struct scmp_version *v = seccomp_version();
    say(fd, "libseccomp %u.%u.%u, filter API level %d: EPERM for risky calls; hostile ones trapped, named "
        "to the host and killed (SIGSYS)",
        v->major, v->minor, v->micro, seccomp_api_get());
    _exit(0);
}

static void probe_pids(int fd) {
    char where[1400];
    int version = enter_pids_cgroup(8, where, sizeof where);
    if (version <= 0) {
        say(fd, "%s", where);
        _exit(1);
    }
    /* With pids.max 8 (this probe included), the 8th fork must fail. */
    pid_t children[16];
    int made = 0, refused = 0;
    for (int i = 0; i < 16; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            pause();
            _exit(0);
        }
        if (pid < 0) {
            refused = errno == EAGAIN;
            break;
        }
        children[made++] = pid;
    }
    for (int i = 0; i < made; i++) kill(children[i], SIGKILL);
    for (int i = 0; i < made; i++) waitpid(children[i], NULL, 0);
    /* Leave the cgroup and remove it (else the next runner's sweep does). */
    char *base = dirname_of(where), file[1500];
    if (base) {
        snprintf(file, sizeof file, "%s/cgroup.procs", base);
        if (write_file(file, "0\n") == 0) rmdir(where);
        free(base);
    }
    if (!refused || made > 7) {
        say(fd, "cgroup v%d at %s did not bind: %d of 16 forks succeeded under pids.max 8", version, where, made);
        _exit(1);
    }
    say(fd, "cgroup v%d pids controller: a cgroup per runner, pids.max %u (processes and threads, root included)",
        version, (unsigned)WH_SANDBOX_DEFAULT_MAX_TASKS);
    _exit(0);
}

static void probe_netns(int fd) {
    const char *how = NULL;
    int rc = enter_netns(&how);
    if (rc != 0) {
        say(fd, "unshare: %s (unprivileged user namespaces may be disabled)", strerror(-rc));
        _exit(1);
    }
    say(fd, "%s: no interface but a down loopback", how);
    _exit(0);
}

int wh_sandbox_check(FILE *out, int json) {
    static const struct {
        const char *name;
        void (*probe)(int);
    } layers[] = {
        {"session", probe_session}, {"rlimits", probe_rlimits}, {"no_new_privs", probe_nnp},
        {"landlock", probe_landlock}, {"seccomp", probe_seccomp}, {"netns", probe_netns},
        {"pids", probe_pids},
    };
    int all = 1;
    if (json) fprintf(out, "[");
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
        check_result r = run_probe(layers[i].probe);
        all &= r.active;
        if (json) {
            fprintf(out, "%s{\"layer\":\"%s\",\"active\":%s,\"detail\":\"", i ? "," : "", layers[i].name,
                    r.active ? "true" : "false");
            for (const char *c = r.detail; *c; c++) {
                if (*c == '"' || *c == '\\') fprintf(out, "\\%c", *c);
                else if ((unsigned char)*c < 0x20) fprintf(out, "\\u%04x", (unsigned char)*c);
                else fputc(*c, out);
            }
            fprintf(out, "\"}");
        } else {
            fprintf(out, "%-13s %-12s %s\n", layers[i].name, r.active ? "active" : "unavailable", r.detail);
        }
    }
    if (json) fprintf(out, "]\n");
    fflush(out);
    return all ? 0 : 1;
}
