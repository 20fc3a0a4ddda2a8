// A plain driver of the shipped ReloadScheduler for instruction profiles
// (valgrind --tool=callgrind): the benchmark's event loop (its `Driver`,
// Benchmarks/SchedulerBenchmark/Driver.swift: one event = one reload issued
// and completed, with the nextWakeup()/dueReloads(at:) calls that found it),
// no harness. Built and run by profile.sh.
import Foundation
import WidgetHostModel

#if canImport(Glibc)
    import Glibc
#endif

/// The measured part (callgrind collects only inside it).
@inline(never)
func measuredEvents(_ driver: inout Driver<ReloadScheduler>, _ count: Int) {
    driver.run(count)
}

/// The measured part of `--floor` (callgrind collects only inside it).
@inline(never)
func measuredFloor(_ driver: inout Driver<FloorScheduler>, _ count: Int) {
    driver.run(count)
}

/// The measured part of `--day` (callgrind collects only inside it).
@inline(never)
func measuredDay(_ day: inout DayDriver) {
    day.runDay()
}

// Options it knows; any other `--` word is refused (a mistyped option would
// otherwise run the default measurement and look like an answer).
let knownOptions = ["--day", "--floor", "--heap", "--maps", "--split"]
if let unknown = CommandLine.arguments.dropFirst().first(where: {
    $0.hasPrefix("--") && !knownOptions.contains($0) && !$0.hasPrefix("--shards=") && !$0.hasPrefix("--engine=")
}) {
    FileHandle.standardError.write(
        Data(
            ("scheduler-profile: unknown option '\(unknown)'; the options are \(knownOptions.joined(separator: ", "))"
                + ", --shards=K and --engine=K\n").utf8))
    exit(2)
}
// --engine=K: the shipped scheduler with its instances dealt out among K
// shards of its own (ReloadScheduler(shards:), one engine's answers).
let engineShards =
    CommandLine.arguments.first { $0.hasPrefix("--engine=") }.map { option in
        guard let k = Int(option.dropFirst("--engine=".count)), k >= 1, k <= 8 else {
            FileHandle.standardError.write(
                Data("scheduler-profile: --engine=K needs a whole K from 1 to 8 (found '\(option)')\n".utf8))
            exit(2)
        }
        return k
    } ?? 1
let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let instances = arguments.first ?? 100_000
// Counts of at least one: the rates and the bytes per instance divide by them.
guard instances >= 1, (arguments.dropFirst().first ?? 1) >= 1 else {
    FileHandle.standardError.write(
        Data(
            ("scheduler-profile: INSTANCES and EVENTS must be whole numbers of at least 1 (found \(arguments.prefix(2)));"
                + " e.g. profile.sh 100000 3000000\n").utf8))
    exit(2)
}
if CommandLine.arguments.contains("--day") {
    var day = DayDriver(instances: instances)
    let elapsed = ContinuousClock().measure { measuredDay(&day) }
    let seconds = elapsed.seconds
    print(
        "day of \(instances) instances: \(day.events) events (\(day.reloads) reloads,",
        "\(day.entryChanges) entry changes, \(day.nextShow) shows), \(day.wakeups) wakeups in \(seconds) s:",
        "\(Int(Double(day.events) / seconds)) events/s, \(Int(Double(day.reloads) / seconds)) reloads/s")
    exit(0)
}
let events = arguments.dropFirst().first ?? 200_000
if CommandLine.arguments.contains("--floor") {
    var floor = Driver(FloorScheduler(), instances: instances)
    floor.warmUp(seconds: 60)
    let elapsed = ContinuousClock().measure { measuredFloor(&floor, events) }
    print("API floor, \(instances) instances, \(events) events: \(Int(Double(events) / elapsed.seconds)) events/s")
    exit(0)
}
// The benchmark's steady state (its `steadyState`): 97 h of virtual time, the
// learning period over and every 24 h ledger full of the viewing tier's reloads.
let warmUp = arguments.dropFirst(2).first.map(Double.init) ?? (3 * 24 + 25) * 3_600
// --shards=K: K shipped schedulers, each of its share of the instances, each
// driven on a thread of Dispatch's pool (ShardedDrivers: a sharded engine's
// ceiling), and one scheduler of all the instances on one thread, the same
// events, in the order one, K, K, one (so that neither always runs first).
if let option = CommandLine.arguments.first(where: { $0.hasPrefix("--shards=") }) {
    guard let shards = Int(option.dropFirst("--shards=".count)), shards >= 1, shards <= instances else {
        FileHandle.standardError.write(
            Data("scheduler-profile: --shards=K needs a whole K from 1 to INSTANCES (found '\(option)')\n".utf8))
        exit(2)
    }
    /// Events/s of `events` through `count` shards, after the warm-up.
    func rate(_ count: Int) -> Double {
        let sharded = ShardedDrivers(instances: instances, shards: count)
        sharded.warmUp(seconds: warmUp)
        return Double(events) / ContinuousClock().measure { sharded.run(events) }.seconds
    }
    let rates = [1, shards, shards, 1].map(rate)
    let one = (rates[0] + rates[3]) / 2
    let many = (rates[1] + rates[2]) / 2
    print(
        "instances \(instances), measured events \(events), the mean of two runs each:",
        "\(Int(one)) events/s in one scheduler, \(Int(many)) in \(shards) shard\(shards == 1 ? "" : "s")",
        "(\((many / one * 100).rounded() / 100)x)")
    exit(0)
}
/// glibc's malloc_trim (not in the Glibc module): returns freed heap pages.
@_silgen_name("malloc_trim") func mallocTrim(_ pad: Int) -> Int32

