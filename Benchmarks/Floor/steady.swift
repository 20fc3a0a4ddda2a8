// The redesign's floor: how fast a reload scheduler laid out as
// docs/scheduler.md's "What bounds it" proposes runs the steady state's
// rules, in Swift, on this machine, with the benchmark's workload. Not
// shipped and not the scheduler's figure: a bound for the question "would
// a new engine reach the goal here?" (floor.c answers it with no rules at
// all). The layout:
//   - one 64-byte record per instance: every number a steady reload reads
//     (policy due time, queued time and coalescing deadline, timeline
//     received, newest counted reload, added, the reload in flight's serial,
//     the ledger ring's start and count, jitter, flags);
//   - the ledgers' rings in one arena, 128 times per instance;
//   - a wheel of one-second buckets, each an array of entries (key,
//     position, generation, slack) deleted lazily: an entry is live while
//     its position's generation (two bytes per instance) is the one it was
//     queued with, so the walk reads no record;
//   - the record of a reload in flight in the instance's record (its
//     count and allowance in four bytes beside it), completed by ticket.
// The workload is the shipped benchmark's (Benchmarks/Benchmarks/
// SchedulerBenchmark/Driver.swift): N instances, each reloaded 15-60
// minutes after its last (after(now + interval), an interval per
// instance), shown all day, their apps in the background, 97 hours of
// warm-up (past the 3-day learning period, every instance's rolling 24 h
// ledger full), every reload of a wakeup issued, then completed together.
// The rules: budget 70 per rolling 24 h (96 while learning), held
// reloads issued at the oldest counted time in the window + 24 h; spacing
// 300 s; the policy's due time at least 300 s after the timeline arrived,
// with up to 120 s of jitter; coalescing slack min(60 s, 10 % of how far
// ahead). What it leaves out, each of which the shipped engine pays for:
// free reasons, requests, hidden instances, backoff, the free cap, push
// budgets, entries, the journal, batches by plugin and kind, the recheck
// of a held reload at each whole hour, the budget asked again for a plan
// trusted across a whole hour (the tier cannot change here), and
// decisions' details beyond the count and allowance. Its coalescing takes
// the earliest second's bucket whole (a held reload may be issued up to a
// second after its time) and later seconds in bucket order, not key order.
// Every reload is counted (the shipped engine's first one is free). Its
// rings hold 128 times per instance (1 KB: more than the shipped arena,
// which sizes each ring to its ledger), which can only slow it.
//   swiftc -O -wmo -parse-as-library -I Sources/CWidgetHostReadAhead/include Benchmarks/Floor/steady.swift -o steady
//   steady INSTANCES EVENTS [WARM-UP SECONDS] [--split]
import CWidgetHostReadAhead
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// What a steady reload reads and writes of its instance: one cache line.
struct Record {
    var policyDue = Double.nan
    /// The queued time; the issue time while a reload is in flight.
    var key = Double.infinity
    var latest = Double.infinity
    var received = Double.nan
    var ledgerLast = Double.nan
    var addedAt = 0.0
    var serial: UInt32 = 0
    var ringStart: UInt16 = 0
    var ringCount: UInt16 = 0
    var jitter: Float = 0
    var inFlight = false
    var held = false
}

/// A queued reload in a bucket: live while `generation` is its position's.
struct Entry {
    var key: Double
    var position: Int32
    var generation: UInt16
    /// The coalescing deadline after the key, in milliseconds.
    var slack: UInt16
    var latest: Double { key + Double(slack) * 0.001 }
}

struct Bucket {
    var items: UnsafeMutablePointer<Entry>? = nil
    var count: Int32 = 0
    var capacity: Int32 = 0
}

struct Ticket {
    var position: Int32
    var serial: UInt32
}

struct Result {
    var ticket: Ticket
    /// The timeline's `after(date)`.
    var date: Double
}

