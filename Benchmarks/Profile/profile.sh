#!/bin/sh
# Builds the scheduler and this driver as one optimized module and prints
# events/s; with --callgrind, runs it under valgrind's callgrind (instruction
# counts are reliable on a noisy VM) and prints the top functions. After the
# numbers, --heap adds glibc's heap statistics and the ledgers' sizes, --maps
# the mappings that grew, --split the time per event spent issuing (the
# wakeups' nextWakeup() and dueReloads) and completing, apart (ordo-one's
# p50 sample at 100,000 instances holds completions only), with the
# wakeups and batches measured.
#   Benchmarks/Profile/profile.sh [--callgrind] [INSTANCES] [EVENTS] [WARM-UP SECONDS] [--heap] [--maps] [--split]
# With --day, it runs the benchmark's day of mixed widgets (DayDriver) of
# INSTANCES instead and prints its events/s and reloads/s:
#   Benchmarks/Profile/profile.sh [--callgrind] INSTANCES --day
# With --floor, it drives the API's floor (FloorScheduler, a scheduler that
# decides nothing) instead, for the ceiling of any scheduler behind this API:
#   Benchmarks/Profile/profile.sh [--callgrind] INSTANCES EVENTS --floor
# With --shards=K, it runs the same events through one scheduler of INSTANCES
# and through K schedulers of INSTANCES / K each, driven on the threads of
# Dispatch's pool (ShardedDrivers, the ceiling of an engine sharded over K
# cores), in the order one, K, K, one, and prints the means and their ratio
# (not under --callgrind, which collects nothing of it):
#   Benchmarks/Profile/profile.sh INSTANCES EVENTS [WARM-UP SECONDS] --shards=K
# With --engine=K, the scheduler it drives deals its instances out among K
# shards of its own (ReloadScheduler(shards: K), one engine's answers, a
# wakeup's parts on K threads); alternate K=1 and K=2 runs to compare:
#   Benchmarks/Profile/profile.sh INSTANCES EVENTS [WARM-UP SECONDS] --engine=K [--split]
# With --engine=K or --shards=K, a cache line's round trip between CPUs 0
# and 1 is printed before and after the run (Benchmarks/Floor/roundtrip.c):
# on this project's VM it reads about 100 ns when the host keeps the two
# vCPUs near each other and about 400 when it does not, and the threads'
# hand-overs, so the sharded figures, move with it.
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${PROFILE_OUT:-$root/.build/profile}
mkdir -p "$out"
callgrind=no
if [ "$1" = "--callgrind" ]; then callgrind=yes; shift; fi
# WidgetHostJSON and WidgetHostModel as their own modules (as SwiftPM builds
# them), the scheduler, the benchmark's driver and this file as one (so the
# driver sees its internals, like -O WMO).
(cd "$out" && swiftc -O -wmo -g -parse-as-library -module-name WidgetHostJSON -emit-module \
    -emit-module-path "$out/WidgetHostJSON.swiftmodule" -c -o "$out/WidgetHostJSON.o" \
    "$root"/Sources/WidgetHostJSON/*.swift)
(cd "$out" && swiftc -I "$out" -O -wmo -g -parse-as-library -module-name WidgetHostModel -emit-module \
    -emit-module-path "$out/WidgetHostModel.swiftmodule" -c -o "$out/WidgetHostModel.o" \
    "$root"/Sources/WidgetHostModel/*.swift)
cd "$out" && swiftc -O -wmo -g -D PROFILE -I "$out" -I "$root/Sources/CWidgetHostReadAhead/include" -module-name WidgetHostScheduler -o "$out/scheduler-profile" \
    "$root"/Sources/WidgetHostScheduler/*.swift "$root/Benchmarks/Benchmarks/SchedulerBenchmark/Driver.swift" \
    "$root/Benchmarks/Benchmarks/SchedulerBenchmark/DayDriver.swift" \
    "$root/Benchmarks/Benchmarks/SchedulerBenchmark/FloorScheduler.swift" \
    "$root/Benchmarks/Benchmarks/SchedulerBenchmark/ShardedDrivers.swift" \
    "$here/main.swift" "$out/WidgetHostModel.o" "$out/WidgetHostJSON.o"
if [ $callgrind = yes ]; then
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect="*measuredEvents*" --toggle-collect="*measuredDay*" --toggle-collect="*measuredFloor*" --callgrind-out-file="$out/callgrind.out" "$out/scheduler-profile" "$@" 2>&1 | grep -v '^==' || true
    callgrind_annotate --inclusive=no "$out/callgrind.out" 2>/dev/null | head -60
else
    case " $* " in
    *" --engine="* | *" --shards="*)
        cc -O2 -pthread -o "$out/roundtrip" "$root/Benchmarks/Floor/roundtrip.c"
        "$out/roundtrip"
        "$out/scheduler-profile" "$@"
        "$out/roundtrip"
        ;;
    *) "$out/scheduler-profile" "$@" ;;
    esac
fi