/// Resident bytes now (/proc/self/statm), 0 where there is none.
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
// What any run touches once (the scheduler's code, 700-850 kB of it, the
// runtime's metadata and caches, the allocator's own pages) paged in before
// the baseline, by 100 instances run the same way, so that the figure is
// the state that grows with the instances: counted from a reading before
// any scheduler ran (as until 2026-12-03), about 2.4 MB of it read as 240 B
// per instance at 10,000 and 24 at 100,000. Both figures are printed.
let residentAtStart = residentBytes()
do {
    var small = Driver(ReloadScheduler(), instances: 100)
    small.warmUp(seconds: warmUp)
    small.run(1_000)
}
_ = mallocTrim(0)
let residentBefore = residentBytes()
var driver = Driver(ReloadScheduler(shards: engineShards), instances: instances)
driver.warmUp(seconds: warmUp)
driver.split = CommandLine.arguments.contains("--split")
let clock = ContinuousClock()
let elapsed = clock.measure { measuredEvents(&driver, events) }
let seconds = elapsed.seconds
// The freed heap returned to the system (glibc keeps it otherwise, from the
// ledgers' growth). The driver's last tickets are the driver's memory.
let pendingBytes = driver.tickets.capacity * MemoryLayout<ReloadTicket>.stride
if CommandLine.arguments.contains("--heap") {
    print("last tickets:", "\(driver.tickets.count)/\(driver.tickets.capacity)")
}
let trimmedBefore = residentBytes()
driver.letGoOfBuffers()
_ = mallocTrim(0)
let perInstance = (residentBytes() - residentBefore) / instances
// glibc's view of the heap (system bytes, bytes in use), on stderr.
@_silgen_name("malloc_stats") func mallocStats()
if CommandLine.arguments.contains("--heap") { mallocStats() }
print(
    "resident before trim \((trimmedBefore - residentBefore) / instances) B/instance above a 100-instance run",
    "(of which the driver's last tickets \(pendingBytes / instances) B/instance)")
print(
    "InstanceState \(MemoryLayout<InstanceState>.stride) B, InFlightReload \(MemoryLayout<InFlightReload>.stride) B,",
    "resident \(perInstance) B/instance after \(Int(warmUp / 3600)) h above a 100-instance run",
    "(\((residentBytes() - residentAtStart) / instances) above a reading before any scheduler ran, the measure until 2026-12-03)"
)
if CommandLine.arguments.contains("--heap") {
    var count = 0
    var capacity = 0
    for s in driver.scheduler.state.instances {
        count += s.ledger.times.count
        capacity += s.ledger.capacity
    }
    print("ledger: \(Double(count) / Double(instances)) times, capacity \(Double(capacity) / Double(instances))")
}
print(
    "WidgetInstance \(MemoryLayout<WidgetInstance>.size), TimelineRecord? \(MemoryLayout<TimelineRecord?>.size),",
    "ViewHistory \(MemoryLayout<ViewHistory>.size)")
print("instances \(instances), measured events \(events): \(Int(Double(events) / seconds)) events/s")
if driver.split {
    // Per event: the wakeups' finding and issuing, and the batches' completing.
    let issuing = Double(driver.issuingNanoseconds) / Double(events)
    let completing = Double(driver.completingNanoseconds) / Double(events)
    print(
        "issuing \((issuing * 10).rounded() / 10) ns/event, completing \((completing * 10).rounded() / 10) ns/event",
        "(completing alone: \(completing > 0 ? Int(1e9 / completing) : 0) events/s);",
        "\(driver.wakeups) wakeups, \(driver.batches) batches")
}
// The mappings that grew (--maps): the heap, anonymous mappings, the binary.
if CommandLine.arguments.contains("--maps"),
    let maps = try? String(contentsOfFile: "/proc/self/smaps", encoding: .utf8)
{
    var name = ""
    for line in maps.split(separator: "\n") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        if fields.count >= 5, fields[0].contains("-") {
            name = fields.count > 5 ? String(fields[5]) : "[anon]"
        } else if fields.first == "Rss:", let kilobytes = Int(fields[1]), kilobytes > 200 {
            print(name, kilobytes, "kB")
        }
    }
}