let ringCapacity = 128  // a power of two, above the learning allowance
let window = 86_400.0
let spacing = 300.0
let minimumInterval = 300.0
let maximumJitter = 120.0
let learningPeriod = 3 * 86_400.0
let frequentAllowance = 70
let learningAllowance = 96
let wheelSize = 8_192  // one-second buckets, a power of two
let readAheadDistance = 8

/// `count` values in one block aligned to a huge page (as the shipped
/// scheduler's owned arrays of 16 MB and more).
func allocate<T>(_ count: Int, _ value: T) -> UnsafeMutablePointer<T> {
    let bytes = max(64, count * MemoryLayout<T>.stride)
    var raw: UnsafeMutableRawPointer?
    guard posix_memalign(&raw, 2 << 20, bytes) == 0, let raw else { fatalError("out of memory") }
    _ = madvise(raw, bytes, 14)  // MADV_HUGEPAGE
    let p = raw.bindMemory(to: T.self, capacity: count)
    p.initialize(repeating: value, count: count)
    return p
}

final class Engine {
    let n: Int
    let records: UnsafeMutablePointer<Record>
    let rings: UnsafeMutablePointer<Double>
    /// A reload in flight's count in the window and allowance.
    let flightInfo: UnsafeMutablePointer<UInt32>
    /// The last timeline's policy date (the timeline kept).
    let policyDates: UnsafeMutablePointer<Double>
    let apps: UnsafeMutablePointer<Int32>
    let generations: UnsafeMutablePointer<UInt16>
    var appForeground = [Bool](repeating: false, count: 5)
    let buckets: UnsafeMutablePointer<Bucket>
    /// Keys past the wheel's reach.
    var overflow: [Entry] = []
    var overflowFrom = 0
    /// Every bucket before this second is empty.
    var cursor = 0
    var serial: UInt32 = 0
    /// The last walk's reloads, for the `dueReloads` that follows it.
    var taken: UnsafeMutablePointer<Int32>
    var takenCount = 0
    var takenCapacity = 1_024
    var wake = Double.nan
    var bitmap: UnsafeMutablePointer<UInt64>

    init(instances n: Int) {
        self.n = n
        records = allocate(n, Record())
        rings = allocate(n * ringCapacity, 0.0)
        flightInfo = allocate(n, 0)
        policyDates = allocate(n, 0.0)
        apps = allocate(n, 0)
        generations = allocate(n, 0)
        buckets = allocate(wheelSize, Bucket())
        taken = allocate(takenCapacity, 0)
        bitmap = allocate((n + 63) / 64, 0)
    }

    func add(_ p: Int, at time: Double, jitter: Float) {
        records[p].addedAt = time
        records[p].jitter = jitter
        records[p].policyDue = time
        apps[p] = Int32(p % 5)
        if cursor == 0 { cursor = Int(time) }
        queue(p, at: time, latest: time)
    }

    @inline(__always) func queue(_ p: Int, at key: Double, latest: Double) {
        records[p].key = key
        records[p].latest = latest
        generations[p] &+= 1
        let entry = Entry(
            key: key, position: Int32(p), generation: generations[p],
            slack: UInt16(truncatingIfNeeded: Int((latest - key) * 1000)))
        let second = Int(key)
        if second - cursor >= wheelSize {
            overflow.append(entry)
            return
        }
        let b = buckets + (second & (wheelSize - 1))
        if b.pointee.count == b.pointee.capacity {
            let capacity = max(16, 2 * Int(b.pointee.capacity))
            b.pointee.items = realloc(b.pointee.items, capacity * MemoryLayout<Entry>.stride)!
                .assumingMemoryBound(to: Entry.self)
            b.pointee.capacity = Int32(capacity)
        }
        b.pointee.items![Int(b.pointee.count)] = entry
        b.pointee.count += 1
    }

    @inline(__always) func isLive(_ e: Entry) -> Bool { generations[Int(e.position)] == e.generation }

    /// The overflow's entries that the wheel now reaches, moved into it.
    func moveOverflowIn() {
        guard cursor >= overflowFrom else { return }
        overflowFrom = cursor + wheelSize / 2
        let entries = overflow
        overflow = []
        for e in entries where isLive(e) {
            queue(Int(e.position), at: e.key, latest: e.latest)
        }
    }

