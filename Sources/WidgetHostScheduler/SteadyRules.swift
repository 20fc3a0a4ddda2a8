import WidgetHostModel

/// The rules that the steady state's reloads run through (``ReloadRules``
/// has the rest): the plan of a plain policy reload, the viewing tier, the
/// hour the tier can change at, the time a timeline makes an instance
/// due. They read a dozen numbers of the configuration, held here as
/// plain values: copying the whole configuration (some 160 bytes) into
/// the rules of every plan was a call to `memcpy` for each.
///
/// A small value, made when the configuration is set
/// (``ReloadScheduler``) or from it (``ReloadRules/steady``).
struct SteadyRules: Sendable {
    let learningPeriod: Double
    let minimumReloadInterval: Double
    let developerReloadFloor: Double
    let maximumJitter: Double
    let budgetWindow: Double
    let coalescingCap: Double
    let coalescingFraction: Double
    let learningAllowance: Int
    let frequentAllowance: Int
    let occasionalAllowance: Int
    let rareAllowance: Int
    let frequentVisibleHours: Int
    let occasionalVisibleHours: Int
    let developerMode: Bool
    let deferPolicyReloadsWhileHidden: Bool

    init(_ configuration: SchedulerConfiguration) {
        learningPeriod = configuration.learningPeriod
        minimumReloadInterval = configuration.minimumReloadInterval
        developerReloadFloor = configuration.developerReloadFloor
        maximumJitter = configuration.maximumJitter
        budgetWindow = configuration.budgetWindow
        coalescingCap = configuration.coalescingCap
        coalescingFraction = configuration.coalescingFraction
        learningAllowance = configuration.learningAllowance
        frequentAllowance = configuration.frequentAllowance
        occasionalAllowance = configuration.occasionalAllowance
        rareAllowance = configuration.rareAllowance
        frequentVisibleHours = configuration.frequentVisibleHours
        occasionalVisibleHours = configuration.occasionalVisibleHours
        developerMode = configuration.developerMode
        deferPolicyReloadsWhileHidden = configuration.deferPolicyReloadsWhileHidden
    }

    /// The allowance for a viewing tier
    /// (``SchedulerConfiguration/allowance(for:)``).
    func allowance(for tier: ViewTier) -> Int {
        switch tier {
        case .learning: learningAllowance
        case .frequent: frequentAllowance
        case .occasional: occasionalAllowance
        case .rare: rareAllowance
        }
    }

    /// The first time after `time` at which the viewing tier of an instance
    /// added at `addedAt` can change: the next whole hour (its visible hours
    /// are counted by hour), or the end of its learning period when that
    /// comes first. The tier is the same at every time from `time` up to,
    /// not including, this one.
    func tierBoundary(after time: Double, addedAt: Double) -> Double {
        let hour = ((time / 3600).rounded(.down) + 1) * 3600
        let learningEnds = addedAt + learningPeriod
        return learningEnds > time && learningEnds < hour ? learningEnds : hour
    }

    @inline(__always)
    func tier(_ s: InstanceView, at time: Double) -> ViewTier {
        if time - s.addedAt < learningPeriod { return .learning }
        let hot = s.hot
        let hours: Int
        if Self.isShownAllDay(hot, at: time) {
            // Every one of the 24 hours is visible, with no hour to mark
            // or count (a visible instance's tier, after its learning
            // period, was asked five or six times per reload, and marking
            // a copy of its history to count it took a third of the
            // reload's instructions).
            hours = 24
        } else {
            var views = hot.pointee.views
            if hot.pointee.isVisible { views.markVisible(from: s.visibleSince ?? time, to: time) }
            hours = views.visibleHours(at: time)
        }
        return tier(visibleHours: hours)
    }

