/*
 * sandbox_check.c — `widgethost-runner --sandbox-check [--json]`: each
 * layer tried in a throwaway child.
 */
#define _GNU_SOURCE
#include "sandbox_layers.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "widgethost_wire.h"

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
    if (wh_apply_rlimits(&p) != 0) {
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
    int abi = wh_landlock_abi();
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
    if (wh_apply_landlock(&p, error, sizeof error, &skipped) != 0) {
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
    wh_install_sigsys_handler();
    wh_sandbox_policy p = {0};
    char error[128] = "";
    int skipped = 0;
    if (wh_apply_seccomp(&p, 0, error, sizeof error, &skipped) != 0 || skipped) {
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
    int version = wh_enter_pids_cgroup(8, where, sizeof where);
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
    char *base = wh_dirname_of(where), file[1500];
    if (base) {
        snprintf(file, sizeof file, "%s/cgroup.procs", base);
        if (wh_write_file(file, "0\n") == 0) rmdir(where);
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
    int rc = wh_unshare(CLONE_NEWNET, &how);
    if (rc != 0) {
        say(fd, "unshare: %s (unprivileged user namespaces may be disabled)", strerror(-rc));
        _exit(1);
    }
    say(fd, "%s: no interface but a down loopback", how);
    _exit(0);
}

static void probe_pidns(int fd) {
    const char *how = NULL;
    int rc = wh_unshare(CLONE_NEWPID, &how);
    if (rc != 0) {
        say(fd, "unshare(CLONE_NEWPID): %s (unprivileged user namespaces may be disabled)", strerror(-rc));
        _exit(1);
    }
    char error[128] = "";
    if (wh_pidns_split(error, sizeof error) != 0 || getpid() != 2 || getppid() != 1) {
        say(fd, "the runner did not become PID 2 under its own init: %s", error);
        _exit(1);
    }
    say(fd, "%s: the runner is PID 2 under an init of its own; what a plugin starts dies with it", how);
    _exit(0);
}

/* The mount probe's data directory: made and removed by wh_sandbox_check
 * around the probes (the probe ends inside its view, where the directory is
 * a mount point it cannot remove). */
static char g_probe_data[64];
static int g_probe_data_errno;

static void probe_mountns(int fd) {
    const char *how = NULL;
    int rc = wh_unshare(CLONE_NEWNS | CLONE_NEWPID, &how);
    char *data = g_probe_data, error[256] = "";
    if (rc != 0) {
        say(fd, "unshare(CLONE_NEWNS): %s", strerror(-rc));
        _exit(1);
    }
    if (!data[0]) {
        say(fd, "mkdtemp(/tmp/widgethost-check-XXXXXX) for the probe's data directory: %s",
            strerror(g_probe_data_errno));
        _exit(1);
    }
    wh_sandbox_policy p = {0};
    p.plugin_path = "/nonexistent/plugin.so";
    p.data_directory = data;
    int skipped = 0;
    if (wh_pidns_split(error, sizeof error) != 0 || wh_apply_view(&p, 1, error, sizeof error, &skipped) != 0 ||
        skipped) {
        say(fd, "%s", skipped ? "mounts refused: no private mount namespace" : error);
        _exit(1);
    }
    /* Outside the view nothing is there; inside, only the data directory
     * takes a change. */
    int hidden = access("/var", F_OK) != 0 && access("/home", F_OK) != 0;
    int read_only = chmod("/usr", 0755) != 0 && errno == EROFS;
    int writable = chmod(data, 0700) == 0;
    if (!hidden || !read_only || !writable) {
        say(fd, "the view leaks: /var or /home visible %d, /usr writable %d, data directory read-only %d", !hidden,
            !read_only, !writable);
        _exit(1);
    }
    say(fd, "%s: a read-only root of the system paths, the plugin and its data directory (writable); a /proc of "
            "its own processes", how);
    _exit(0);
}

/* A JSON string (quotes, backslashes and controls escaped). */
static void json_string(FILE *out, const char *text) {
    fputc('"', out);
    for (const char *c = text; *c; c++) {
        if (*c == '"' || *c == '\\') fprintf(out, "\\%c", *c);
        else if ((unsigned char)*c < 0x20) fprintf(out, "\\u%04x", (unsigned char)*c);
        else fputc(*c, out);
    }
    fputc('"', out);
}

int wh_sandbox_check(FILE *out, int json) {
    static const struct {
        const char *name;
        void (*probe)(int);
    } layers[] = {
        {"session", probe_session}, {"rlimits", probe_rlimits}, {"no_new_privs", probe_nnp},
        {"landlock", probe_landlock}, {"seccomp", probe_seccomp}, {"netns", probe_netns},
        {"pids", probe_pids}, {"pidns", probe_pidns}, {"mountns", probe_mountns},
    };
    int all = 1;
    /* schemaVersion 2: an object with the layers and the holes (1 was the
     * bare array of layers). */
    if (json) fprintf(out, "{\"schemaVersion\":2,\"layers\":[");
    snprintf(g_probe_data, sizeof g_probe_data, "/tmp/widgethost-check-XXXXXX");
    if (!mkdtemp(g_probe_data)) {
        g_probe_data_errno = errno;
        g_probe_data[0] = 0;
    }
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
        check_result r = run_probe(layers[i].probe);
        all &= r.active;
        if (json) {
            fprintf(out, "%s{\"layer\":\"%s\",\"active\":%s,\"detail\":", i ? "," : "", layers[i].name,
                    r.active ? "true" : "false");
            json_string(out, r.detail);
            fprintf(out, "}");
        } else {
            fprintf(out, "%-13s %-12s %s\n", layers[i].name, r.active ? "active" : "unavailable", r.detail);
        }
    }
    if (g_probe_data[0]) rmdir(g_probe_data);
    fflush(out);
    wh_hole_result holes[16];
    int count = wh_check_holes(holes, sizeof holes / sizeof holes[0]);
    if (json) fprintf(out, "],\"holes\":[");
    else fprintf(out, "\nholes, each tried live from inside the sandbox:\n");
    for (int i = 0; i < count; i++) {
        const char *state = holes[i].open > 0 ? "open" : holes[i].open == 0 ? "closed" : "not tried";
        all &= holes[i].open == 0;
        const char *detail = holes[i].detail;
        if (strncmp(detail, "open: ", 6) == 0) detail += 6;
        if (json) {
            fprintf(out, "%s{\"hole\":\"%s\",\"state\":\"%s\",\"detail\":", i ? "," : "", holes[i].name, state);
            json_string(out, detail);
            fprintf(out, "}");
        } else {
            fprintf(out, "%-13s %-12s %s\n", holes[i].name, state, detail);
        }
    }
    if (json) fprintf(out, "]}\n");
    fflush(out);
    return all ? 0 : 1;
}
