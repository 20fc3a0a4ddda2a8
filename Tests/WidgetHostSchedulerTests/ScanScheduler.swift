import WidgetHostModel
import WidgetHostScheduler

/// The oracle: the scheduler as it was before the index, a plain scan over
/// every instance for every question (O(N) per event). Obviously correct and
/// slow; tests only. `OracleComparisonTests` runs it beside ``ReloadScheduler``
/// and requires the same wakeups, reloads and state. The rules (`plan`,
/// `constrain`, `issue`, `complete`) are a copy, not shared, so a rule change
/// must be made in both: the comparison then says whether the index kept up.
struct ScanScheduler: Sendable {
    var configuration: SchedulerConfiguration
    /// Everything to persist; restore with `init(configuration:state:)`.
    private(set) var state: SchedulerState
    private var index: [String: Int] = [:]

    init(
        configuration: SchedulerConfiguration = SchedulerConfiguration(), state: SchedulerState = SchedulerState()
    ) {
        self.configuration = configuration
        self.state = state
        for (position, instance) in state.instances.enumerated() { index[instance.instance.id] = position }
    }

    // MARK: Instances

    /// Adds an instance; it gets its first timeline at once, free. Returns
    /// false (and changes nothing) if the id exists.
    @discardableResult
    mutating func add(_ instance: WidgetInstance, at time: Double) -> Bool {
        guard index[instance.id] == nil else { return false }
        observe(time)
        var entry = InstanceState(instance: instance, addedAt: time)
        entry.request = PendingRequest(trigger: .added, charge: .free(.instanceAdded), requestedAt: time)
        index[instance.id] = state.instances.count
        state.instances.append(entry)
        return true
    }

    /// Removes an instance and everything known about it.
    @discardableResult
    mutating func remove(_ id: String) -> Bool {
        guard let position = index.removeValue(forKey: id) else { return false }
        state.instances.remove(at: position)
        for later in position..<state.instances.count { index[state.instances[later].instance.id] = later }
        return true
    }

    /// The state of one instance.
    func instanceState(_ id: String) -> InstanceState? {
        index[id].map { state.instances[$0] }
    }

    var instanceIDs: [String] { state.instances.map(\.instance.id) }

    /// WidgetCenter's `getCurrentConfigurations()`: the placed instances, of
    /// one app or of all.
    func getCurrentConfigurations(app: String? = nil) -> [WidgetInfo] {
        state.instances.compactMap { entry in
            let i = entry.instance
            guard app == nil || i.app == app else { return nil }
            return WidgetInfo(
                id: i.id, plugin: i.plugin, kind: i.kind, family: i.family, configuration: i.configuration, app: i.app)
        }
    }

    // MARK: Events