    /// Whether the instance of `hot` is visible in every hour of the 24
    /// that end with `time`'s, known without counting them: shown since at
    /// least 25 hours before `time` and still shown, with no hour marked
    /// after `time`'s. True at `time` means true at every later time while
    /// the record stays as it is.
    @inline(__always)
    static func isShownAllDay(_ hot: UnsafePointer<HotRecord>, at time: Double) -> Bool {
        hot.pointee.isVisible && hot.pointee.storedVisibleSince <= time - shownThroughTheWindow
            && time <= largestPlainTime && Double(hot.pointee.views.hour) * 3600 <= time
    }

    /// The tier of an instance visible in `hours` of the last 24, after
    /// its learning period.
    @inline(__always)
    func tier(visibleHours hours: Int) -> ViewTier {
        if hours >= frequentVisibleHours { return .frequent }
        if hours >= occasionalVisibleHours { return .occasional }
        return .rare
    }

    /// How far after its due time a held reload's return is found here:
    /// `SchedulerConfiguration.budgetReturn`, which the rules ask, looks
    /// 64 whole hours ahead at most and gives the 64th when the return is
    /// later (a budget window of days), so a return more than 63 hours
    /// after the due time, where the two could differ, is left to the rules.
    static let heldReturnReach: Double = 63 * 3_600

    /// How long before a time an instance shown since then has been shown
    /// in every hour of the 24 that end with that time's hour: 24 hours
    /// and one more, so that the hours of both times, each rounded down,
    /// are at least 24 apart whatever the rounding of their division.
    static let shownThroughTheWindow: Double = 25 * 3_600

    /// The latest time at which an hour's start (hours times 3,600) is an
    /// exact `Double`, so that a view history's hour is compared with a
    /// time without rounding (about 31 million years on).
    static let largestPlainTime: Double = 1e15

    /// `policyDue(for:instanceID:receivedAt:)` with the instance's jitter
    /// fraction already known.
    @inline(__always)
    func policyDue(for timeline: TimelineRecord, jitterFraction: Double, receivedAt time: Double) -> Double? {
        // Developer mode lifts the minimum interval to a 1-second floor that
        // keeps virtual time moving; `constrain` reports the interval it lifted.
        let floor =
            time
            + (developerMode ? developerReloadFloor : minimumReloadInterval)
        switch timeline.policy {
        case .never:
            return nil
        case .atEnd:
            var last: Double?
            for entry in timeline.entries where entry.date.isFinite {
                if last.map({ entry.date > $0 }) ?? true { last = entry.date }
            }
            return max(last ?? time, floor)
        case .after(let date):
            // `date != date`: NaN, in one comparison (`isNaN` tests the bits).
            if date != date { return floor }
            if date == .infinity { return nil }
            let maximum = maximumJitter
            return later(date + (maximum > 0 ? jitterFraction * maximum : 0), floor)
        }
    }

    /// The plan of `s` at `now` when it is the steady state's (nil
    /// otherwise, when ``ReloadRules/candidate(_:appCharge:at:)`` decides): nothing but
    /// the timeline's policy asks for a reload (no rare values: no request,
    /// location change, backoff or push ledger), the reload is counted (the
    /// app in the background, not in developer mode), nothing hides it
    /// (visible since before it is due, or hidden reloads not deferred), the
    /// spacing and the budget leave its due time as it is, and that time is
    /// not before `now`. The plan is then the due time with its coalescing
    /// slack, a plain policy reload, not under the free cap, with no
    /// recheck: what `candidate`, `hasCappedCandidate` and `recheckTime`
    /// find for it, in a few comparisons, one tier and one budget question.
    /// The oracle comparison checks that they agree.
    @inline(__always)
    func plainPlan(_ s: InstanceView, appCharge: ReloadCharge, at now: Double) -> (time: Double, latest: Double)? {
        let hot = s.hot
        guard let due = policyDueAlone(s, appCharge: appCharge, at: now) else { return nil }
        // A hidden bound: hidden now, or shown after it came due (NaN: never shown, no bound).
        if deferPolicyReloadsWhileHidden
            && (!hot.pointee.isVisible || hot.pointee.storedVisibleSince > due)
        {
            return nil
        }
        // Spacing (NaN: no counted reload yet, no spacing).
        if hot.pointee.storedLedgerLast + minimumReloadInterval > due { return nil }
        // The budget at the due time, read with the tier at that time (`due >= now`).
        // A ledger holding fewer times than the allowance has room in every
        // window: its ring is read only when it might not.
        let allowance = allowance(for: tier(s, at: due))
        guard
            Int(hot.pointee.storedLedgerCount) < allowance
                || s.ledgerNextAllowed(
                    from: due, limit: allowance, window: budgetWindow) <= due
        else { return nil }
        let received = hot.pointee.storedTimelineReceivedAt
        let ahead = later(0, due - (received != received ? due : received))  // (NaN: none received)
        return (due, due + min(coalescingCap, coalescingFraction * ahead))
    }

