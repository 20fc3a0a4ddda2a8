/*
 * sandbox_check_holes.c — the live half of `--sandbox-check`: each hole a
 * hostile plugin tried (issue 14) is tried again, from a throwaway child
 * that applied the whole standard sandbox (wh_sandbox_apply, every layer,
 * as a plugin's runner does), against things outside it that the checker
 * set up and inspects afterwards: a decoy process with a marker in its
 * environment, a decoy file, a listening pathname Unix socket. A hole is
 * "open" when the attack worked, whichever layer should have stopped it.
 */
#define _GNU_SOURCE
#include "sandbox_layers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "widgethost_wire.h"

/* What the checker set up outside the sandbox. */
typedef struct hole_setup {
    char root[64];        /* a temporary directory */
    char data[80];         /* root/data: the probe's data directory */
    char file[104];        /* root/outside/decoy: mode 0600 */
    char socket_path[104]; /* root/outside/control.sock, listening (sun_path: 108) */
    int listener;
    pid_t decoy;          /* /bin/sleep with WH_CHECK_MARKER=<marker> */
    char marker[32];
} hole_setup;

static void report(int fd, int open, const char *format, ...) __attribute__((format(printf, 3, 4)));
static void report(int fd, int open, const char *format, ...) {
    char line[256];
    int n = snprintf(line, sizeof line, "%s", open ? "open: " : "");
    va_list ap;
    va_start(ap, format);
    vsnprintf(line + n, sizeof line - (size_t)n, format, ap);
    va_end(ap);
    ssize_t ignored = write(fd, line, strlen(line));
    (void)ignored;
}

/* Every environ the sandbox lets it read, the decoy's first. */
static void attack_proc_environ(int fd, const hole_setup *s) {
    char path[64], text[4096];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)s->decoy);
    int found = 0, readable = 0, visible = 0;
    DIR *proc = opendir("/proc");
    struct dirent *e;
    while (proc && (e = readdir(proc)) != NULL && !found) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        visible++;
        snprintf(path, sizeof path, "/proc/%.20s/environ", e->d_name);
        int file = open(path, O_RDONLY | O_CLOEXEC);
        if (file < 0) continue;
        ssize_t n = read(file, text, sizeof text - 1);
        close(file);
        if (n <= 0) continue;
        readable++;
        text[n] = 0;
        for (ssize_t i = 0; i < n; i++)
            if (!text[i]) text[i] = ' ';
        found = strstr(text, s->marker) != NULL;
    }
    if (proc) closedir(proc);
    if (found) report(fd, 1, "read another process's /proc/PID/environ (the decoy's secret)");
    else report(fd, 0, "/proc lists %d processes (the sandbox's own), none outside readable", visible);
}

static void attack_chmod_outside(int fd, const hole_setup *s) {
    struct timespec zero[2] = {{0, 0}, {0, 0}};
    int worked = chmod(s->file, 0666) == 0;
    worked |= chown(s->file, 65534, 65534) == 0;
    worked |= utimensat(AT_FDCWD, s->file, zero, 0) == 0;
    int file = open(s->file, O_RDONLY | O_CLOEXEC);
    if (file >= 0) {
        worked |= fchmod(file, 0666) == 0;
        close(file);
    }
    if (worked) report(fd, 1, "changed the metadata of a file outside the data directory");
    else report(fd, 0, "chmod, chown, utimensat and fchmod outside the data directory refused (%s)", strerror(errno));
}

static void attack_pidfd_getfd(int fd, const hole_setup *s) {
    (void)s;
    /* A child copies its parent's descriptors, as a call child would its
     * fork server's channel. */
    pid_t child = fork();
    if (child == 0) {
        int pidfd = (int)syscall(SYS_pidfd_open, getppid(), 0);
        int stolen = pidfd < 0 ? -1 : (int)syscall(438 /* pidfd_getfd */, pidfd, fd, 0);
        if (stolen >= 0) report(fd, 1, "pidfd_getfd copied the parent's descriptor");
        else report(fd, 0, "pidfd_getfd refused (%s)", strerror(errno));
        _exit(0);
    }
    int status;
    if (child > 0) waitpid(child, &status, 0);
}

static void attack_setsid(int fd, const hole_setup *s) {
    (void)s;
    pid_t child = fork();
    if (child == 0) {
        if (setsid() >= 0 || setpgid(0, 0) == 0) report(fd, 1, "setsid or setpgid left the process group");
        else report(fd, 0, "setsid and setpgid refused (%s)", strerror(errno));
        _exit(0);
    }
    int status;
    if (child > 0) waitpid(child, &status, 0);
}

