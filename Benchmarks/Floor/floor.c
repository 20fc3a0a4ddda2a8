// What this machine allows a reload scheduler at N instances, whatever its
// rules: per reload, take the earliest due instance, read and write its
// record, queue it again 15-60 minutes later. No rules at all, so every
// figure here bounds the shipped scheduler from above (docs/scheduler.md,
// "What bounds it now"). Two queues:
//   heap   a 4-ary min-heap of (time, position) with a slot per position
//          (the shipped DueQueue's layout), one sift per reload;
//   wheel  a timing wheel of 1-second buckets, each an array of positions,
//          taken in order; with `ahead` > 0 the record `ahead` places on
//          in the bucket is prefetched.
// Records are `bytes` long (64: one cache line; the shipped scheduler's
// state is about 840 bytes per instance), touched at random places.
//   floor heap|wheel INSTANCES RELOADS [BYTES] [AHEAD]
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    double key;
    int32_t position;
} Item;

static uint64_t state = 88172645463325252ull;
static inline uint64_t next_random(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static unsigned char *records;
static size_t record_bytes;

// Reads and writes the record of `position`: a counter and a time.
static inline double touch(int32_t position, double now) {
    unsigned char *r = records + (size_t)position * record_bytes;
    uint32_t count;
    memcpy(&count, r, 4);
    count += 1;
    memcpy(r, &count, 4);
    memcpy(r + 8, &now, 8);
    return (double)(count & 1);
}

static inline double interval(void) { return 900 + (double)(next_random() % 2700); }

// --- heap ---
static Item *heap;
static int32_t *slot;
static int count;

static void sift_down(int i) {
    Item item = heap[i];
    for (;;) {
        int child = 4 * i + 1;
        if (child >= count) break;
        int best = child;
        int end = child + 4 < count ? child + 4 : count;
        for (int k = child + 1; k < end; k++)
            if (heap[k].key < heap[best].key) best = k;
        if (!(heap[best].key < item.key)) break;
        heap[i] = heap[best];
        slot[heap[i].position] = i;
        i = best;
    }
    heap[i] = item;
    slot[item.position] = i;
}

static double run_heap(int n, long reloads) {
    heap = malloc(sizeof(Item) * (size_t)n);
    slot = malloc(sizeof(int32_t) * (size_t)n);
    for (int i = 0; i < n; i++) heap[i] = (Item){(double)(next_random() % 3600), i};
    for (int i = n - 1; i > 0; i--) {  // positions at random places
        int j = (int)(next_random() % (uint64_t)(i + 1));
        int32_t t = heap[i].position;
        heap[i].position = heap[j].position;
        heap[j].position = t;
    }
    count = n;
    for (int i = 0; i < n; i++) slot[heap[i].position] = i;
    for (int i = (n - 2) / 4; i >= 0; i--) sift_down(i);
    double sink = 0, start = 0;
    for (long e = -2L * n; e < reloads; e++) {  // two rounds of warm-up
        if (e == 0) start = seconds();
        Item top = heap[0];
        sink += touch(top.position, top.key);
        heap[0].key = top.key + interval();
        sift_down(0);
    }
    double elapsed = seconds() - start;
    if (sink < 0) puts("");
    return (double)reloads / elapsed;
}

// --- wheel ---
enum { WHEEL = 4096 };
typedef struct {
    int32_t *positions;
    int count, capacity;
} Bucket;
static Bucket buckets[WHEEL];

static inline void queue(long second, int32_t position) {
    Bucket *b = &buckets[second & (WHEEL - 1)];
    if (b->count == b->capacity) {
        b->capacity = b->capacity ? 2 * b->capacity : 16;
        b->positions = realloc(b->positions, sizeof(int32_t) * (size_t)b->capacity);
    }
    b->positions[b->count++] = position;
}

static double run_wheel(int n, long reloads, int ahead) {
    for (int i = 0; i < n; i++) queue((long)(next_random() % 3600), i);
    Bucket taken = {0};
    long done = -2L * n;
    double sink = 0, start = 0;
    int measuring = 0;
    for (long second = 0; done < reloads; second++) {
        Bucket *b = &buckets[second & (WHEEL - 1)];
        Bucket swap = *b;  // later keys go to later buckets only
        *b = taken;
        b->count = 0;
        taken = swap;
        for (int i = 0; i < taken.count; i++) {
            if (ahead > 0 && i + ahead < taken.count)
                __builtin_prefetch(records + (size_t)taken.positions[i + ahead] * record_bytes);
            sink += touch(taken.positions[i], (double)second);
            queue(second + (long)interval(), taken.positions[i]);
        }
        done += taken.count;
        if (!measuring && done >= 0) {
            measuring = 1;
            done = 0;
            start = seconds();
        }
    }
    double elapsed = seconds() - start;
    if (sink < 0) puts("");
    return (double)done / elapsed;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: floor heap|wheel INSTANCES RELOADS [BYTES] [AHEAD]\n");
        return 2;
    }
    int n = atoi(argv[2]);
    long reloads = atol(argv[3]);
    record_bytes = argc > 4 ? (size_t)atol(argv[4]) : 64;
    int ahead = argc > 5 ? atoi(argv[5]) : 0;
    if (n < 1 || reloads < 1 || record_bytes < 16) {
        fprintf(stderr, "floor: INSTANCES and RELOADS must be positive, BYTES at least 16\n");
        return 2;
    }
    records = calloc((size_t)n, record_bytes);
    int wheel = strcmp(argv[1], "wheel") == 0;
    double rate = wheel ? run_wheel(n, reloads, ahead) : run_heap(n, reloads);
    printf("%s, %d instances, %zu-byte records%s: %.2f M reloads/s\n", wheel ? "wheel" : "heap", n, record_bytes,
        wheel && ahead > 0 ? ", read ahead" : "", rate / 1e6);
    return 0;
}
