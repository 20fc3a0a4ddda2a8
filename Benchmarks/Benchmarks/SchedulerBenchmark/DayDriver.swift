// A virtual day of mixed widgets, shared with Benchmarks/Profile (built into
// the scheduler's module there, with -D PROFILE).
import WidgetHostModel

#if !PROFILE
    import WidgetHostScheduler
#endif

/// One virtual day of `count` instances with timelines of entries, as the
/// benchmark copy of the rules (deleted by issue 17) measured it, driven
/// through the shipped scheduler's API: timelines of 1 to 12 entries 5 to
/// 30 minutes apart; 40 % `atEnd`, 40 % `after` 5 to 60 minutes, 10 %
/// `never`, 10 % misbehaving (a date in the past or a zero interval); a
/// fifth of the instances hidden until a time of day, then shown; no
/// learning period, no coalescing slack.
///
/// It counts events as the copy did, so that its figures compare with the
/// copy's (the 31 M events/s that set issue 17's goal): a reload, an entry
/// of a timeline becoming the displayed one, an instance shown. (The copy
/// also counted each deferral it queued again; this count is a little lower.) The
/// scheduler handles each: it plans the next reload, moves the instance's
/// next entry change on (the wakeups it asks for), plans again on a show.
struct DayDriver {
    var scheduler: ReloadScheduler
    let start: Double
    let count: Int
    /// When each hidden instance is shown, in order of time.
    let shows: [(time: Double, id: String)]
    var nextShow = 0
    /// Per instance: reloads so far, and the last timeline's reload time,
    /// entry count and interval (its entry changes are counted when the next
    /// timeline replaces it, or at the end of the day).
    var reloadsOf: [UInt32]
    var lastTimeline: [(time: Double, entries: UInt32, step: UInt32)]
    private(set) var reloads = 0
    private(set) var entryChanges = 0
    private(set) var wakeups = 0
    /// The tickets of a wakeup, kept to be filled again.
    private var tickets: [ReloadTicket] = []

    /// The events of the day so far: reloads, entry changes, shows.
    var events: Int { reloads + entryChanges + nextShow }

    init(instances count: Int, start: Double = 1_800_000_000) {
        var configuration = SchedulerConfiguration()
        configuration.learningPeriod = 0
        configuration.coalescingCap = 0
        scheduler = ReloadScheduler(configuration: configuration)
        self.start = start
        self.count = count
        var shows: [(time: Double, id: String)] = []
        for i in 0..<count {
            let hidden = Self.mix(UInt64(i) ^ 0xabcdef) % 5 == 0
            _ = scheduler.add(
                WidgetInstance(id: "w\(i)", plugin: "bench", kind: "k", app: "app", isVisible: !hidden), at: start)
            if hidden { shows.append((start + Double(Self.mix(UInt64(i) ^ 0x5151) % 86_400), "w\(i)")) }
        }
        self.shows = shows.sorted { $0.time < $1.time }
        reloadsOf = Array(repeating: 0, count: count)
        lastTimeline = Array(repeating: (start, 0, 0), count: count)
    }

    /// Runs the day to its end.
    mutating func runDay() {
        let end = start + 86_400
        while true {
            let wake = scheduler.nextWakeup() ?? .infinity
            if nextShow < shows.count, shows[nextShow].time <= min(wake, end) {
                scheduler.handle(.instanceShown(shows[nextShow].id), at: shows[nextShow].time)
                nextShow += 1
                continue
            }
            guard wake <= end else { break }
            wakeups += 1
            scheduler.dueReloads(at: wake, into: &tickets)
            for ticket in tickets { reload(ticket, at: wake) }
        }
        for i in 0..<count { countEntryChanges(i, until: end) }
    }

    /// Completes `ticket`'s reload with the instance's next timeline, one reload
    /// at a time as the daemon does (the reloads-only `Driver` gives a
    /// batch's results back together, as `simulate` does; this day's
    /// batches are a reload or two, too few to read ahead).
    private mutating func reload(_ ticket: ReloadTicket, at now: Double) {
        // Instances are never removed here: the position is the number in the id.
        let i = Int(ticket.position)
        countEntryChanges(i, until: now)
        let h = Self.mix(UInt64(i) &* 0x1_0000_0001 &+ UInt64(reloadsOf[i]))
        reloadsOf[i] += 1
        reloads += 1
        let profile = Self.mix(UInt64(i)) % 100
        var step: UInt32 =
            switch h % 5 {
            case 0: 300
            case 1: 600
            case 2: 900
            case 3: 1200
            default: 1800
            }
        var entries = UInt32(3 + (h >> 8) % 10)
        let policy: ReloadPolicy
        if profile < 40 {
            policy = .atEnd
        } else if profile < 80 {
            let delay: Double =
                switch (h >> 16) % 4 {
                case 0: 300
                case 1: 900
                case 2: 1800
                default: 3600
                }
            policy = .after(now + delay)
        } else if profile < 90 {
            (step, entries, policy) = (300, 1, .never)
        } else {
            // Misbehaving: a date in the past, or a zero interval.
            (step, entries) = (0, 1)
            policy = (h >> 20) & 1 == 0 ? .after(now - 60) : .atEnd
        }
        var records: [EntryRecord] = []
        records.reserveCapacity(Int(entries))
        for k in 0..<entries {
            records.append(EntryRecord(date: now + Double(step) * Double(k), contentJSON: "{}"))
        }
        lastTimeline[i] = (now, entries, step)
        scheduler.complete(ticket, with: .success(TimelineRecord(entries: records, policy: policy)), at: now)
    }

    /// Counts the entries of instance `i`'s last timeline (after its first)
    /// whose dates are up to `time`.
    private mutating func countEntryChanges(_ i: Int, until time: Double) {
        let last = lastTimeline[i]
        guard last.entries > 1, last.step > 0, time > last.time else { return }
        entryChanges += min(Int(last.entries) - 1, Int((time - last.time) / Double(last.step)))
        lastTimeline[i].entries = 0
    }

    /// SplitMix64's finalizer: the copy's source of every random choice.
    static func mix(_ x: UInt64) -> UInt64 {
        var z = x &+ 0x9e37_79b9_7f4a_7c15
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