    /// The next wakeup: the earliest live key, coalesced with the keys
    /// after it while each is before every taken one's deadline; the
    /// reloads taken kept for `dueReloads`.
    func nextWakeup() -> Double {
        moveOverflowIn()
        var earliest = Double.infinity
        while earliest == .infinity {
            let b = buckets + (cursor & (wheelSize - 1))
            var kept: Int32 = 0
            for i in 0..<Int(b.pointee.count) {
                let e = b.pointee.items![i]
                guard isLive(e) else { continue }
                b.pointee.items![Int(kept)] = e
                kept += 1
                earliest = min(earliest, e.key)
            }
            b.pointee.count = kept
            if kept == 0 {
                cursor += 1
                if cursor >= overflowFrom { moveOverflowIn() }
            }
        }
        takenCount = 0
        var deadline = Double.infinity
        var last = earliest
        var second = cursor
        while Double(second) <= deadline, second - cursor < wheelSize {
            let b = buckets + (second & (wheelSize - 1))
            let items = b.pointee.items
            var bucketDeadline = deadline
            if second + 1 - cursor < wheelSize {
                let next = buckets + ((second + 1) & (wheelSize - 1))
                if next.pointee.count > 0 { widgethost_read_ahead(next.pointee.items) }
            }
            for i in 0..<Int(b.pointee.count) {
                let e = items![i]
                guard isLive(e), e.key <= deadline else { continue }
                let p = Int(e.position)
                widgethost_read_ahead(records + p)
                bucketDeadline = min(bucketDeadline, e.latest)
                last = max(last, e.key)
                if takenCount == takenCapacity {
                    takenCapacity *= 2
                    taken = realloc(taken, takenCapacity * 4)!.assumingMemoryBound(to: Int32.self)
                }
                taken[takenCount] = Int32(p)
                takenCount += 1
            }
            deadline = bucketDeadline
            second += 1
        }
        wake = last
        return last
    }

    @inline(__always) func readAhead(_ p: Int) {
        widgethost_read_ahead(records + p)
        widgethost_read_ahead(flightInfo + p)
    }

    @inline(__always) func readAheadRing(_ p: Int) {
        let r = records + p
        let ring = rings + p * ringCapacity
        widgethost_read_ahead(ring + Int(r.pointee.ringStart))
        widgethost_read_ahead(ring + ((Int(r.pointee.ringStart) + Int(r.pointee.ringCount)) & (ringCapacity - 1)))
    }

    /// Issues the reloads the walk took, at `now` (the wakeup), in the
    /// order of the instances.
    func dueReloads(at now: Double, into tickets: inout [Ticket]) {
        tickets.removeAll(keepingCapacity: true)
        precondition(now == wake)
        var low = n
        var high = 0
        for i in 0..<takenCount {
            let p = Int(taken[i])
            bitmap[p >> 6] |= 1 << UInt64(p & 63)
            low = min(low, p)
            high = max(high, p)
        }
        var k = 0
        var word = low >> 6
        while word <= high >> 6 {
            var bits = bitmap[word]
            bitmap[word] = 0
            while bits != 0 {
                taken[k] = Int32(word << 6 | bits.trailingZeroBitCount)
                k += 1
                bits &= bits - 1
            }
            word += 1
        }
        let count = takenCount
        tickets.append(contentsOf: repeatElement(Ticket(position: 0, serial: 0), count: count))
        tickets.withUnsafeMutableBufferPointer { out in
            for i in 0..<min(readAheadDistance, count) { readAhead(Int(taken[i])) }
            for i in 0..<min(readAheadDistance / 2, count) { readAheadRing(Int(taken[i])) }
            for i in 0..<count {
                if i + readAheadDistance < count { readAhead(Int(taken[i + readAheadDistance])) }
                if i + readAheadDistance / 2 < count { readAheadRing(Int(taken[i + readAheadDistance / 2])) }
                let p = Int(taken[i])
                let r = records + p
                guard !appForeground[Int(apps[p])] else { fatalError("the probe's apps stay in the background") }
                // Recorded in the ledger: the times out of the window forgotten, `now` appended.
                let ring = rings + p * ringCapacity
                var start = Int(r.pointee.ringStart)
                var ringCount = Int(r.pointee.ringCount)
                while ringCount > 0 && ring[start] <= now - window {
                    start = (start + 1) & (ringCapacity - 1)
                    ringCount -= 1
                }
                guard ringCount < ringCapacity else { fatalError("a ledger's ring is full") }
                ring[(start + ringCount) & (ringCapacity - 1)] = now
                ringCount += 1
                r.pointee.ringStart = UInt16(start)
                r.pointee.ringCount = UInt16(ringCount)
                r.pointee.ledgerLast = now
                let allowance = now - r.pointee.addedAt < learningPeriod ? learningAllowance : frequentAllowance
                flightInfo[p] = UInt32(ringCount) | UInt32(allowance) << 16
                serial &+= 1
                r.pointee.serial = serial
                r.pointee.inFlight = true
                generations[p] &+= 1
                r.pointee.key = now
                out[i] = Ticket(position: Int32(p), serial: serial)
            }
        }
        takenCount = 0
    }