/* A grandchild that detaches (double fork) and sleeps, named after the
 * marker so the checker finds it outside. */
static void attack_survivor(int fd, const hole_setup *s) {
    int named[2];
    if (pipe(named) != 0) return;
    pid_t child = fork();
    if (child == 0) {
        if (fork() == 0) {
            char name[16];
            snprintf(name, sizeof name, "whchk%.8s", s->marker);
            prctl(PR_SET_NAME, name, 0, 0, 0);
            setsid();
            close(fd); /* the report pipe: the checker reads it to its end */
            close(named[1]); /* named: the attack may report */
            for (;;) pause();
        }
        _exit(0);
    }
    close(named[1]);
    char byte;
    while (read(named[0], &byte, 1) > 0) {}
    int status;
    if (child > 0) waitpid(child, &status, 0);
    report(fd, 0, "started a detached process");
}

static void attack_unix_socket(int fd, const hole_setup *s) {
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof address.sun_path, "%s", s->socket_path);
    int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sock >= 0 && connect(sock, (struct sockaddr *)&address, sizeof address) == 0)
        report(fd, 1, "connected to a pathname Unix socket outside (e.g. the daemon's control socket)");
    else report(fd, 0, "a pathname Unix socket outside cannot be reached (%s)", strerror(errno));
    if (sock >= 0) close(sock);
}

/* Runs `attack` in a child inside the standard sandbox; its line says
 * "open: ..." when the hole is open. */
static int run_attack(void (*attack)(int, const hole_setup *), const hole_setup *s, char *detail, size_t size) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(detail, size, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (dup2(fds[1], WH_WIRE_FD) < 0) _exit(1);
        wh_sandbox_policy p = {0};
        p.plugin_path = "/nonexistent/plugin.so";
        p.data_directory = s->data;
        p.flags = WH_SANDBOX_ALL;
        p.address_space_bytes = WH_SANDBOX_DEFAULT_ADDRESS_SPACE_MIB * 1024ULL * 1024ULL;
        p.cpu_seconds = WH_SANDBOX_DEFAULT_CPU_SECONDS;
        p.open_files = WH_SANDBOX_DEFAULT_OPEN_FILES;
        p.file_size_bytes = WH_SANDBOX_DEFAULT_FILE_SIZE_MIB * 1024ULL * 1024ULL;
        p.processes = WH_SANDBOX_DEFAULT_PROCESSES;
        p.max_tasks = WH_SANDBOX_DEFAULT_MAX_TASKS;
        char error[256] = "";
        freopen("/dev/null", "w", stderr); /* the layers' notes */
        if (wh_sandbox_apply(&p, error, sizeof error) < 0) {
            report(WH_WIRE_FD, 0, "not tried: the sandbox failed (%s)", error);
            _exit(2);
        }
        attack(WH_WIRE_FD, s);
        _exit(0);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        snprintf(detail, size, "fork: %s", strerror(errno));
        return -1;
    }
    ssize_t n = 0, got;
    while ((got = read(fds[0], detail + n, size - 1 - (size_t)n)) > 0) n += got;
    detail[n > 0 ? n : 0] = 0;
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!detail[0]) snprintf(detail, size, "the attack ended without a report (wait status %d)", status);
    return strncmp(detail, "open: ", 6) == 0;
}

/* Living processes named `name` outside; kills them. */
static int kill_named(const char *name) {
    int found = 0;
    DIR *proc = opendir("/proc");
    struct dirent *e;
    while (proc && (e = readdir(proc)) != NULL) {
        char path[64], comm[32], stat_text[64];
        snprintf(path, sizeof path, "/proc/%.20s/comm", e->d_name);
        if (wh_read_text(path, comm, sizeof comm) != 0) continue;
        comm[strcspn(comm, "\n")] = 0;
        if (strcmp(comm, name) != 0) continue;
        snprintf(path, sizeof path, "/proc/%.20s/stat", e->d_name);
        if (wh_read_text(path, stat_text, sizeof stat_text) == 0) {
            char *close_paren = strrchr(stat_text, ')');
            if (close_paren && close_paren[1] && close_paren[2] == 'Z') continue;
        }
        found++;
        kill((pid_t)atoi(e->d_name), SIGKILL);
    }
    if (proc) closedir(proc);
    return found;
}