    /// Records something that happened at `time`. Reloads it causes come out
    /// of the next `dueReloads(at:)`.
    mutating func handle(_ event: SchedulerEvent, at time: Double) {
        observe(time)
        switch event {
        case .instanceShown(let id):
            guard let p = index[id], !state.instances[p].instance.isVisible else { return }
            state.instances[p].instance.isVisible = true
            state.instances[p].visibleSince = time
        case .instanceHidden(let id):
            guard let p = index[id], state.instances[p].instance.isVisible else { return }
            state.instances[p].views.markVisible(from: state.instances[p].visibleSince ?? time, to: time)
            state.instances[p].instance.isVisible = false
            state.instances[p].visibleSince = nil
        case .appForeground(let app):
            state.apps[app, default: AppState()].foreground = true
            // A counted WidgetCenter request of this app still waiting (for the
            // spacing or the budget) is served now as the foreground makes it: free.
            for p in state.instances.indices where state.instances[p].instance.app == app {
                guard var pending = state.instances[p].request, pending.charge.isCounted else { continue }
                switch pending.trigger {
                case .reloadTimelines(_, let by) where by == app, .reloadAllTimelines(let by) where by == app:
                    pending.charge = .free(.appForeground)
                    state.instances[p].request = pending
                default: break
                }
            }
        case .appBackground(let app):
            state.apps[app, default: AppState()].foreground = false
        case .sessionStarted(let app, let kind):
            state.apps[app, default: AppState()].sessions.insert(kind)
        case .sessionEnded(let app, let kind):
            state.apps[app, default: AppState()].sessions.remove(kind)
        case .appIntent(let id):
            guard let p = index[id] else { return }
            request(p, PendingRequest(trigger: .appIntent, charge: .free(.appIntent), requestedAt: time))
        case .systemChange(let change):
            let reason: FreeReason =
                switch change {
                case .locale: .localeChange
                case .accessibility: .accessibilityChange
                case .timeZone: .timeZoneChange
                }
            for p in state.instances.indices {
                request(p, PendingRequest(trigger: .systemChange(change), charge: .free(reason), requestedAt: time))
            }
        case .significantLocationChange:
            for p in state.instances.indices where state.instances[p].instance.usesLocation {
                if state.instances[p].locationChangeAt == nil { state.instances[p].locationChangeAt = time }
            }
        case .reloadTimelines(let kind, let app):
            let charge = appCharge(app)
            for p in state.instances.indices
            where state.instances[p].instance.app == app && state.instances[p].instance.kind == kind {
                request(
                    p,
                    PendingRequest(trigger: .reloadTimelines(kind: kind, app: app), charge: charge, requestedAt: time))
            }
        case .reloadAllTimelines(let app):
            let charge = appCharge(app)
            for p in state.instances.indices where state.instances[p].instance.app == app {
                request(p, PendingRequest(trigger: .reloadAllTimelines(app: app), charge: charge, requestedAt: time))
            }
        case .push(let kind, let plugin):
            for p in state.instances.indices where state.instances[p].instance.kind == kind {
                guard plugin == nil || state.instances[p].instance.plugin == plugin else { continue }
                request(p, PendingRequest(trigger: .push, charge: .free(.push), requestedAt: time))
            }
        }
    }

    /// WidgetCenter: `reloadTimelines(ofKind:)` from `app`.
    mutating func reloadTimelines(ofKind kind: String, app: String, at time: Double) {
        handle(.reloadTimelines(ofKind: kind, app: app), at: time)
    }

    /// WidgetCenter: `reloadAllTimelines()` from `app`.
    mutating func reloadAllTimelines(app: String, at time: Double) {
        handle(.reloadAllTimelines(app: app), at: time)
    }

    /// Free while the app is in the foreground or in a session, counted otherwise.
    func appCharge(_ app: String) -> ReloadCharge {
        guard let s = state.apps[app] else { return .counted }
        if s.foreground { return .free(.appForeground) }
        if s.sessions.contains(.audio) { return .free(.audioSession) }
        if s.sessions.contains(.navigation) { return .free(.navigationSession) }
        return .counted
    }

    /// Free replaces counted; a free reason other than push replaces a push.
    static func replaces(_ new: PendingRequest, _ old: PendingRequest) -> Bool {
        switch (old.charge, new.charge) {
        case (.counted, .free): true
        case (.free(.push), .free(let reason)): reason != .push
        default: false
        }
    }

    private mutating func request(_ p: Int, _ new: PendingRequest) {
        // One pending request per instance: a free one replaces a counted one;
        // otherwise the older one stays (one reload serves both).
        if let old = state.instances[p].request, !Self.replaces(new, old) { return }
        state.instances[p].request = new
    }

    private mutating func observe(_ time: Double) {
        if let now = state.now, now >= time { return }
        state.now = time
    }

    // MARK: Budget

    /// The viewing tier of an instance at `time`.
    func tier(of id: String, at time: Double) -> ViewTier? {
        index[id].map { tier(state.instances[$0], at: time) }
    }

    func tier(_ s: InstanceState, at time: Double) -> ViewTier {
        if time - s.addedAt < configuration.learningPeriod { return .learning }
        var views = s.views
        if s.instance.isVisible { views.markVisible(from: s.visibleSince ?? time, to: time) }
        let hours = views.visibleHours(at: time)
        if hours >= configuration.frequentVisibleHours { return .frequent }
        if hours >= configuration.occasionalVisibleHours { return .occasional }
        return .rare
    }

    /// Counted reloads allowed in the 24 h window for this instance at `time`.
    func allowance(of id: String, at time: Double) -> Int? {
        tier(of: id, at: time).map { configuration.allowance(for: $0) }
    }

