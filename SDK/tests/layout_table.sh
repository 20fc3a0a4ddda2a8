#!/usr/bin/env bash
# layout_table.sh — the "Layout reference (LP64)" table of docs/abi.md,
# generated from <widgethost/provider.h>: the struct fields are read from the
# header, and a C program compiled against it prints each struct's sizeof and
# each field's offsetof.
#
# Usage: SDK/tests/layout_table.sh              print the table
#        SDK/tests/layout_table.sh --check FILE exit 1 (with a diff) if FILE's
#                                               table differs from the header
#        SDK/tests/layout_table.sh --write FILE replace FILE's table
# The table in FILE is the block of lines starting with "| struct | sizeof"
# and ending before the first line that does not start with "|".
set -eu

sdk="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
header="$sdk/include/widgethost/provider.h"
work="$(mktemp -d "${TMPDIR:-/tmp}/wh-layout.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# Each "typedef struct NAME { ... } NAME;" block, fields in order (comments
# stripped; "double a; double b;" and function-pointer fields included).
structs="$(awk '
    { sub(/\/\*.*\*\//, ""); sub(/\/\/.*/, "") }
    /\/\*/ { incomment = 1; sub(/\/\*.*/, "") }
    incomment { if ($0 ~ /\*\//) { incomment = 0; sub(/.*\*\//, "") } else next }
    /^typedef struct [a-z_]+ \{/ { name = $3; fields = ""; next }
    name != "" && /^\}/ { print name ":" fields; name = ""; next }
    name != "" && /;/ {
        line = $0; sub(/;.*/, "", line); n = split(line, words, /[ \t*]+/)
        fields = fields " " words[n]
    }
' "$header")"

{
    echo '#include <stdio.h>'
    echo '#include <stddef.h>'
    echo '#include <widgethost/provider.h>'
    echo 'int main(void) {'
    echo '    printf("| struct | sizeof | offsets |\n|---|---|---|\n");'
    while IFS=: read -r name fields; do
        [ -n "$name" ] || continue
        printf '    printf("| `%s` | %%zu | ", sizeof(%s));\n' "$name" "$name"
        sep=""
        for f in $fields; do
            printf '    printf("%s%s %%zu", offsetof(%s, %s));\n' "$sep" "$f" "$name" "$f"
            sep=", "
        done
        echo '    printf(" |\n");'
    done <<<"$structs"
    echo '    return 0;'
    echo '}'
} >"$work/layout.c"
"${CC:-cc}" -std=c99 -Wall -Wextra -I"$sdk/include" -o "$work/layout" "$work/layout.c"
"$work/layout" >"$work/table.md"

documented() { # the table block of $1
    awk '/^\| struct \| sizeof/ { on = 1 } on && !/^\|/ { exit } on { print }' "$1"
}

case "${1:-}" in
"") cat "$work/table.md" ;;
--check)
    if ! diff -u <(documented "$2") "$work/table.md" >"$work/diff"; then
        echo "$2: the layout table differs from $header (- documented, + the header):"
        cat "$work/diff"
        echo "fix: SDK/tests/layout_table.sh --write $2"
        exit 1
    fi
    echo "$2: the layout table matches the header"
    ;;
--write)
    awk -v table="$work/table.md" '
        /^\| struct \| sizeof/ { on = 1; while ((getline line < table) > 0) print line; next }
        on && /^\|/ { next }
        { on = 0; print }
    ' "$2" >"$work/out" && cat "$work/out" >"$2"
    ;;
*) echo "usage: $0 [--check FILE | --write FILE]" >&2; exit 2 ;;
esac
