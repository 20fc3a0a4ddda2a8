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
    /// A batch's results (the shipped scheduler's `complete(_:at:)`; the
    /// oracle completes one after another).
    mutating func complete(_ completions: [ReloadCompletion], at time: Double)
}

extension ReloadScheduler: DrivenScheduler {
    mutating func allDueReloads(at now: Double) -> [ReloadBatch] { dueReloads(at: now, limit: .max) }
}
/// Drives a scheduler one batch at a time, as `simulate` does (every
/// reload of a batch issued, then their results given back together; the
/// daemon gives each back as its call ends, as `DayDriver` does); kept
/// across iterations so that each iteration continues the same steady state.
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
    /// The next decision of the batch to complete.
    var next = 0
    var now = 1_800_000_000.0
    /// The results of a batch, kept to be filled again (the driver's
    /// memory, not the scheduler's: ``letGoOfBuffers()``).
    private var results: [ReloadCompletion] = []
    private(set) var events = 0

    init(_ scheduler: S, instances: Int) {
        self.scheduler = scheduler
        for n in 0..<instances {
            _ = self.scheduler.add(
                WidgetInstance(id: "w\(n)", plugin: "p\(n % 3)", kind: "k\(n % 2)", app: "app\(n % 5)"), at: now)
        }
    }

    /// Reloads of a batch (up to `limit`, the rest of the batch at most)
    /// issued at the wakeup that found them and completed together, as
    /// `simulate` completes a batch's results: one event per reload.
    @inline(__always)
    mutating func step(limit: Int = .max) {
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
        results.removeAll(keepingCapacity: true)
        let decisions = batches[batch].decisions
        let end = next + min(limit, decisions.count - next)
        for decision in decisions[next..<end] {
            let id = decision.instanceID
            let interval = 900 + StableJitter.fraction(for: id) * 2700
            results.append(
                ReloadCompletion(
                    instanceID: id, outcome: .success(TimelineRecord(entries: [], policy: .after(now + interval)))))
        }
        next = end
        scheduler.complete(results, at: now)
        events += results.count
    }

    /// `count` events.
    mutating func run(_ count: Int) {
        let end = events + count
        while events < end { step(limit: end - events) }
    }

    /// Drops the driver's own buffers (the last batches and the results
    /// array), so that what stays resident is the scheduler's.
    mutating func letGoOfBuffers() {
        batches = []
        results = []
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