    // MARK: Planning

    /// When a timeline received at `time` makes the instance due.
    func policyDue(for timeline: TimelineRecord, instanceID: String, receivedAt time: Double) -> Double? {
        // Developer mode lifts the minimum interval to a 1-second floor that
        // keeps virtual time moving; `constrain` reports the interval it lifted.
        let floor =
            time
            + (configuration.developerMode ? configuration.developerReloadFloor : configuration.minimumReloadInterval)
        switch timeline.policy {
        case .never:
            return nil
        case .atEnd:
            let last = timeline.entries.map(\.date).filter(\.isFinite).max() ?? time
            return max(last, floor)
        case .after(let date):
            if date.isNaN { return floor }
            if date == .infinity { return nil }
            return max(date + StableJitter.offset(for: instanceID, maximum: configuration.maximumJitter), floor)
        }
    }

    /// The next reload of an instance, with every rule applied, as of `time`;
    /// nil if nothing is due (or it is in flight, or waits to be shown).
    func plannedReload(of id: String, at time: Double) -> PlannedReload? {
        index[id].flatMap { plan(state.instances[$0], at: time) }
    }

    func plan(_ s: InstanceState, at now: Double) -> PlannedReload? {
        guard s.inFlight == nil else { return nil }
        var best: PlannedReload?
        func consider(_ candidate: PlannedReload?) {
            guard let c = candidate else { return }
            guard let b = best else {
                best = c
                return
            }
            if c.time < b.time || (c.time == b.time && !c.charge.isCounted && b.charge.isCounted) { best = c }
        }
        if let r = s.request {
            consider(
                constrain(s, trigger: r.trigger, charge: r.charge, base: r.requestedAt, hiddenBound: nil, now: now))
        }
        if let loc = s.locationChangeAt, s.instance.isVisible {
            let base = max(loc, s.visibleSince ?? loc)
            consider(
                constrain(
                    s, trigger: .significantLocationChange, charge: .free(.significantLocationChange), base: base,
                    hiddenBound: nil, now: now))
        }
        if let due = s.policyDue {
            var hidden: Double?? = nil  // nil: no bound; .some(nil): hidden now; .some(t): shown at t
            if configuration.deferPolicyReloadsWhileHidden {
                if !s.instance.isVisible {
                    hidden = .some(nil)
                } else if let shown = s.visibleSince, shown > due {
                    hidden = .some(shown)
                }
            }
            consider(
                constrain(
                    s, trigger: .policy, charge: appCharge(s.instance.app), base: due, hiddenBound: hidden, now: now))
        }
        return best
    }