static int set_up(hole_setup *s) {
    memset(s, 0, sizeof *s);
    s->listener = -1;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(s->marker, sizeof s->marker, "%08lx%06lx", (unsigned long)now.tv_nsec, (unsigned long)getpid());
    snprintf(s->root, sizeof s->root, "/tmp/widgethost-check-XXXXXX");
    if (!mkdtemp(s->root)) return -1;
    char outside[80];
    snprintf(s->data, sizeof s->data, "%s/data", s->root);
    snprintf(outside, sizeof outside, "%s/outside", s->root);
    snprintf(s->file, sizeof s->file, "%s/decoy", outside);
    snprintf(s->socket_path, sizeof s->socket_path, "%s/control.sock", outside);
    if (mkdir(s->data, 0777) != 0 || mkdir(outside, 0777) != 0) return -1;
    chmod(s->root, 0755);
    int file = open(s->file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (file < 0) return -1;
    close(file);
    s->listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof address.sun_path, "%s", s->socket_path);
    if (s->listener < 0 || bind(s->listener, (struct sockaddr *)&address, sizeof address) != 0 ||
        listen(s->listener, 4) != 0)
        return -1;
    chmod(s->socket_path, 0777);
    s->decoy = fork();
    if (s->decoy == 0) {
        char variable[64];
        snprintf(variable, sizeof variable, "WH_CHECK_MARKER=%s", s->marker);
        char *argv[] = {"sleep", "60", NULL}, *envp[] = {variable, NULL};
        execve("/bin/sleep", argv, envp);
        pause(); /* no /bin/sleep: the marker is only in this copy's memory */
        _exit(0);
    }
    usleep(20 * 1000); /* the decoy's exec */
    return s->decoy > 0 ? 0 : -1;
}

static void tear_down(hole_setup *s) {
    if (s->decoy > 0) {
        kill(s->decoy, SIGKILL);
        waitpid(s->decoy, NULL, 0);
    }
    if (s->listener >= 0) close(s->listener);
    unlink(s->socket_path);
    unlink(s->file);
    char path[160];
    snprintf(path, sizeof path, "%s/outside", s->root);
    rmdir(path);
    DIR *data = opendir(s->data);
    struct dirent *e;
    while (data && (e = readdir(data)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%.40s", s->data, e->d_name);
        unlink(path);
    }
    if (data) closedir(data);
    rmdir(s->data);
    rmdir(s->root);
}

int wh_check_holes(wh_hole_result *results, size_t capacity) {
    static const struct {
        const char *name;
        void (*attack)(int, const hole_setup *);
    } holes[] = {
        {"proc_environ", attack_proc_environ}, {"chmod_outside", attack_chmod_outside},
        {"pidfd_getfd", attack_pidfd_getfd},   {"setsid", attack_setsid},
        {"survivor", attack_survivor},         {"unix_socket", attack_unix_socket},
    };
    hole_setup s;
    size_t count = sizeof holes / sizeof holes[0];
    if (count > capacity) count = capacity;
    int ready = set_up(&s) == 0;
    for (size_t i = 0; i < count; i++) {
        wh_hole_result *r = &results[i];
        r->name = holes[i].name;
        if (!ready) {
            r->open = -1;
            snprintf(r->detail, sizeof r->detail, "not tried: could not set up the decoys (%s)", strerror(errno));
            continue;
        }
        r->open = run_attack(holes[i].attack, &s, r->detail, sizeof r->detail);
        /* What the checker sees outside decides too. */
        struct stat st;
        if (holes[i].attack == attack_chmod_outside && stat(s.file, &st) == 0 && (st.st_mode & 07777) != 0600) {
            r->open = 1;
            snprintf(r->detail, sizeof r->detail, "open: the decoy file's mode changed to %o", st.st_mode & 07777);
        }
        if (holes[i].attack == attack_unix_socket) {
            int client = accept(s.listener, NULL, NULL);
            if (client >= 0) {
                close(client);
                r->open = 1;
            }
        }
        if (holes[i].attack == attack_survivor) {
            char name[16];
            snprintf(name, sizeof name, "whchk%.8s", s.marker);
            usleep(100 * 1000);
            if (kill_named(name) > 0) {
                r->open = 1;
                snprintf(r->detail, sizeof r->detail, "open: a detached process outlived the sandboxed process");
            } else {
                snprintf(r->detail, sizeof r->detail, "a detached process died with the sandboxed process");
            }
        }
        if (holes[i].attack == attack_proc_environ && kill(s.decoy, 0) != 0) {
            r->open = 1;
            snprintf(r->detail, sizeof r->detail, "open: the decoy process was killed");
        }
    }
    if (ready || s.root[0]) tear_down(&s);
    return (int)count;
}