    /// The policy's due time of an instance that nothing but its policy
    /// asks to reload (no reload in flight, no rare values), counted (the
    /// app in the background, not in developer mode), due at or after
    /// `now`; nil otherwise.
    @inline(__always)
    private func policyDueAlone(_ s: InstanceView, appCharge: ReloadCharge, at now: Double) -> Double? {
        let hot = s.hot
        guard !hot.pointee.isInFlight, !hot.pointee.hasRare, appCharge == .counted, !developerMode
        else { return nil }
        let due = hot.pointee.storedPolicyDue
        // NaN (no policy due) and infinity fail.
        guard due.isFinite, due >= now else { return nil }
        return due
    }

    /// The plan of a counted policy reload held by the budget alone, of an
    /// instance past its learning period and shown all day (so that its
    /// tier, and its allowance, stay the same from its due time on), with
    /// the time its plan is to be made again (the first whole hour after
    /// its due time, when that comes before the budget lets it go; else
    /// infinity): what ``ReloadRules/candidate(_:appCharge:at:)`` and
    /// ``ReloadRules/recheckTime(_:appCharge:now:planned:)`` find for it,
    /// the budget's return found with one question to the ledger, where
    /// they ask the tier, and the ledger again, at each whole hour up to
    /// it. The plan is the budget's return, deferred from the due
    /// time (cause `.budget`), with no coalescing slack. Nil for any other
    /// instance (a plain plan, ``plainPlan(_:appCharge:at:)``, included).
    ///
    /// Past the learning period, a widget that asks to be reloaded more
    /// often than its allowance has every reload held so: a fifth of the
    /// benchmark's reloads, each planned by all the rules (about 850
    /// instructions) before.
    @inline(__always)
    func heldPlan(_ s: InstanceView, appCharge: ReloadCharge, at now: Double) -> (time: Double, recheck: Double)? {
        let hot = s.hot
        // Times so late that a day's hours past them are no longer plain
        // numbers are left to the rules.
        guard let due = policyDueAlone(s, appCharge: appCharge, at: now), due <= Self.largestPlainTime / 2
        else { return nil }
        // Shown all day at the due time, and so at every time after it
        // (no hidden bound, the same tier), past the learning period.
        guard due - hot.pointee.addedAt >= learningPeriod, Self.isShownAllDay(hot, at: due) else { return nil }
        // Spacing (NaN: no counted reload yet, no spacing).
        if hot.pointee.storedLedgerLast + minimumReloadInterval > due { return nil }
        // The budget's return, asked once: the allowance is the same at
        // every time from `due` on, and with one allowance the earliest
        // time with room at or after a time between `due` and that return
        // is the return itself (times only leave the window while nothing
        // is recorded), so `budgetReturn`'s walk from whole hour to whole
        // hour, asking the ledger again at each, finds what this one
        // question does.
        let back = s.ledgerNextAllowed(
            from: due, limit: allowance(for: tier(visibleHours: 24)), window: budgetWindow)
        // Not held (a plain plan), never let go (an allowance of none), or
        // let go past the rules' reach (a window of days): left to them.
        guard back > due, back <= due + Self.heldReturnReach else { return nil }
        let hour = tierBoundary(after: due, addedAt: hot.pointee.addedAt)
        return (back, hour > back ? .infinity : hour)
    }
}