    private func constrain(
        _ s: InstanceState, trigger: ReloadTrigger, charge: ReloadCharge, base: Double, hiddenBound: Double??,
        now: Double
    ) -> PlannedReload? {
        let developer = configuration.developerMode
        // Limits that always apply: backoff, the free-reload cap.
        // Limits lifted in developer mode: hidden, spacing, budget.
        var actual = base
        var actualCause: DeferralCause?
        var limited = base
        var limitedCause: DeferralCause?
        var limitedUnknown = false
        if let until = s.backoffUntil, until > actual {
            actual = until
            actualCause = .backoff
        }
        limited = actual
        limitedCause = actualCause
        if developer, trigger == .policy, let received = s.timelineReceivedAt,
            received + configuration.minimumReloadInterval > limited
        {
            // The floor under policy reloads that developer mode lifted.
            limited = received + configuration.minimumReloadInterval
            limitedCause = .spacing
        }
        if let bound = hiddenBound {
            if let shown = bound {
                if shown > limited {
                    limited = shown
                    limitedCause = .hidden
                }
            } else {
                limitedUnknown = true
                limitedCause = .hidden
            }
        }
        if !limitedUnknown && charge.isCounted {
            if let last = s.ledger.last, last + configuration.minimumReloadInterval > limited {
                limited = last + configuration.minimumReloadInterval
                limitedCause = .spacing
            }
            let window = configuration.budgetWindow
            let back = configuration.budgetReturn(
                from: limited, learningEnds: s.addedAt + configuration.learningPeriod,
                allowance: { configuration.allowance(for: tier(s, at: max($0, now))) },
                nextAllowed: { s.ledger.nextAllowed(from: $0, limit: $1, window: window) })
            if back > limited {
                limited = back
                limitedCause = .budget
            }
        }
        if !limitedUnknown, case .free(.push) = charge {
            let back = s.pushLedger.nextAllowed(
                from: limited, limit: configuration.pushAllowance, window: configuration.budgetWindow)
            if back > limited {
                limited = back
                limitedCause = .pushBudget
            }
        }
        var wouldHave: Deferral?
        if developer {
            if limitedUnknown || limited > actual {
                wouldHave = Deferral(from: base, until: limitedUnknown ? nil : limited, cause: limitedCause ?? .budget)
            }
        } else {
            if limitedUnknown || !limited.isFinite { return nil }
            actual = limited
            actualCause = limitedCause
        }
        if case .free(let reason) = charge, reason != .instanceAdded, reason != .push {
            let back = state.freeLedger.nextAllowed(
                from: actual, limit: configuration.freeReloadLimit, window: configuration.freeReloadWindow)
            if back > actual {
                if developer {
                    // Lifted too; reported unless a later limit already is.
                    if wouldHave == nil || (wouldHave?.until).map({ $0 < back }) == true {
                        wouldHave = Deferral(from: base, until: back, cause: .freeRateCap)
                    }
                } else {
                    actual = back
                    actualCause = .freeRateCap
                }
            }
        }
        guard actual.isFinite else { return nil }
        var latest = actual
        var deferral: Deferral?
        if actual > base, let cause = actualCause {
            deferral = Deferral(from: base, until: actual, cause: cause)
        } else if trigger == .policy {
            let ahead = max(0, base - (s.timelineReceivedAt ?? base))
            latest = actual + min(configuration.coalescingCap, configuration.coalescingFraction * ahead)
        }
        return PlannedReload(
            time: actual, latest: latest, trigger: trigger, charge: charge, attempt: s.consecutiveFailures,
            deferral: deferral, wouldHaveBeenDeferred: wouldHave)
    }

    // MARK: Driving

    /// When the driver should next call `dueReloads(at:)`: the coalesced time
    /// of the next reload batch, or the next entry change, whichever is first.
    /// Never earlier than the latest time the scheduler was told about. Nil
    /// when nothing is scheduled.
    func nextWakeup() -> Double? {
        let now = state.now ?? -Double.greatestFiniteMagnitude
        var nextEntry = Double.infinity
        for s in state.instances {
            if let entries = s.timeline?.entries {
                for e in entries where e.date > now && e.date < nextEntry {
                    nextEntry = e.date
                    break
                }
            }
        }
        let result = min(coalescedWake(now: now) ?? .infinity, nextEntry)
        guard result.isFinite else { return nil }
        return max(result, state.now ?? result)
    }

    /// The time of the next reload batch: greedy batching (Android's alarm
    /// batching) takes reloads in order of their earliest time while that
    /// time is within every taken reload's coalescing deadline, and wakes at
    /// the last one taken. Nil when no reload is planned.
    private func coalescedWake(now: Double) -> Double? {
        var plans: [(time: Double, latest: Double)] = []
        for s in state.instances {
            if let p = plan(s, at: max(now, s.addedAt)) { plans.append((p.time, p.latest)) }
        }
        guard !plans.isEmpty else { return nil }
        plans.sort { $0.time < $1.time }
        var wake = -Double.infinity
        var deadline = Double.infinity
        for p in plans {
            if p.time > deadline { break }
            wake = p.time
            deadline = min(deadline, p.latest)
        }
        return wake
    }

