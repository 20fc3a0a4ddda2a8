/*
 * The machine's floor for handing work between two cores: the time a
 * cache line takes to go from one core to the other and back. Two threads,
 * pinned to CPUs 0 and 1, take turns writing one counter and waiting for
 * the other's write; the mean round trip is printed. A sharded scheduler's
 * wakeup hands its parts over and reads the other thread's results this
 * way (ShardWorker), so its figures move with this one: on this project's
 * VM it reads about 100 ns when the host keeps the two vCPUs near each
 * other, and about 400 ns when it does not.
 *   Benchmarks/Floor/floor.sh --roundtrip
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { rounds = 2000000 };

/* The counter: odd after CPU 0's write, even after CPU 1's. */
static _Atomic long turn __attribute__((aligned(64)));

/* Pins this thread to `cpu`; without two CPUs there is nothing to time. */
static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
        fprintf(stderr, "roundtrip: cannot run on CPU %d (this machine needs CPUs 0 and 1 online)\n", cpu);
        exit(2);
    }
}

static void *answer(void *unused) {
    (void)unused;
    pin(1);
    for (long i = 0; i < rounds; i++) {
        while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i + 1) {
        }
        atomic_store_explicit(&turn, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

int main(void) {
    pthread_t other;
    pin(0);
    if (pthread_create(&other, NULL, answer, NULL) != 0) {
        perror("roundtrip: pthread_create");
        return 1;
    }
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long i = 0; i < rounds; i++) {
        atomic_store_explicit(&turn, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i + 2) {
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    pthread_join(other, NULL);
    double ns = (end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec);
    printf("a cache line's round trip between CPUs 0 and 1: %.1f ns (mean of %d)\n", ns / rounds, rounds);
    return 0;
}
