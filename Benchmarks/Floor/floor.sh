#!/bin/sh
# The machine's floor for a reload scheduler (floor.c): a heap and a wheel,
# records of one cache line and of the shipped state's size, at 1,000,
# 10,000 and 100,000 instances, each run twice.
#   Benchmarks/Floor/floor.sh
# With --steady, the redesign's floor instead (steady.swift: the steady
# state's rules over one 64-byte record per instance and a wheel of array
# buckets, in Swift), in ROUNDS rounds alternating with the shipped
# scheduler on the same workload (Benchmarks/Profile's driver, 97 hours of
# warm-up), INSTANCES instances (100,000) and 30 events per instance; then
# the medians, and the spread and median of the rounds' ratios:
#   Benchmarks/Floor/floor.sh --steady [INSTANCES] [ROUNDS]
# With --roundtrip, a cache line's round trip between CPUs 0 and 1
# (roundtrip.c), the floor of handing work between the shards' threads:
#   Benchmarks/Floor/floor.sh --roundtrip
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${FLOOR_OUT:-/tmp/widgethost-floor}
mkdir -p "$out"
if [ "$1" = "--roundtrip" ]; then
    cc -O2 -pthread -o "$out/roundtrip" "$here/roundtrip.c"
    exec "$out/roundtrip"
fi
if [ "$1" = "--steady" ]; then
    n=${2:-100000}
    rounds=${3:-6}
    root=$(cd "$here/../.." && pwd)
    swiftc -O -wmo -parse-as-library -I "$root/Sources/CWidgetHostReadAhead/include" -o "$out/steady" \
        "$here/steady.swift"
    PROFILE_OUT="$out/profile" "$root/Benchmarks/Profile/profile.sh" 1000 1000 >/dev/null
    events=$((n * 30))
    : > "$out/steady-rounds.txt"
    for round in $(seq 1 "$rounds"); do
        shipped=$("$out/profile/scheduler-profile" "$n" "$events" 349200 | sed -n 's/.*: \([0-9]*\) events\/s.*/\1/p')
        steady=$("$out/steady" "$n" "$events" | sed -n 's/.*: \([0-9.]*\) M events\/s.*/\1/p')
        if [ -z "$shipped" ] || [ -z "$steady" ]; then
            echo "floor.sh: round $round gave no figure (shipped '$shipped', steady floor '$steady')" >&2
            exit 1
        fi
        echo "$round $shipped $steady" >> "$out/steady-rounds.txt"
    done
    awk -v n="$n" '
        { shipped[NR] = $2 / 1e6; steady[NR] = $3; ratio[NR] = $3 / ($2 / 1e6)
          printf "round %d, %d instances: shipped %.2f M events/s, steady floor %.2f M (%.2fx)\n", $1, n, shipped[NR], $3, ratio[NR] }
        function median(a, k,   i, j, t, b) {
            for (i = 1; i <= k; i++) b[i] = a[i]
            for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
            return k % 2 ? b[(k + 1) / 2] : (b[k / 2] + b[k / 2 + 1]) / 2
        }
        END {
            lo = ratio[1]; hi = ratio[1]
            for (i = 2; i <= NR; i++) { if (ratio[i] < lo) lo = ratio[i]; if (ratio[i] > hi) hi = ratio[i] }
            printf "medians: shipped %.2f M events/s, steady floor %.2f M; ratio by round %.2f-%.2fx, median %.2fx\n", median(shipped, NR), median(steady, NR), lo, hi, median(ratio, NR)
        }' \
        "$out/steady-rounds.txt"
    exit 0
fi
cc -O2 -o "$out/floor" "$here/floor.c"
for n in 1000 10000 100000; do
    for run in 1 2; do
        "$out/floor" heap $n 20000000 64
        "$out/floor" wheel $n 20000000 64
        "$out/floor" wheel $n 20000000 64 8
        "$out/floor" heap $n 20000000 832
        "$out/floor" wheel $n 20000000 832 8
    done
done