    /// The reloads due at `now`, batched by plugin and kind. Each is marked in
    /// flight (and counted, if counted) until `complete(_:with:at:)`.
    mutating func dueReloads(at now: Double) -> [ReloadBatch] {
        observe(now)
        // A wakeup for something else (an entry change) before the coalesced
        // batch time issues nothing: every reload due by now belongs to that
        // batch and can wait for it, so the batch stays one wakeup.
        if let wake = coalescedWake(now: now), now < wake { return [] }
        var batches: [ReloadBatch] = []
        var batchIndex: [String: Int] = [:]
        for p in state.instances.indices {
            guard let plan = plan(state.instances[p], at: now), plan.time <= now else { continue }
            let decision = issue(p, plan, at: now)
            let key = decision.plugin + "\u{0}" + decision.kind
            if let b = batchIndex[key] {
                batches[b].decisions.append(decision)
            } else {
                batchIndex[key] = batches.count
                batches.append(
                    ReloadBatch(plugin: decision.plugin, kind: decision.kind, time: now, decisions: [decision]))
            }
        }
        return batches.sorted { ($0.plugin, $0.kind) < ($1.plugin, $1.kind) }
    }

    private mutating func issue(_ p: Int, _ plan: PlannedReload, at now: Double) -> ReloadDecision {
        var s = state.instances[p]
        var deferral = plan.deferral
        if now > plan.time {
            let coalesced = deferral == nil && plan.trigger == .policy && now <= plan.latest
            deferral = Deferral(from: deferral?.from ?? plan.time, until: now, cause: coalesced ? .coalescing : .late)
        }
        var decision = ReloadDecision(
            instanceID: s.instance.id, plugin: s.instance.plugin, kind: s.instance.kind, time: now,
            trigger: plan.trigger, charge: plan.charge, attempt: plan.attempt,
            deferral: deferral, wouldHaveBeenDeferred: plan.wouldHaveBeenDeferred)
        switch plan.charge {
        case .counted:
            s.ledger.record(now, window: configuration.budgetWindow)
            decision.allowance = configuration.allowance(for: tier(s, at: now))
            decision.countedInWindow = s.ledger.count(at: now, window: configuration.budgetWindow)
        case .free(let reason):
            if reason == .push {
                s.pushLedger.record(now, window: configuration.budgetWindow)
            } else if reason != .instanceAdded {
                state.freeLedger.record(now, window: configuration.freeReloadWindow)
            }
        }
        let dueSince = plan.deferral?.from ?? plan.time
        s.inFlight = InFlightReload(decision: decision, dueSince: dueSince)
        s.lastReloadAt = now
        s.request = nil
        s.locationChangeAt = nil
        state.instances[p] = s
        return decision
    }

    /// Records how a reload ended. A success replaces the timeline; a failure
    /// keeps the last good one and retries with exponential backoff.
    mutating func complete(_ id: String, with outcome: ReloadOutcome, at time: Double) {
        observe(time)
        guard let p = index[id], let flight = state.instances[p].inFlight else { return }
        var s = state.instances[p]
        s.inFlight = nil
        switch outcome {
        case .success(let timeline):
            s.timeline = timeline
            s.timelineReceivedAt = time
            s.policyDue = policyDue(for: timeline, instanceID: id, receivedAt: time)
            s.consecutiveFailures = 0
            s.backoffUntil = nil
            s.lastFailure = nil
        case .notCalled(_, let retryAt):
            // Never called: the charge given back, no failure counted, the
            // reload held until `retryAt`.
            let issued = flight.decision.time
            // Not the host-wide free cap: it limits tries, called or not.
            switch flight.decision.charge {
            case .counted: s.ledger.forget(issued)
            case .free(.push): s.pushLedger.forget(issued)
            case .free: break
            }
            let until = retryAt.isFinite ? max(retryAt, time) : time
            s.backoffUntil = max(until, s.backoffUntil ?? until)
        case .failure, .timedOut:
            let reason: String =
                if case .failure(let text) = outcome { text } else { "timed out" }
            s.consecutiveFailures += 1
            let retry = time + configuration.backoff(afterFailures: s.consecutiveFailures)
            s.backoffUntil = retry
            s.lastFailure = FailureRecord(
                time: time, reason: reason, consecutiveFailures: s.consecutiveFailures, retryAt: retry)
        }
        if case .success = outcome {
        } else {
            // No timeline: the request, or the policy's due time, waits again.
            let d = flight.decision
            if d.trigger != .policy {
                let again = PendingRequest(trigger: d.trigger, charge: d.charge, requestedAt: flight.dueSince)
                if let old = s.request, !Self.replaces(again, old) {
                } else {
                    s.request = again
                }
            } else if s.policyDue == nil {
                s.policyDue = flight.dueSince
            }
        }
        state.instances[p] = s
    }

