/* garbage_output: the timeline writes 1 MiB of binary garbage (NULs,
 * invalid UTF-8, fake protocol magic) to stdout and to stderr, then answers
 * normally. The call succeeds; the host keeps 64 KiB of each and counts the rest. */
#define FX_NAME "garbage_output"
#include "fixture.h"

#include <unistd.h>

static void timeline(const wh_context *ctx, wh_complete_fn complete, void *completion_context) {
    static unsigned char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)(i * 131u + 7u);
    memcpy(junk, "WHW1\xff\xfe\x00\x80", 8);
    for (int i = 0; i < 256; i++) {
        ssize_t a = write(1, junk, sizeof junk);
        ssize_t b = write(2, junk, sizeof junk);
        (void)a;
        (void)b;
    }
    fx_timeline_ok(ctx, complete, completion_context);
}

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, timeline)
