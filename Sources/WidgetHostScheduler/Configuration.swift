/// Every number the scheduler uses, with its default and where the default
/// comes from. `docs/scheduler.md` explains each rule in full.
public struct SchedulerConfiguration: Sendable, Hashable, Codable {
    /// Length of the rolling budget window, seconds. WidgetKit: "A widget's
    /// budget applies to a 24-hour period ... doesn't necessarily reset at
    /// exactly midnight" (Keeping a widget up to date). Rolling, as Android's
    /// QuotaController windows.
    public var budgetWindow: Double = 86_400

    /// Counted reloads allowed per window while an instance is in its learning
    /// period. WidgetKit: "During this learning period, your widget may receive
    /// more reloads than normal"; 96 (one per 15 min) is our choice above the
    /// 40-70 range (a forum report saw 72 a day).
    public var learningAllowance: Int = 96
    /// Length of the learning period after an instance is added, seconds.
    /// WidgetKit: "The system takes a few days to learn"; we take 3 days.
    public var learningPeriod: Double = 3 * 86_400
    /// Allowance of a frequently viewed instance. WidgetKit: "For a widget the
    /// user frequently views, a daily budget typically includes from 40 to 70
    /// refreshes": the top of that range.
    public var frequentAllowance: Int = 70
    /// Allowance of an occasionally viewed instance: the bottom of WidgetKit's
    /// 40-70 range.
    public var occasionalAllowance: Int = 40
    /// Allowance of a rarely viewed instance. WidgetKit reduces reloads of
    /// rarely seen widgets without a number; 12 (one per 2 h) is our choice,
    /// in the spirit of Android's rare/restricted standby buckets.
    public var rareAllowance: Int = 12
    /// Distinct hours (of the last 24) an instance must have been visible in
    /// to count as frequently viewed. Our choice.
    public var frequentVisibleHours: Int = 6
    /// Distinct visible hours (of the last 24) to count as occasionally viewed.
    public var occasionalVisibleHours: Int = 2

    /// Minimum time between two counted reloads of one instance, and the floor
    /// under every policy-driven reload after the previous reload. WidgetKit:
    /// entries "at least about 5 minutes apart", "WidgetKit imposes a minimum
    /// amount of time before it reloads a widget"; a field report's fix for a
    /// reload loop was a 5-minute floor.
    public var minimumReloadInterval: Double = 300

    /// Host-wide cap on free reloads per `freeReloadWindow` (instance-added
    /// reloads are exempt). Android's QuotaController caps at 20 jobs a minute
    /// per app; the host-wide figure here is our choice. Over the cap, free
    /// reloads are deferred (cause `.freeRateCap`), never dropped.
    public var freeReloadLimit: Int = 60
    /// Window of the host-wide free-reload cap, seconds.
    public var freeReloadWindow: Double = 60

    /// Push reloads allowed per instance per `budgetWindow` (24 h), apart
    /// from the timeline budget. WidgetKit gives widget push notifications "a
    /// budget of their own" without publishing it; APNs treats widget pushes
    /// as low priority and throttles frequent senders. 24 (one an hour on
    /// average) is our choice: a server may push on every real change of a
    /// slowly changing value (a score, a delivery status), and a widget that
    /// gets both budgets in full (70 + 24 a day when viewed often) still
    /// reloads at most about once every 15 minutes. Over it, pushes are
    /// deferred (cause `.pushBudget`) until the oldest push reload leaves
    /// the window, never dropped; several pushes waiting are served by one
    /// reload.
    public var pushAllowance: Int = 24

    /// Upper bound of the stable per-instance jitter added to `after(date)`,
    /// seconds; 0 turns jitter off. systemd's `RandomizedDelaySec` with
    /// `FixedRandomDelay=yes`; WidgetKit warns that `after(date)` "may cause a
    /// significant increase in server load".
    public var maximumJitter: Double = 120

    /// Coalescing slack as a fraction of how far ahead a policy reload was
    /// scheduled. Android batches alarms within 75% of the interval; we are
    /// stricter.
    public var coalescingFraction: Double = 0.1
    /// Cap of the coalescing slack, seconds. systemd `AccuracySec=` defaults
    /// to 1 min.
    public var coalescingCap: Double = 60

    /// First retry delay after a failed or timed-out reload, seconds (then
    /// doubled per consecutive failure). Our choice: the minimum reload interval.
    public var backoffBase: Double = 300
    /// Cap of the retry delay, seconds.
    public var backoffCap: Double = 3_600

    /// Policy reloads that come due while an instance is hidden wait until it
    /// becomes visible. WidgetKit: "when the user views the page, WidgetKit may
    /// reload the widget when it becomes visible".
    public var deferPolicyReloadsWhileHidden: Bool = true

    /// Developer mode: every rate limit is lifted (budget, spacing, the
    /// minimum interval under policy reloads, hidden deferral, the free-reload
    /// cap) and every reload that would have been deferred says so in
    /// `wouldHaveBeenDeferred`. Failure backoff stays: it answers a failing
    /// plugin, not a rate. WidgetKit: under a debugger "WidgetKit does not
    /// impose this limit" on the refresh rate (Keeping a widget up to date).
    public var developerMode: Bool = false
    /// In developer mode, the floor under a policy reload after a timeline
    /// arrives, seconds, in place of `minimumReloadInterval`: a plugin asking
    /// for a date in the past reloads once a second instead of in a hot loop.
    public var developerReloadFloor: Double = 1

    public init() {}

    /// The retry delay after `failures` consecutive failures (1 = first).
    public func backoff(afterFailures failures: Int) -> Double {
        guard failures > 0 else { return 0 }
        let exponent = min(failures - 1, 40)
        return min(backoffCap, backoffBase * Double(1 << UInt64(exponent)))
    }

    /// The earliest time `≥ from` at which one more counted reload fits the
    /// budget, when the allowance itself can change over time: tiers change
    /// only at whole hours (views are counted per hour) and at the end of the
    /// learning period, so the allowance is re-read at each such boundary.
    /// `allowance(t)` is the allowance in force at `t`; `nextAllowed(t, a)` is
    /// the ledger's answer for a fixed allowance `a` (``RollingLedger/nextAllowed(from:limit:window:)``).
    @inlinable
    public func budgetReturn(
        from: Double, learningEnds: Double, allowance: (Double) -> Int, nextAllowed: (Double, Int) -> Double
    ) -> Double {
        Self.budgetReturn(from: from, learningEnds: learningEnds, allowance: allowance, nextAllowed: nextAllowed)
    }

    /// ``budgetReturn(from:learningEnds:allowance:nextAllowed:)``, which
    /// reads nothing of the configuration.
    @inlinable
    public static func budgetReturn(
        from: Double, learningEnds: Double, allowance: (Double) -> Int, nextAllowed: (Double, Int) -> Double
    ) -> Double {
        var time = from
        for _ in 0..<64 {
            let fits = nextAllowed(time, allowance(time))
            if fits <= time { return time }
            var boundary = ((time / 3600).rounded(.down) + 1) * 3600
            if learningEnds > time && learningEnds < boundary { boundary = learningEnds }
            if boundary >= fits { return fits }
            time = boundary
        }
        return time
    }

    /// The allowance for a viewing tier.
    public func allowance(for tier: ViewTier) -> Int {
        switch tier {
        case .learning: learningAllowance
        case .frequent: frequentAllowance
        case .occasional: occasionalAllowance
        case .rare: rareAllowance
        }
    }
}
