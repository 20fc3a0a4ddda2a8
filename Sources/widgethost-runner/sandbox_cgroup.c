/*
 * sandbox_cgroup.c — the pids layer: a pids cgroup of the runner's own
 * (pids.max), which binds root too.
 */
#define _GNU_SOURCE
#include "sandbox_layers.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
    if (wh_read_text(file, text, sizeof text) != 0 || !has_word(text, "pids")) {
        snprintf(why, why_size, "cgroup v2: the pids controller is not available in %s", dir);
        return 0;
    }
    snprintf(file, sizeof file, "%s/cgroup.subtree_control", dir);
    if (wh_read_text(file, text, sizeof text) == 0 && has_word(text, "pids")) return 2;
    if (strcmp(path, "/") == 0 || !path[0]) {
        /* The root cgroup may have processes and enabled controllers. */
        if (wh_write_file(file, "+pids") == 0) return 2;
        snprintf(why, why_size, "cgroup v2: enabling pids in %s: %s", file, strerror(errno));
        return 0;
    }
    /* A non-root cgroup with processes (ours) cannot enable controllers for
     * children: make ours a sibling, in the parent, if the parent allows. */
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    snprintf(file, sizeof file, "%s/cgroup.subtree_control", dir);
    if (wh_read_text(file, text, sizeof text) == 0 && has_word(text, "pids") && access(dir, W_OK) == 0) return 2;
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
int wh_enter_pids_cgroup(uint64_t max, char *where, size_t where_size) {
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
        if (wh_write_file(file, value) != 0) {
            /* Another runner's sweep may have removed it before we were in. */
            if (errno == ENOENT && attempt < 3) continue;
            snprintf(where, where_size, "%s: %s", file, strerror(errno));
            rmdir(dir);
            return -1;
        }
        snprintf(file, sizeof file, "%s/cgroup.procs", dir);
        if (wh_write_file(file, "0\n") != 0) {
            if (errno == ENOENT && attempt < 3) continue;
            snprintf(where, where_size, "%s: %s", file, strerror(errno));
            rmdir(dir);
            return -1;
        }
        snprintf(where, where_size, "%s", dir);
        return version;
    }
}