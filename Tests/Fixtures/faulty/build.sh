#!/usr/bin/env bash
# build.sh OUTDIR — builds every faulty fixture plugin into OUTDIR/<name>.so.
#
#   cc -shared -fPIC -std=gnu11 -O1 -I<repo>/SDK/include -pthread
#
# Also builds libwhfixturedep.so, links missing_dependency.so against it and
# deletes it again; and generates the non-compiled fixtures:
#   not_elf.so        a text file
#   empty.so          zero bytes
#   wrong_machine.so  good.so with e_machine patched to another architecture
#                     (AArch64, or x86-64 when building on AArch64)
#
# Prints one summary line on success; on failure prints the compiler's
# message and exits non-zero. Compiles two at a time (WH_FIXTURE_JOBS
# overrides); CC overrides the compiler.
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then
    echo "usage: $0 OUTDIR" >&2
    exit 2
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
mkdir -p "$1"
out="$(cd "$1" && pwd)"
logs="$(mktemp -d "${TMPDIR:-/tmp}/wh-fixtures.XXXXXX")"
trap 'rm -rf "$logs"' EXIT

export WH_FX_CC="${CC:-cc}" WH_FX_HERE="$here" WH_FX_REPO="$repo" WH_FX_OUT="$out" WH_FX_LOGS="$logs"

# compile NAME [extra args...]: OUTDIR/NAME.so from NAME.c; on failure prints
# the compiler's output and returns 1.
compile() {
    local name="$1"
    shift
    if ! "$WH_FX_CC" -shared -fPIC -std=gnu11 -O1 -Wall -Wextra -I"$WH_FX_REPO/SDK/include" \
        -I"$WH_FX_REPO/Sources/CWidgetHostSupport/include" -pthread -o "$WH_FX_OUT/$name.so" "$WH_FX_HERE/$name.c" "$@" >"$WH_FX_LOGS/$name.log" 2>&1; then
        echo "build.sh: compiling $name.c failed:" >&2
        cat "$WH_FX_LOGS/$name.log" >&2
        return 1
    fi
}
export -f compile

# 1. The helper library missing_dependency.so needs at link time.
compile dep
mv "$out/dep.so" "$out/libwhfixturedep.so"

# 2. Every fixture, in parallel.
names=()
for source in "$here"/*.c; do
    name="$(basename "$source" .c)"
    [ "$name" = dep ] && continue
    names+=("$name")
done
status=0
printf '%s\n' "${names[@]}" | xargs -P "${WH_FIXTURE_JOBS:-2}" -I{} bash -c '
    if [ "$1" = missing_dependency ]; then
        compile "$1" -L"$WH_FX_OUT" -lwhfixturedep -Wl,-rpath,"$WH_FX_OUT"
    else
        compile "$1"
    fi' _ {} || status=$?
# 3. Delete the dependency: loading missing_dependency.so must now fail.
rm -f "$out/libwhfixturedep.so"
if [ "$status" -ne 0 ]; then
    echo "build.sh: building the fixtures failed" >&2
    exit 1
fi

# 4. Files that are not loadable shared objects at all.
cat >"$out/not_elf.so" <<'TEXT'
This is a text file named like a plugin, not a shared object.
It is longer than an ELF header, so dlopen says "invalid ELF header".
TEXT
: >"$out/empty.so"

# wrong_machine.so: a real ELF shared object whose e_machine (a little-endian
# u16 at offset 18) names another architecture.
cp "$out/good.so" "$out/wrong_machine.so"
machine="$(od -An -tu2 -j18 -N2 "$out/good.so" | tr -d ' ')"
if [ "$machine" = 183 ]; then
    printf '\076\000' | dd of="$out/wrong_machine.so" bs=1 seek=18 count=2 conv=notrunc status=none # EM_X86_64 (62)
else
    printf '\267\000' | dd of="$out/wrong_machine.so" bs=1 seek=18 count=2 conv=notrunc status=none # EM_AARCH64 (183)
fi

echo "built $((${#names[@]} + 3)) fault fixtures in $out"
