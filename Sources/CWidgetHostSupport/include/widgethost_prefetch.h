/*
 * widgethost_prefetch.h — a cache prefetch hint for Swift, which has no
 * prefetch intrinsic. Used by WidgetHostSchedulerBench to fetch the state of
 * the instances of upcoming events: unlike a plain load, a prefetch does not
 * hold up instruction retirement while the line arrives.
 */
#ifndef WIDGETHOST_PREFETCH_H
#define WIDGETHOST_PREFETCH_H

/** Hints that the cache line holding `address` will be read soon. */
static inline __attribute__((always_inline)) void wh_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

/** Hints that the cache line holding `address` will be written soon. */
static inline __attribute__((always_inline)) void wh_prefetch_write(const void *address) {
    __builtin_prefetch(address, 1, 3);
}

#endif
