/* forged_result: the timeline writes its own RESULT frame on fd 3 (the
 * channel), bypassing the runner's checks, then never completes. The
 * call's locale picks the lie:
 *   "count"  (default) claims 1000 entries and carries none;
 *   "large"  carries one entry of 11 MiB of content;
 *   "date"   carries one entry dated 1e300, with policy after(1e19).
 * The host checks what arrives again: resultTooLarge for the first two,
 * malformedResult for the third, and never crashes. */
#define FX_NAME "forged_result"
#include "fixture.h"
#include "widgethost_wire.h" /* the frame header a hostile plugin copies */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t put32(unsigned char *at, uint32_t v) {
    for (int i = 0; i < 4; i++) at[i] = (unsigned char)(v >> (8 * i));
    return 4;
}

static size_t put64(unsigned char *at, uint64_t v) {
    put32(at, (uint32_t)v);
    return 4 + put32(at + 4, (uint32_t)(v >> 32));
}

static size_t putf(unsigned char *at, double d) {
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return put64(at, bits);
}

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    (void)complete;
    (void)completion_context;
    const char *variant = ctx->locale ? ctx->locale : "";
    int large = strcmp(variant, "large") == 0;
    int date = strcmp(variant, "date") == 0;
    size_t content = large ? (11u << 20) : 2;
    size_t capacity = 16 + 64 + 64 + content;
    unsigned char *frame = calloc(1, capacity);
    if (!frame) for (;;) pause();
    size_t n = 16;
    n += put32(frame + n, 0);                                /* status OK */
    n += put32(frame + n, date ? WH_POLICY_AFTER : WH_POLICY_AT_END);
    n += putf(frame + n, date ? 1e19 : 0.0);                 /* policy_date */
    n += put32(frame + n, 0);                                /* error_code */
    n += put32(frame + n, 0);                                /* error_message: empty */
    n += put64(frame + n, 1000);                             /* nanoseconds */
    n += put32(frame + n, 1);                                /* same thread */
    if (!large && !date) {
        n += put32(frame + n, 1000);                         /* count: a lie */
    } else {
        n += put32(frame + n, 1);
        n += put32(frame + n, 0);                            /* entry flags */
        n += putf(frame + n, date ? 1e300 : ctx->now);       /* date */
        n += putf(frame + n, 0);
        n += putf(frame + n, 0);
        n += put32(frame + n, (uint32_t)content);
        if (large) memset(frame + n, 'x', content);
        else memcpy(frame + n, "{}", 2);
        n += content;
    }
    n += put32(frame + n, 0);                                /* duplicates */
    memcpy(frame, "WHW1", 4);
    frame[4] = WH_WIRE_VERSION & 0xFF; frame[5] = WH_WIRE_VERSION >> 8; /* the current wire version */
    frame[6] = 103; frame[7] = 0;                            /* RESULT */
    put32(frame + 8, (uint32_t)(n - 16));
    for (size_t done = 0; done < n;) {
        ssize_t w = write(3, frame + done, n - done);
        if (w <= 0) break;
        done += (size_t)w;
    }
    for (;;) pause();
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
