/*
 * prefault.c — fork mode: the pages a call child needs, mapped in each
 * standby before its call (or once in the server), learned from the first
 * call child.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "runner.h"

/* Prefaulting the standby.
 *
 * fork() does not copy the page-table entries of file-backed mappings that
 * were never written (the Swift runtime's, Foundation's and ICU's code and
 * read-only data), so a call child faults them in again, 16 pages at a
 * time; and every heap page it writes is a copy-on-write fault. Both cost
 * more than the provider itself. Populating every executable mapping in each
 * standby costs milliseconds and, with calls back to back, delays the next
 * call; so the first call child of a server records which pages its call
 * touched (/proc/self/pagemap, just before it sends its answer), and every
 * later standby populates only those, before the server announces it:
 * MADV_POPULATE_READ for file pages, MADV_POPULATE_WRITE (a copy-on-write
 * break that keeps the contents) for private writable pages the call wrote.
 * No plugin code runs in a standby: this only maps memory the server already
 * has, and every call still starts from the server's state. Best effort:
 * nothing happens when /proc is unreadable or the kernel (< 5.14) lacks the
 * advice. */

#define WH_MADV_POPULATE_READ 22
#define WH_MADV_POPULATE_WRITE 23
#define WH_PREFAULT_MAX_PAGES (1u << 22) /* 16 GiB of mappings: give up beyond */

typedef struct prefault_region {
    uintptr_t start, end;
    int write; /* private writable: record written pages, populate for writing */
    int prot;  /* its protection, from /proc/self/maps */
    int forked_with_ptes; /* has an anon_vma: fork copies its page-table entries */
    size_t first_bit;
} prefault_region;

typedef struct prefault_run {
    uintptr_t start;
    size_t length;
    int advice;
} prefault_run;

static prefault_region *g_regions; /* the server's mappings, parsed once */
static size_t g_region_count;
static size_t g_region_pages;
/* Shared with the training child: a done flag (first 8 bytes), then one bit
 * per page of g_regions. Unmapped once the server has read it. */
uint8_t *g_training;
size_t g_training_size;
int g_train;         /* in a call child: record the pages the call touched */
static prefault_run *g_runs; /* the server's plan, inherited by each standby */
static size_t g_run_count;

void prefault_parse_maps(void) {
    FILE *maps = fopen("/proc/self/maps", "re");
    if (!maps) return;
    char line[512];
    size_t capacity = 0;
    while (fgets(line, sizeof line, maps)) {
        unsigned long start, end;
        char perms[8];
        int path_at = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &start, &end, perms, &path_at) < 3) continue;
        if (perms[0] != 'r' || perms[3] != 'p') continue;
        int file = path_at > 0 && line[path_at] == '/';
        int write = perms[1] == 'w';
        /* Read-only anonymous mappings ([vvar], guard areas) are skipped. */
        if (!write && !file) continue;
        size_t pages = (end - start) / 4096;
        if (g_region_pages + pages > WH_PREFAULT_MAX_PAGES) continue;
        if (g_region_count == capacity) {
            capacity = capacity ? capacity * 2 : 64;
            prefault_region *grown = realloc(g_regions, capacity * sizeof *g_regions);
            if (!grown) break;
            g_regions = grown;
        }
        int prot = PROT_READ | (write ? PROT_WRITE : 0) | (perms[2] == 'x' ? PROT_EXEC : 0);
        g_regions[g_region_count++] = (prefault_region){start, end, write, prot, 0, g_region_pages};
        g_region_pages += pages;
    }
    fclose(maps);
    if (g_region_count == 0) return;
    g_training_size = 8 + (g_region_pages + 7) / 8;
    void *shared = mmap(NULL, g_training_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    g_training = shared == MAP_FAILED ? NULL : shared;
}

/* In the training child, with the call answered: the file pages present and
 * the private writable pages this process owns alone (written since the
 * fork) are the pages a call needs. */
void prefault_record(void) {
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    uint64_t entries[512];
    uint8_t *bits = g_training + 8;
    for (size_t i = 0; i < g_region_count; i++) {
        const prefault_region *r = &g_regions[i];
        size_t pages = (r->end - r->start) / 4096;
        for (size_t done = 0; done < pages;) {
            size_t want = pages - done < 512 ? pages - done : 512;
            ssize_t got = pread(fd, entries, want * 8, (off_t)((r->start / 4096 + done) * 8));
            if (got <= 0) break;
            size_t count = (size_t)got / 8;
            for (size_t k = 0; k < count; k++) {
                uint64_t e = entries[k];
                int present = (e >> 63) & 1;
                int exclusive = (e >> 56) & 1;
                if (present && (!r->write || exclusive)) {
                    size_t bit = r->first_bit + done + k;
                    bits[bit / 8] |= (uint8_t)(1u << (bit % 8));
                }
            }
            done += count;
        }
    }
    close(fd);
    __atomic_store_n((uint64_t *)(void *)g_training, 1, __ATOMIC_RELEASE);
}

/* Whether every page present in the mapping is a file page (pagemap bit
 * 61): a read-only mapping that was written before (relocations made
 * read-only again, RELRO) has anonymous pages and is left alone. */
static int only_file_pages(const prefault_region *r) {
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    uint64_t entries[512];
    size_t pages = (r->end - r->start) / 4096;
    int ok = 1;
    for (size_t done = 0; done < pages && ok;) {
        size_t want = pages - done < 512 ? pages - done : 512;
        ssize_t got = pread(fd, entries, want * 8, (off_t)((r->start / 4096 + done) * 8));
        if (got <= 0) {
            ok = 0;
            break;
        }
        for (size_t k = 0; k < (size_t)got / 8; k++) {
            if (((entries[k] >> 63) & 1) && !((entries[k] >> 61) & 1)) ok = 0;
        }
        done += (size_t)got / 8;
    }
    close(fd);
    return ok;
}

