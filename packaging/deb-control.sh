#!/bin/sh
# deb-control.sh ROOT VERSION — the DEBIAN/control of the widgethost .deb
# whose files are staged in ROOT (Installed-Size is measured there).
set -eu
root="$1"
version="$2"
size="$(du -sk --exclude=DEBIAN "$root" | cut -f1)"
cat <<CONTROL
Package: widgethost
Version: $version
Architecture: $(dpkg --print-architecture)
Maintainer: widgethost <widgethost@example.org>
Installed-Size: $size
Depends: libc6, libseccomp2, libsqlite3-0
Section: utils
Priority: optional
Homepage: https://github.com/widgethost/widgethost
Description: Linux runtime for WidgetKit-style timeline providers
 widgethost loads timeline-provider plugins (shared objects with a stable C
 ABI), calls them in sandboxed child processes with timeouts, and runs
 WidgetKit's budgeted reload scheduler over them as a daemon (systemd user
 unit included). The Swift runtime is linked statically.
CONTROL