    /// Ends a not-called reload's hold: the instance waits only for its
    /// own failures' backoff.
    mutating func endHold(of id: String, at time: Double) {
        observe(time)
        guard let p = index[id], let until = state.instances[p].backoffUntil, until > time else { return }
        let s = state.instances[p]
        let retry = s.consecutiveFailures > 0 ? s.lastFailure?.retryAt : nil
        if retry.map({ $0 < until }) ?? true { state.instances[p].backoffUntil = retry }
    }

    // MARK: Display

    /// The entry an instance shows at `time` (the last whose date has passed).
    func displayedEntry(of id: String, at time: Double) -> EntryRecord? {
        index[id].flatMap { state.instances[$0].timeline?.entry(at: time) }
    }

    /// The next time after `time` at which the instance's displayed entry changes.
    func nextEntryChange(of id: String, after time: Double) -> Double? {
        index[id].flatMap { state.instances[$0].timeline?.entries.first(where: { $0.date > time })?.date }
    }

    /// The relevance score in force for an instance at `time`: the displayed
    /// entry's score while its duration holds (duration 0: while it is
    /// displayed), else 0.
    func relevanceScore(of id: String, at time: Double) -> Double {
        guard let p = index[id], let entry = state.instances[p].timeline?.entry(at: time),
            let relevance = entry.relevance, time >= entry.date
        else { return 0 }
        if relevance.duration > 0 && time >= entry.date + relevance.duration { return 0 }
        return max(0, relevance.score)
    }

    /// Which instance of a stack should be on top at `time`: the highest
    /// relevance score in force; ties go to the earlier id in `ids`.
    func topOfStack(_ ids: [String], at time: Double) -> String? {
        var best: (id: String, score: Double)?
        for id in ids where index[id] != nil {
            let score = relevanceScore(of: id, at: time)
            if best == nil || score > best!.score { best = (id, score) }
        }
        return best?.id
    }

    // MARK: Explain

    /// Why an instance is or is not being reloaded, with exact times.
    func explain(_ id: String, at time: Double) -> ReloadExplanation? {
        guard let p = index[id] else { return nil }
        let s = state.instances[p]
        let tier = tier(s, at: time)
        let allowance = configuration.allowance(for: tier)
        let waiting =
            configuration.deferPolicyReloadsWhileHidden && !s.instance.isVisible
            && (s.policyDue.map { $0 <= time } ?? false)
        return ReloadExplanation(
            instanceID: id, time: time, isVisible: s.instance.isVisible, tier: tier, allowance: allowance,
            countedInWindow: s.ledger.count(at: time, window: configuration.budgetWindow),
            budgetAvailableAt: s.ledger.nextAllowed(from: time, limit: allowance, window: configuration.budgetWindow),
            spacingAvailableAt: s.ledger.last.map { $0 + configuration.minimumReloadInterval },
            policy: s.timeline?.policy, policyDue: s.policyDue, waitingForVisibility: waiting,
            pendingRequest: s.request, inFlight: s.inFlight?.decision, backoffUntil: s.backoffUntil,
            lastFailure: s.lastFailure, next: plan(s, at: time))
    }

    // MARK: Virtual driving

    /// Drives the scheduler in virtual time up to `end`: jumps the clock to
    /// each wakeup, issues the due reloads, and completes each at once with
    /// `provider`'s outcome. Returns the decisions in order.
    @discardableResult
    mutating func run(
        until end: Double, clock: VirtualClock, provider: (ReloadDecision) -> ReloadOutcome
    ) -> [ReloadDecision] {
        var all: [ReloadDecision] = []
        var previous = -Double.infinity
        while let wake = nextWakeup(), wake <= end {
            clock.advance(to: wake)
            let now = clock.now()
            let batches = dueReloads(at: now)
            if batches.isEmpty && now <= previous { break }  // defensive: no progress possible
            previous = now
            for batch in batches {
                for decision in batch.decisions {
                    all.append(decision)
                    complete(decision.instanceID, with: provider(decision), at: now)
                }
            }
        }
        clock.advance(to: end)
        observe(end)
        return all
    }
}
