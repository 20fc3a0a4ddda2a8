/*
 * widgethost_read_ahead.h: asking for memory ahead of the work that needs it.
 *
 * The scheduler reads ahead the records of the reloads it will issue or
 * complete next (see Sources/WidgetHostScheduler/ReadAhead.swift). A
 * prefetch starts a cache line on its way and retires at once: unlike a
 * load whose value is summed, it holds no place in the processor's window
 * while the line comes, so hundreds can be in flight behind the work.
 * Swift has no prefetch of its own; this header is its one use of C.
 */
#ifndef WIDGETHOST_READ_AHEAD_H
#define WIDGETHOST_READ_AHEAD_H

/* Starts the cache line holding `address` on its way into every cache
 * level, to be read. `address` is only a hint: it is never dereferenced,
 * and an address that is not mapped does no harm. */
static inline void widgethost_read_ahead(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
