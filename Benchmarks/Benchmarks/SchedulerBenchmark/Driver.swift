// The benchmark's event loop, shared with Benchmarks/Profile (which builds
// it into the scheduler's module with -D PROFILE: the scheduler is not imported).
import WidgetHostModel

#if !PROFILE
    import WidgetHostScheduler
#endif

/// What the driver needs of a scheduler.
protocol DrivenScheduler {
    mutating func add(_ instance: WidgetInstance, at time: Double) -> Bool
    func nextWakeup() -> Double?
    /// Every reload due at `now` (the shipped scheduler's `dueReloads(at:limit:)`
    /// without a limit; the oracle's `dueReloads(at:)`).
    mutating func allDueReloads(at now: Double) -> [ReloadBatch]
    mutating func complete(_ id: String, with outcome: ReloadOutcome, at time: Double)
}

extension ReloadScheduler: DrivenScheduler {
    mutating func allDueReloads(at now: Double) -> [ReloadBatch] { dueReloads(at: now, limit: .max) }
}
/// Drives a scheduler one event at a time; kept across iterations so that
/// each iteration continues the same steady state.
///
/// A struct, run by one mutating call per measurement (``run(_:)``): as a
/// class, every call into the scheduler through its stored property was a
/// run-time exclusivity check, and copying each batch's decisions into a
/// list of its own was another tenth of the event's cost; neither is the
/// scheduler's.
struct Driver<S: DrivenScheduler> {
    var scheduler: S
    /// The batches of the last wakeup, completed in order.
    var batches: [ReloadBatch] = []
    var batch = 0
    var next = 0
    var now = 1_800_000_000.0
    private(set) var events = 0

    init(_ scheduler: S, instances: Int) {
        self.scheduler = scheduler
        for n in 0..<instances {
            _ = self.scheduler.add(
                WidgetInstance(id: "w\(n)", plugin: "p\(n % 3)", kind: "k\(n % 2)", app: "app\(n % 5)"), at: now)
        }
    }

    /// One reload issued and completed.
    @inline(__always)
    mutating func step() {
        while batch == batches.count || next == batches[batch].decisions.count {
            if batch < batches.count {
                batch += 1
                next = 0
                continue
            }
            // Let go of the batches first, so the scheduler reuses their arrays.
            batches = []
            batch = 0
            next = 0
            guard let wake = scheduler.nextWakeup() else { fatalError("nothing scheduled") }
            now = wake
            batches = scheduler.allDueReloads(at: wake)
        }
        let id = batches[batch].decisions[next].instanceID
        next += 1
        let interval = 900 + StableJitter.fraction(for: id) * 2700
        scheduler.complete(id, with: .success(TimelineRecord(entries: [], policy: .after(now + interval))), at: now)
        events += 1
    }

    /// `count` events.
    mutating func run(_ count: Int) {
        for _ in 0..<count { step() }
    }

    /// Runs until every instance had its first reload and then `seconds` of virtual time.
    mutating func warmUp(seconds: Double) {
        let start = now
        repeat { step() } while now < start + seconds
    }
}

extension Duration {
    /// The duration in seconds, for rates.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}
