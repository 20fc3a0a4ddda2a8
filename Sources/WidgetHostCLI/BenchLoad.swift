import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How `widgethost bench` starts its calls.
enum BenchLoad: Sendable, Equatable {
    /// Every worker calls back to back: the next call starts when the previous one answered.
    case closed
    /// Calls start at fixed intervals, `callsPerSecond` in total (every call of
    /// every mode takes the next slot); latency counts from each call's
    /// scheduled start, so a host that falls behind has the wait counted
    /// (no coordinated omission).
    case open(callsPerSecond: Double)

    /// The largest `--rate` accepted: a slot per microsecond.
    static let maximumRate = 1_000_000.0
    /// The smallest `--rate` accepted: a call per 100 s. (Near 0 the first
    /// slot, one interval after the warm-up, was centuries away: the run hung.)
    static let minimumRate = 0.01
    /// The most `--concurrency` callers: each has a worker or fork server
    /// (a sandboxed process) and a thread; a million of them hung the machine.
    static let maximumConcurrency = 256
    /// The most calls per mode (`-n`): the total over three modes stays far
    /// from `Int`'s limit (a multiplication that would trap).
    static let maximumCalls = 100_000_000

    /// The interval between two slots in nanoseconds; 0 for a closed loop.
    var intervalNanoseconds: UInt64 {
        switch self {
        case .closed: 0
        case .open(let callsPerSecond): saturatingNanoseconds(1 / callsPerSecond)
        }
    }
}

/// Seconds in nanoseconds, saturating: at a rate near 0 the schedule reaches
/// past what UInt64 holds, and a wait of centuries is as good as forever.
func saturatingNanoseconds(_ seconds: Double) -> UInt64 {
    let value = (seconds * 1e9).rounded()
    return value < 9e18 ? UInt64(value) : 9_000_000_000_000_000_000
}

/// The schedule of an open-loop run: call `slot` is due at `start + slot / rate`.
struct BenchSchedule: Sendable {
    /// Offered calls per second, over all workers and modes.
    var callsPerSecond: Double
    /// CLOCK_MONOTONIC nanoseconds at which slot 0 is due.
    var start: UInt64

    /// The interval between two slots, in nanoseconds.
    var intervalNanoseconds: UInt64 { saturatingNanoseconds(1 / callsPerSecond) }

    /// When `slot` is due (CLOCK_MONOTONIC nanoseconds). Computed from the
    /// start, never from the previous call, so lateness does not accumulate.
    func due(_ slot: Int) -> UInt64 {
        let (due, overflow) = start.addingReportingOverflow(saturatingNanoseconds(Double(slot) / callsPerSecond))
        return overflow ? .max : due
    }
}

/// What an open-loop run measured about keeping to its schedule.
struct ScheduleResult: Sendable {
    var offeredPerSecond: Double
    /// CLOCK_MONOTONIC nanoseconds at which the first call was due.
    var firstDue: UInt64
    /// Calls made on the schedule (every mode).
    var calls = 0
    /// Calls that started more than one interval (1 / rate) after they were due.
    var lateStarts = 0
    /// The latest actual start of a call, CLOCK_MONOTONIC nanoseconds.
    var lastStart: UInt64 = 0

    /// Calls started per second: the calls after the first over the time from
    /// the first call's scheduled start to the last call's actual start: the
    /// offered rate when every call started the moment it was due, a little
    /// less for the wake-ups' lateness, never more (no call starts early);
    /// nil with fewer than two calls.
    var achievedPerSecond: Double? {
        guard calls >= 2, lastStart > firstDue else { return nil }
        return Double(calls - 1) * 1e9 / Double(lastStart - firstDue)
    }

    /// More than 1 % of the calls started late: the latencies include waiting for the host.
    var fellBehind: Bool { lateStarts * 100 > calls }

    mutating func add(_ other: ScheduleResult) {
        calls += other.calls
        lateStarts += other.lateStarts
        lastStart = max(lastStart, other.lastStart)
    }
}

/// CLOCK_MONOTONIC, the clock the open-loop schedule is kept on.
enum MonotonicClock {
    /// Now, in nanoseconds.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// How long before a slot a worker stops sleeping and waits actively.
    static let spinNanoseconds: UInt64 = 200_000

    /// Waits until `deadline` (nanoseconds, absolute): sleeps until
    /// `spinNanoseconds` before it, then waits actively, so that the call
    /// starts on time. A sleeping thread wakes late (timer slack, 50 µs by
    /// default, plus waking an idle CPU, tens of µs on a VM), and latency
    /// counts from the scheduled start: without this the load generator's
    /// own lateness would be measured as the host's. An overshoot delays this
    /// call only, not the ones after it. Returns at once if it has passed.
    static func sleep(until deadline: UInt64) {
        if deadline > spinNanoseconds {
            let wake = deadline - spinNanoseconds
            var time = timespec(tv_sec: Int(wake / 1_000_000_000), tv_nsec: Int(wake % 1_000_000_000))
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
        }
        while now() < deadline {}
    }
}

/// Holds the open loop's workers until every one has warmed up, then gives
/// them all the same start time: `lead` nanoseconds after the last one arrived.
final class BenchStartLine: @unchecked Sendable {
    private let condition = NSCondition()
    private var waiting: Int
    private let lead: UInt64
    private var start: UInt64?

    init(workers: Int, lead: UInt64) {
        waiting = workers
        self.lead = lead
    }

    /// Waits for the other workers; returns the start, CLOCK_MONOTONIC nanoseconds.
    func arrive() -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        waiting -= 1
        if waiting == 0 {
            start = MonotonicClock.now() + lead
            condition.broadcast()
        }
        while true {
            if let start { return start }
            condition.wait()
        }
    }
}

/// Runs `body(worker)` for every worker, each on a thread of its own, and
/// returns when all have finished. (`DispatchQueue.concurrentPerform` runs at
/// most one iteration per CPU at a time; the open loop's workers must all run
/// at once, since they wait for each other at the start line.)
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for worker in 0..<count {
        group.enter()
        let thread = Thread {
            body(worker)
            group.leave()
        }
        thread.start()
    }
    group.wait()
}