/* fork() copies the page-table entries of a mapping only if it has an
 * anon_vma (it was written to once), so the file pages a call reads would be
 * faulted in again by every child. Give each file mapping with pages in the
 * plan an anon_vma (make the whole mapping writable for a moment and write
 * its first byte back: a private copy of one page; protecting only that page
 * would split the mapping, and the parts are not merged back), drop its
 * other entries (fork's cost grows with them), populate the plan's pages
 * once here, and every standby inherits them with fork: no per-standby work
 * for them. Runs done here are dropped from the standbys' plan; a mapping
 * where this fails keeps its runs. */
static void prefault_in_server(void) {
    size_t kept = 0;
    for (size_t i = 0, r = 0; i < g_run_count; i++) {
        prefault_run run = g_runs[i];
        if (run.advice != WH_MADV_POPULATE_READ) {
            g_runs[kept++] = run;
            continue;
        }
        while (r < g_region_count && g_regions[r].end <= run.start) r++;
        if (r == g_region_count || g_regions[r].write || g_regions[r].start > run.start) {
            g_runs[kept++] = run;
            continue;
        }
        prefault_region *region = &g_regions[r];
        if (!region->forked_with_ptes) {
            if (!only_file_pages(region)) {
                g_runs[kept++] = run;
                continue;
            }
            volatile uint8_t *first = (volatile uint8_t *)region->start;
            size_t size = region->end - region->start;
            if (mprotect((void *)region->start, size, region->prot | PROT_WRITE) != 0) {
                g_runs[kept++] = run;
                continue;
            }
            *first = *first;
            mprotect((void *)region->start, size, region->prot);
            /* fork copies every entry present in the mapping: keep only the
             * plan's (file pages: dropping them loses nothing). */
            if (size > 4096) madvise((void *)(region->start + 4096), size - 4096, MADV_DONTNEED);
            region->forked_with_ptes = 1;
        }
        if (madvise((void *)run.start, run.length, WH_MADV_POPULATE_READ) != 0) g_runs[kept++] = run;
    }
    g_run_count = kept;
}

/* In the server, once the training child is reaped: turns its bits into the
 * plan later standbys follow. Returns 0 when there was nothing to read (the
 * child died before recording). */
int prefault_learn(void) {
    if (__atomic_load_n((uint64_t *)(void *)g_training, __ATOMIC_ACQUIRE) != 1) return 0;
    const uint8_t *bits = g_training + 8;
    size_t capacity = 0;
    for (size_t i = 0; i < g_region_count; i++) {
        const prefault_region *r = &g_regions[i];
        size_t pages = (r->end - r->start) / 4096;
        /* File pages: neighbouring runs a few pages apart are merged (a
         * fault maps 16 pages around it anyway). Written pages: exact. */
        size_t gap = r->write ? 0 : 8;
        for (size_t p = 0; p < pages; p++) {
            size_t bit = r->first_bit + p;
            if (!(bits[bit / 8] & (1u << (bit % 8)))) continue;
            uintptr_t address = r->start + p * 4096;
            prefault_run *last = g_run_count ? &g_runs[g_run_count - 1] : NULL;
            if (last && last->advice == (r->write ? WH_MADV_POPULATE_WRITE : WH_MADV_POPULATE_READ) &&
                address >= last->start + last->length && address - (last->start + last->length) <= gap * 4096 &&
                address < r->end && last->start >= r->start) {
                last->length = address + 4096 - last->start;
                continue;
            }
            if (g_run_count == capacity) {
                capacity = capacity ? capacity * 2 : 256;
                prefault_run *grown = realloc(g_runs, capacity * sizeof *g_runs);
                if (!grown) return 1;
                g_runs = grown;
            }
            g_runs[g_run_count++] =
                (prefault_run){address, 4096, r->write ? WH_MADV_POPULATE_WRITE : WH_MADV_POPULATE_READ};
        }
    }
    prefault_in_server();
    return 1;
}

/* In a standby, before it waits for its baton. */
void prefault(void) {
    for (size_t i = 0; i < g_run_count; i++)
        madvise((void *)g_runs[i].start, g_runs[i].length, g_runs[i].advice);
}

/* The off switch: WIDGETHOST_PREFAULT=off (or 0) in the runner's
 * environment (IsolationOptions.prefault). */
int prefault_enabled(void) {
    const char *setting = getenv("WIDGETHOST_PREFAULT");
    return !setting || (strcmp(setting, "off") != 0 && strcmp(setting, "0") != 0);
}

/* A warm worker, once loaded (and warmed): map in every page of the
 * program's and the plugin's file-backed mappings (code and read-only data)
 * before the first call, so that call does not fault them in one by one.
 * A standby does this while it waits, off any call's path; a worker that
 * replaces one that timed out then answers its first call about as fast as
 * the others. Best effort (a kernel before 5.14 lacks the advice). */
void prefault_worker(void) {
    FILE *maps = fopen("/proc/self/maps", "re");
    if (!maps) return;
    char line[512];
    while (fgets(line, sizeof line, maps)) {
        unsigned long start, end;
        char perms[8];
        int path_at = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &start, &end, perms, &path_at) < 3) continue;
        if (perms[0] != 'r' || perms[1] == 'w' || path_at <= 0 || line[path_at] != '/') continue;
        madvise((void *)start, end - start, WH_MADV_POPULATE_READ);
    }
    fclose(maps);
}