    /// When the budget lets a counted reload of `p` due at `due` go: `due`
    /// when the window ending then has room, else the oldest time in it
    /// that must leave + 24 h.
    @inline(__always) func budgetReturn(_ p: Int, at due: Double) -> Double {
        let r = records + p
        let allowance = due - r.pointee.addedAt < learningPeriod ? learningAllowance : frequentAllowance
        let ringCount = Int(r.pointee.ringCount)
        if ringCount < allowance { return due }
        let ring = rings + p * ringCapacity
        let start = Int(r.pointee.ringStart)
        var skipped = 0
        while skipped < ringCount && ring[(start + skipped) & (ringCapacity - 1)] <= due - window { skipped += 1 }
        let inWindow = ringCount - skipped
        if inWindow < allowance { return due }
        return ring[(start + skipped + inWindow - allowance) & (ringCapacity - 1)] + window
    }

    /// A batch's results by ticket: each timeline kept, its instance planned and queued again.
    func complete(_ results: inout [Result], at now: Double) {
        let count = results.count
        results.withUnsafeBufferPointer { results in
            for i in 0..<min(readAheadDistance, count) { readAhead(Int(results[i].ticket.position)) }
            for i in 0..<count {
                if i + readAheadDistance < count { readAhead(Int(results[i + readAheadDistance].ticket.position)) }
                let result = results[i]
                let p = Int(result.ticket.position)
                guard p >= 0, p < n else { continue }
                let r = records + p
                guard r.pointee.inFlight, r.pointee.serial == result.ticket.serial else { continue }
                r.pointee.inFlight = false
                r.pointee.received = now
                policyDates[p] = result.date
                let date = result.date
                let floor = now + minimumInterval
                let due = date != date ? floor : max(date + Double(r.pointee.jitter) * maximumJitter, floor)
                r.pointee.policyDue = due
                var time = due
                if r.pointee.ledgerLast + spacing > time { time = r.pointee.ledgerLast + spacing }
                let back = budgetReturn(p, at: time)
                if back > time {
                    r.pointee.held = true
                    queue(p, at: back, latest: back)
                } else {
                    r.pointee.held = false
                    queue(p, at: time, latest: time + min(60, 0.1 * (time - now)))
                }
            }
        }
        results.removeAll(keepingCapacity: true)
    }
}

/// A stable fraction in [0, 1) for `n` (splitmix64).
func fraction(_ n: Int, _ salt: UInt64) -> Double {
    var x = UInt64(n) &+ salt &* 0x9E37_79B9_7F4A_7C15
    x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
    x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
    x ^= x >> 31
    return Double(x >> 11) / Double(1 << 53)
}

