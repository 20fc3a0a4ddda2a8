// The benchmark's event loop, shared with Benchmarks/Profile (which builds
// it into the scheduler's module with -D PROFILE: the scheduler is not imported).
import WidgetHostModel

#if !PROFILE
    import WidgetHostScheduler
#else
    import Dispatch
#endif

/// What the driver needs of a scheduler: the shipped scheduler's ticket API.
protocol DrivenScheduler {
    mutating func add(_ instance: WidgetInstance, at time: Double) -> Bool
    func nextWakeup() -> Double?
    /// Every reload due at `now`, as tickets (the shipped scheduler's
    /// `dueReloads(at:limit:into:)` without a limit).
    mutating func allDueReloads(at now: Double, into tickets: inout [ReloadTicket])
    /// A batch's results by ticket, taken out of `completions`, which is
    /// left empty (the shipped scheduler's `complete(taking:at:)`).
    mutating func complete(taking completions: inout [TicketCompletion], at time: Double)
}

extension ReloadScheduler: DrivenScheduler {
    mutating func allDueReloads(at now: Double, into tickets: inout [ReloadTicket]) {
        dueReloads(at: now, limit: .max, into: &tickets)
    }
}

/// Drives a scheduler one batch at a time, as `simulate` does (every
/// reload of a batch issued, then their results given back together; the
/// daemon gives each back as its call ends, as `DayDriver` does); kept
/// across iterations so that each iteration continues the same steady state.
///
/// The reloads are handed out as tickets and completed by ticket: a driver
/// that calls a provider needs the instance (by position) and nothing of
/// the decision's details. The provider answers from the position: an
/// entry-less timeline asking to be reloaded 15-60 minutes later, the
/// interval fixed per instance (from its id, when it was added).
///
/// A struct, run by one mutating call per measurement (``run(_:)``): as a
/// class, every call into the scheduler through its stored property was a
/// run-time exclusivity check; that is not the scheduler's cost.
struct Driver<S: DrivenScheduler> {
    var scheduler: S
    /// The tickets of the last wakeup, completed in order.
    var tickets: [ReloadTicket] = []
    /// The next ticket to complete.
    var next = 0
    var now = 1_800_000_000.0
    /// Each instance's reload interval, by position.
    private let intervals: [Double]
    /// The results of a batch, kept to be filled again (the driver's
    /// memory, not the scheduler's: ``letGoOfBuffers()``).
    private var results: [TicketCompletion] = []
    private(set) var events = 0
    #if PROFILE
        /// With `split` (`profile.sh --split`), the nanoseconds spent in
        /// finding and issuing the reloads (`nextWakeup()` and
        /// `dueReloads`) and in completing them, apart.
        var split = false
        private(set) var issuingNanoseconds: UInt64 = 0
        private(set) var completingNanoseconds: UInt64 = 0
        /// The wakeups found, and the batches completed, while `split`.
        private(set) var wakeups = 0
        private(set) var batches = 0
    #endif

    /// A driver of `instances` instances, named `w<first>` on (another
    /// shard's instances take other names, so other jitters and intervals).
    init(_ scheduler: S, instances: Int, first: Int = 0) {
        self.scheduler = scheduler
        var intervals: [Double] = []
        for n in first..<(first + instances) {
            let id = "w\(n)"
            _ = self.scheduler.add(
                WidgetInstance(id: id, plugin: "p\(n % 3)", kind: "k\(n % 2)", app: "app\(n % 5)"), at: now)
            intervals.append(900 + StableJitter.fraction(for: id) * 2700)
        }
        self.intervals = intervals
    }

    /// Reloads of a wakeup (up to `limit`, the rest of it at most) issued
    /// at the wakeup that found them and completed together, as `simulate`
    /// completes a batch's results: one event per reload.
    @inline(__always)
    mutating func step(limit: Int = .max) {
        #if PROFILE
            let issuing = split ? DispatchTime.now().uptimeNanoseconds : 0
        #endif
        while next == tickets.count {
            guard let wake = scheduler.nextWakeup() else { fatalError("nothing scheduled") }
            now = wake
            next = 0
            scheduler.allDueReloads(at: wake, into: &tickets)
            #if PROFILE
                if split { wakeups += 1 }
            #endif
        }
        #if PROFILE
            if split { issuingNanoseconds += DispatchTime.now().uptimeNanoseconds - issuing }
        #endif
        let end = next + min(limit, tickets.count - next)
        for i in next..<end {
            let ticket = tickets[i]
            let interval = intervals[Int(ticket.position)]
            results.append(
                TicketCompletion(
                    ticket: ticket, outcome: .success(TimelineRecord(entries: [], policy: .after(now + interval)))))
        }
        next = end
        events += results.count
        #if PROFILE
            let completing = split ? DispatchTime.now().uptimeNanoseconds : 0
        #endif
        scheduler.complete(taking: &results, at: now)
        #if PROFILE
            if split {
                completingNanoseconds += DispatchTime.now().uptimeNanoseconds - completing
                batches += 1
            }
        #endif
    }

    /// `count` events.
    mutating func run(_ count: Int) {
        let end = events + count
        while events < end { step(limit: end - events) }
    }

    /// Drops the driver's own buffers (the last tickets and the results
    /// array), so that what stays resident is the scheduler's.
    mutating func letGoOfBuffers() {
        tickets = []
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
