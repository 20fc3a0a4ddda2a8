/*
 * sandbox_seccomp.c — the seccomp-bpf layer (libseccomp): dangerous calls
 * fail with EPERM or trap; the runner's SIGSYS handler reports a trapped
 * call to the host, then the process dies of SIGSYS.
 */
#define _GNU_SOURCE
#include "sandbox_layers.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "widgethost_wire.h"

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
    /* copying another process's descriptor (its channel to the host), or
     * comparing them */
    "pidfd_getfd", "kcmp",
    /* leaving the process group would let a grandchild outlive the call
     * (a fork server allows setpgid(0, 0) alone, for its call children) */
    "setsid", "setpgid", NULL};

/* File metadata by path or descriptor: EPERM when the runner has no
 * read-only view (sandbox_view.c) that keeps them to the data directory
 * with EROFS; seccomp cannot see which file a path or descriptor names, so
 * then every file's metadata is frozen, the data directory's too. */
static const char *const metadata_syscalls[] = {
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
    "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
    "setxattrat", "removexattrat", "utime", "utimes", "futimesat", "utimensat", NULL};

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
        /* The runner itself, PID 2 of its namespace, is known to the host
         * by the pid the host spawned (sandbox_pidns.c). */
        pid_t pid = (pid_t)syscall(SYS_getpid);
        if (wh_sandbox_runner_pid && pid == wh_sandbox_runner_pid) pid = wh_sandbox_host_pid;
        n += put_u32(frame + n, (uint32_t)pid);
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
int wh_install_sigsys_handler(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_sigsys;
    action.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    return sigaction(SIGSYS, &action, NULL);
}

/* Calls newer than libseccomp 2.5's tables: one number on every
 * architecture (the unified table since Linux 5.x). */
static const struct {
    const char *name;
    int nr;
} newer_syscalls[] = {{"fchmodat2", 452}, {"setxattrat", 463}, {"removexattrat", 466}};

static int rule(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned count,
                const struct scmp_arg_cmp *args) {
    int nr = seccomp_syscall_resolve_name(name);
    for (size_t i = 0; nr == __NR_SCMP_ERROR && i < sizeof newer_syscalls / sizeof newer_syscalls[0]; i++)
        if (strcmp(name, newer_syscalls[i].name) == 0) nr = newer_syscalls[i].nr;
    if (nr == __NR_SCMP_ERROR) return 0; /* not on this architecture */
    return seccomp_rule_add_array(ctx, action, nr, count, args);
}

int wh_apply_seccomp(const wh_sandbox_policy *p, int deny_metadata, char *error, size_t error_size, int *skipped) {
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
        if (p->fork_server && strcmp(*n, "setpgid") == 0) {
            /* Only setpgid(0, 0), for the call children (each then seals
             * it with wh_sandbox_seal_process_group). */
            struct scmp_arg_cmp pid = SCMP_A0(SCMP_CMP_NE, 0), group = SCMP_A1(SCMP_CMP_NE, 0);
            rc = rule(ctx, SCMP_ACT_ERRNO(EPERM), *n, 1, &pid);
            if (rc == 0) rc = rule(ctx, SCMP_ACT_ERRNO(EPERM), *n, 1, &group);
            continue;
        }
        rc = rule(ctx, SCMP_ACT_ERRNO(EPERM), *n, 0, NULL);
    }
    for (const char *const *n = metadata_syscalls; deny_metadata && *n && rc == 0; n++)
        rc = rule(ctx, SCMP_ACT_ERRNO(EPERM), *n, 0, NULL);
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
    /* A Landlock domain of its own that scopes signals (where Landlock
     * applies, ABI 6): the call can no longer signal, ptrace (read
     * /proc/PID/mem) or pidfd_getfd its fork server, the standbys or init;
     * kill(getppid()) and kill(-1) reach only what the call started. */
    if (wh_landlock_scoping) wh_landlock_scope_to_self();
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