/// The shipped benchmark's driver loop over the engine.
struct Driver {
    let engine: Engine
    var tickets: [Ticket] = []
    var results: [Result] = []
    var next = 0
    var now = 1_800_000_000.0
    let intervals: UnsafeMutablePointer<Double>
    var events = 0
    var issuing: UInt64 = 0
    var completing: UInt64 = 0

    init(instances n: Int) {
        engine = Engine(instances: n)
        intervals = allocate(n, 0.0)
        for p in 0..<n {
            engine.add(p, at: now, jitter: Float(fraction(p, 2)))
            intervals[p] = 900 + fraction(p, 1) * 2700
        }
    }

    @inline(__always) mutating func step(limit: Int, timed: Bool) {
        let t0 = timed ? DispatchTime.now().uptimeNanoseconds : 0
        while next == tickets.count {
            now = engine.nextWakeup()
            next = 0
            engine.dueReloads(at: now, into: &tickets)
        }
        let t1 = timed ? DispatchTime.now().uptimeNanoseconds : 0
        let end = next + min(limit, tickets.count - next)
        for i in next..<end {
            let ticket = tickets[i]
            results.append(Result(ticket: ticket, date: now + intervals[Int(ticket.position)]))
        }
        next = end
        events += results.count
        engine.complete(&results, at: now)
        if timed {
            let t2 = DispatchTime.now().uptimeNanoseconds
            issuing += t1 - t0
            completing += t2 - t1
        }
    }
}

/// The measured part (callgrind collects only inside it: `--toggle-collect="*measured*"`).
@inline(never) func measured(_ driver: inout Driver, _ count: Int, timed: Bool) {
    let end = driver.events + count
    while driver.events < end { driver.step(limit: end - driver.events, timed: timed) }
}

@main enum SteadyFloor {
    static func main() {
        let numbers = CommandLine.arguments.dropFirst().filter { !$0.hasPrefix("--") }.map { Double($0) }
        guard numbers.allSatisfy({ $0 != nil && $0! >= 1 && $0! < 1e9 }), numbers.count <= 3 else {
            print("usage: steady INSTANCES EVENTS [WARM-UP SECONDS] [--split] (whole numbers, at least 1)")
            exit(2)
        }
        let instances = Int(numbers.first.flatMap { $0 } ?? 100_000)
        let events = Int(numbers.dropFirst().first.flatMap { $0 } ?? 3_000_000)
        let warmUp = numbers.dropFirst(2).first.flatMap { $0 } ?? 97 * 3_600
        let timed = CommandLine.arguments.contains("--split")
        var driver = Driver(instances: instances)
        let start = driver.now
        while driver.now < start + warmUp { driver.step(limit: .max, timed: false) }
        let held = (0..<instances).filter { driver.engine.records[$0].held }.count
        // The budget's state, to compare with the shipped scheduler's
        // (`profile.sh ... --heap` prints its ledgers' mean count).
        let ledgerTimes = (0..<instances).reduce(0) { $0 + Int(driver.engine.records[$1].ringCount) }
        let measuredFrom = driver.now
        driver.events = 0
        let t0 = DispatchTime.now().uptimeNanoseconds
        measured(&driver, events, timed: timed)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
        let rate = Double(driver.events) / seconds / 1e6
        print(
            "steady floor, \(instances) instances, \(Int(warmUp / 3600)) h of warm-up (\(held) held by the budget,",
            "ledgers \(Double(ledgerTimes) / Double(instances)) times, then \(driver.events) events in",
            "\(((driver.now - measuredFrom) / 360).rounded() / 10) virtual h):",
            "\((rate * 100).rounded() / 100) M events/s")
        if timed {
            let issuing = Double(driver.issuing) / Double(driver.events)
            let completing = Double(driver.completing) / Double(driver.events)
            print(
                "issuing \((issuing * 10).rounded() / 10) ns/event, completing \((completing * 10).rounded() / 10) ns/event"
            )
        }
    }
}
