/* ctor_forbidden: a constructor calls mount, so the seccomp filter (which
 * is in place before dlopen) traps it while loading. */
#define FX_NAME "ctor_forbidden"
#include "fixture.h"

#include <sys/mount.h>

__attribute__((constructor)) static void mount_on_load(void) { mount("none", "/mnt", "tmpfs", 0, NULL); }

FX_PLUGIN(fx_placeholder_ok, fx_snapshot_ok, fx_timeline_ok)
