#!/bin/sh
# The machine's floor for a reload scheduler (floor.c): a heap and a wheel,
# records of one cache line and of the shipped state's size, at 1,000,
# 10,000 and 100,000 instances, each run twice.
#   Benchmarks/Floor/floor.sh
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${FLOOR_OUT:-/tmp/widgethost-floor}
mkdir -p "$out"
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
