import WidgetHostModel

/// The budgeted reload scheduler: a pure, synchronous, deterministic model.
///
/// It performs no I/O and reads no clock: every call takes the time. A driver
/// loops: `nextWakeup()`, sleep (or jump a ``VirtualClock``) to it,
/// `dueReloads(at:)`, run the reloads (one child per ``ReloadBatch``), and
/// `complete(_:with:at:)` each one. External happenings go through `handle(_:at:)`.
///
/// ```swift
/// var scheduler = ReloadScheduler()
/// scheduler.add(WidgetInstance(id: "w1", plugin: "weather", kind: "forecast", app: "com.example"), at: now)
/// while let wake = scheduler.nextWakeup() {
///     sleep(until: wake)
///     for batch in scheduler.dueReloads(at: wake) { /* call the plugin, then complete(_:with:at:) */ }
/// }
/// ```
///
/// Cost: the time each instance is next due is kept in a 4-ary heap
/// (``DueQueue``), so `nextWakeup()` reads the earliest and plans only the
/// instances within the coalescing slack of it, and `dueReloads(at:)` plans
/// only the k instances due: O(k log N). An event plans again only the
/// instances it concerns (per-app and per-app-and-kind indexes; one pass for
/// the host-wide ones). The rules themselves are in `plan` and `constrain`,
/// evaluated per instance exactly as a scan over every instance would.
public struct ReloadScheduler: Sendable {
    /// The rules' numbers; changing them plans every instance again.
    public var configuration: SchedulerConfiguration {
        didSet { rebuildIndex() }
    }
    /// Everything to persist; restore with `init(configuration:state:)`.
    public private(set) var state: SchedulerState
    private var index: [String: Int] = [:]
    /// Per instance position: the time its next reload is due, as planned at
    /// `state.now` (never later than the truth: the free-reload cap can only
    /// move a plan later after it was made).
    private var reloads = DueQueue()
    /// Instances whose plan depends on the hour `now` is in (a counted reload
    /// overdue and waiting for budget: the allowance follows the viewing tier
    /// at `now`), keyed by when that hour (or the learning period) ends.
    private var rechecks = DueQueue()
    /// Per instance position: its next entry date after `state.now`.
    private var entryChanges = DueQueue()
    /// Instance positions by app, for app events and `reloadAllTimelines`.
    private var byApp: [String: [Int]] = [:]
    /// Instance positions by app and kind, for `reloadTimelines(ofKind:)`.
    private var byAppAndKind: [AppKind: [Int]] = [:]
    /// Positions of the instances that use location.
    private var locationUsers: [Int] = []
    /// Per position: the coalescing deadline of the plan queued in `reloads`.
    private var latest: [Double] = []
    /// Per position: whether the plan has a candidate under the host-wide
    /// free-reload cap (which moves it later as other instances consume the
    /// cap): such a queued time is planned again before it is used.
    private var underFreeCap: [Bool] = []

    private struct AppKind: Hashable, Sendable {
        var app: String
        var kind: String
    }

    public init(
        configuration: SchedulerConfiguration = SchedulerConfiguration(), state: SchedulerState = SchedulerState()
    ) {
        self.configuration = configuration
        self.state = state
        rebuildIndex()
    }

    // MARK: Index

    private mutating func rebuildIndex() {
        index = Dictionary(minimumCapacity: state.instances.count)
        reloads = DueQueue()
        rechecks = DueQueue()
        entryChanges = DueQueue()
        byApp = [:]
        byAppAndKind = [:]
        locationUsers = []
        latest = []
        underFreeCap = []
        for position in state.instances.indices {
            index[state.instances[position].instance.id] = position
            enter(position)
        }
    }

    /// Puts the instance at `position` in the groups and queues.
    private mutating func enter(_ position: Int) {
        let instance = state.instances[position].instance
        byApp[instance.app, default: []].append(position)
        byAppAndKind[AppKind(app: instance.app, kind: instance.kind), default: []].append(position)
        if instance.usesLocation { locationUsers.append(position) }
        latest.append(.infinity)
        underFreeCap.append(false)
        replan(position)
        replanEntry(position)
    }

    /// Plans the instance at `position` again, as of `state.now`.
    private mutating func replan(_ position: Int) {
        let s = state.instances[position]
        let now = max(state.now ?? -Double.greatestFiniteMagnitude, s.addedAt)
        let planned = plan(s, at: now)
        reloads.set(position, to: planned?.time ?? .infinity)
        latest[position] = planned?.latest ?? .infinity
        underFreeCap[position] = hasCappedCandidate(s)
        rechecks.set(position, to: recheckTime(s, now: now))
    }

    /// Whether a candidate of `s` is a free reload under the host-wide cap.
    private func hasCappedCandidate(_ s: InstanceState) -> Bool {
        if configuration.developerMode { return false }
        if let r = s.request, case .free(let reason) = r.charge, reason != .instanceAdded { return true }
        if s.locationChangeAt != nil { return true }
        return s.policyDue != nil && !appCharge(s.instance.app).isCounted
    }

    /// When the plan of `s` can change with no event but the passing of
    /// time: a counted reload already due but held (spacing, budget) is
    /// planned with the allowance of the viewing tier at `now`, which
    /// changes only at whole hours and at the end of the learning period.
    /// `.infinity` when the plan does not depend on `now`.
    private func recheckTime(_ s: InstanceState, now: Double) -> Double {
        guard s.inFlight == nil else { return .infinity }
        let spacing = s.ledger.last.map { $0 + configuration.minimumReloadInterval } ?? -Double.infinity
        let backoff = s.backoffUntil ?? -Double.infinity
        func heldBefore(_ base: Double) -> Bool { max(base, spacing, backoff) < now }
        var sensitive = false
        if let r = s.request, r.charge.isCounted, heldBefore(r.requestedAt) { sensitive = true }
        if !sensitive, let due = s.policyDue, heldBefore(due), appCharge(s.instance.app).isCounted,
            !(configuration.deferPolicyReloadsWhileHidden && !s.instance.isVisible)
        {
            sensitive = true
        }
        guard sensitive else { return .infinity }
        var end = ((now / 3600).rounded(.down) + 1) * 3600
        let learningEnds = s.addedAt + configuration.learningPeriod
        if learningEnds > now && learningEnds < end { end = learningEnds }
        return end
    }

    /// Queues the next entry date after `state.now` of the instance at `position`.
    private mutating func replanEntry(_ position: Int) {
        let now = state.now ?? -Double.greatestFiniteMagnitude
        guard let entries = state.instances[position].timeline?.entries else {
            entryChanges.set(position, to: .infinity)
            return
        }
        // Entries are sorted by date (TimelineRecord): the first after `now`.
        var low = 0
        var high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if entries[mid].date > now { high = mid } else { low = mid + 1 }
        }
        entryChanges.set(position, to: low < entries.count ? entries[low].date : .infinity)
    }

    private mutating func replan(_ positions: [Int]?) {
        for position in positions ?? [] { replan(position) }
    }

    // MARK: Instances

    /// Adds an instance; it gets its first timeline at once, free. Returns
    /// false (and changes nothing) if the id exists.
    @discardableResult
    public mutating func add(_ instance: WidgetInstance, at time: Double) -> Bool {
        guard index[instance.id] == nil else { return false }
        observe(time)
        var entry = InstanceState(instance: instance, addedAt: time)
        entry.request = PendingRequest(trigger: .added, charge: .free(.instanceAdded), requestedAt: time)
        let position = state.instances.count
        index[instance.id] = position
        state.instances.append(entry)
        enter(position)
        return true
    }

    /// Removes an instance and everything known about it.
    @discardableResult
    public mutating func remove(_ id: String) -> Bool {
        guard let position = index.removeValue(forKey: id) else { return false }
        let removed = state.instances.remove(at: position).instance
        for later in position..<state.instances.count { index[state.instances[later].instance.id] = later }
        reloads.removePosition(position)
        latest.remove(at: position)
        underFreeCap.remove(at: position)
        rechecks.removePosition(position)
        entryChanges.removePosition(position)
        func renumber(_ list: inout [Int]) {
            list.removeAll { $0 == position }
            for i in list.indices where list[i] > position { list[i] -= 1 }
        }
        renumber(&byApp[removed.app, default: []])
        renumber(&byAppAndKind[AppKind(app: removed.app, kind: removed.kind), default: []])
        for key in byApp.keys where key != removed.app { renumber(&byApp[key]!) }
        for key in byAppAndKind.keys where key != AppKind(app: removed.app, kind: removed.kind) {
            renumber(&byAppAndKind[key]!)
        }
        renumber(&locationUsers)
        return true
    }

    /// The state of one instance.
    public func instanceState(_ id: String) -> InstanceState? {
        index[id].map { state.instances[$0] }
    }

    public var instanceIDs: [String] { state.instances.map(\.instance.id) }

    /// WidgetCenter's `getCurrentConfigurations()`: the placed instances, of
    /// one app or of all.
    public func getCurrentConfigurations(app: String? = nil) -> [WidgetInfo] {
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
    public mutating func handle(_ event: SchedulerEvent, at time: Double) {
        observe(time)
        switch event {
        case .instanceShown(let id):
            guard let p = index[id], !state.instances[p].instance.isVisible else { return }
            state.instances[p].instance.isVisible = true
            state.instances[p].visibleSince = time
            replan(p)
        case .instanceHidden(let id):
            guard let p = index[id], state.instances[p].instance.isVisible else { return }
            state.instances[p].views.markVisible(from: state.instances[p].visibleSince ?? time, to: time)
            state.instances[p].instance.isVisible = false
            state.instances[p].visibleSince = nil
            replan(p)
        case .appForeground(let app):
            state.apps[app, default: AppState()].foreground = true
            // A counted WidgetCenter request of this app still waiting (for the
            // spacing or the budget) is served now as the foreground makes it: free.
            for p in byApp[app] ?? [] {
                guard var pending = state.instances[p].request, pending.charge.isCounted else { continue }
                switch pending.trigger {
                case .reloadTimelines(_, let by) where by == app, .reloadAllTimelines(let by) where by == app:
                    pending.charge = .free(.appForeground)
                    state.instances[p].request = pending
                default: break
                }
            }
            replan(byApp[app])
        case .appBackground(let app):
            state.apps[app, default: AppState()].foreground = false
            replan(byApp[app])
        case .sessionStarted(let app, let kind):
            state.apps[app, default: AppState()].sessions.insert(kind)
            replan(byApp[app])
        case .sessionEnded(let app, let kind):
            state.apps[app, default: AppState()].sessions.remove(kind)
            replan(byApp[app])
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
            for p in locationUsers where state.instances[p].locationChangeAt == nil {
                state.instances[p].locationChangeAt = time
                replan(p)
            }
        case .reloadTimelines(let kind, let app):
            let charge = appCharge(app)
            for p in byAppAndKind[AppKind(app: app, kind: kind)] ?? [] {
                request(
                    p,
                    PendingRequest(trigger: .reloadTimelines(kind: kind, app: app), charge: charge, requestedAt: time))
            }
        case .reloadAllTimelines(let app):
            let charge = appCharge(app)
            for p in byApp[app] ?? [] {
                request(p, PendingRequest(trigger: .reloadAllTimelines(app: app), charge: charge, requestedAt: time))
            }
        case .push(let kind, let plugin):
            for p in positions(ofKind: kind, plugin: plugin) {
                request(p, PendingRequest(trigger: .push, charge: .free(.push), requestedAt: time))
            }
        }
    }

    /// Positions of the instances of `kind` (and `plugin`, when given), ascending.
    private func positions(ofKind kind: String, plugin: String?) -> [Int] {
        var found: [Int] = []
        for (key, positions) in byAppAndKind where key.kind == kind { found.append(contentsOf: positions) }
        if let plugin { found.removeAll { state.instances[$0].instance.plugin != plugin } }
        return found.sorted()
    }

    /// WidgetCenter: `reloadTimelines(ofKind:)` from `app`.
    public mutating func reloadTimelines(ofKind kind: String, app: String, at time: Double) {
        handle(.reloadTimelines(ofKind: kind, app: app), at: time)
    }

    /// WidgetCenter: `reloadAllTimelines()` from `app`.
    public mutating func reloadAllTimelines(app: String, at time: Double) {
        handle(.reloadAllTimelines(app: app), at: time)
    }

    /// Free while the app is in the foreground or in a session, counted otherwise.
    public func appCharge(_ app: String) -> ReloadCharge {
        guard let s = state.apps[app] else { return .counted }
        if s.foreground { return .free(.appForeground) }
        if s.sessions.contains(.audio) { return .free(.audioSession) }
        if s.sessions.contains(.navigation) { return .free(.navigationSession) }
        return .counted
    }

    private mutating func request(_ p: Int, _ new: PendingRequest) {
        // One pending request per instance: a free one replaces a counted one;
        // otherwise the older one stays (one reload serves both).
        if let old = state.instances[p].request, !(old.charge.isCounted && !new.charge.isCounted) { return }
        state.instances[p].request = new
        replan(p)
    }

    /// Moves `state.now` forward to `time`: plans that depend on the hour
    /// are made again, entries whose date passed give way to the next.
    private mutating func observe(_ time: Double) {
        if let now = state.now, now >= time { return }
        state.now = time
        while rechecks.minimumKey <= time, let p = rechecks.minimumPosition { replan(p) }
        while entryChanges.minimumKey <= time, let p = entryChanges.minimumPosition { replanEntry(p) }
    }

    // MARK: Budget

    /// The viewing tier of an instance at `time`.
    public func tier(of id: String, at time: Double) -> ViewTier? {
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
    public func allowance(of id: String, at time: Double) -> Int? {
        tier(of: id, at: time).map { configuration.allowance(for: $0) }
    }

    // MARK: Planning

    /// When a timeline received at `time` makes the instance due.
    public func policyDue(for timeline: TimelineRecord, instanceID: String, receivedAt time: Double) -> Double? {
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
    public func plannedReload(of id: String, at time: Double) -> PlannedReload? {
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
        if case .free(let reason) = charge, reason != .instanceAdded {
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
    public func nextWakeup() -> Double? {
        let now = state.now ?? -Double.greatestFiniteMagnitude
        let result = min(coalescedWake(now: now) ?? .infinity, entryChanges.minimumKey)
        guard result.isFinite else { return nil }
        return max(result, state.now ?? result)
    }

    /// The time of the next reload batch: greedy batching (Android's alarm
    /// batching) takes reloads in order of their earliest time while that
    /// time is within every taken reload's coalescing deadline, and wakes at
    /// the last one taken. Nil when no reload is planned.
    ///
    /// Only the instances whose queued time is within the coalescing cap of
    /// the earliest plan are planned: a reload later than that cannot join
    /// the batch (every deadline is at most the cap after its time).
    private func coalescedWake(now: Double) -> Double? {
        guard reloads.minimumKey < .infinity else { return nil }
        let slack = max(0, configuration.coalescingCap)
        var bound = reloads.minimumKey + slack
        var plans: [(time: Double, latest: Double)] = []
        while true {
            plans.removeAll(keepingCapacity: true)
            // A queued time is never later than the plan, except for plans
            // made before `now` that are due by now: those are within `now`.
            // It is the plan's time unless the free-reload cap may have moved
            // the plan since: then the instance is planned again.
            var earliest = Double.infinity
            reloads.collect(upTo: max(bound, now)) { position, key in
                if underFreeCap[position] {
                    let s = state.instances[position]
                    if let p = plan(s, at: max(now, s.addedAt)) {
                        plans.append((p.time, p.latest))
                        earliest = min(earliest, p.time)
                    }
                } else {
                    plans.append((key, latest[position]))
                    earliest = min(earliest, key)
                }
            }
            if earliest + slack <= bound { break }
            // The earliest queued time was early (the free-reload cap moved
            // that plan later since): look again from the true earliest.
            bound = earliest < .infinity ? earliest + slack : .infinity
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
    public mutating func dueReloads(at now: Double) -> [ReloadBatch] {
        observe(now)
        // A wakeup for something else (an entry change) before the coalesced
        // batch time issues nothing: every reload due by now belongs to that
        // batch and can wait for it, so the batch stays one wakeup.
        if let wake = coalescedWake(now: now), now < wake { return [] }
        var batches: [ReloadBatch] = []
        var batchIndex: [String: Int] = [:]
        var due: [Int] = []
        reloads.collect(upTo: now, into: &due)
        // In the order of the instances, as the free-reload cap is consumed.
        due.sort()
        defer { for p in due { replan(p) } }
        for p in due {
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
            if reason != .instanceAdded { state.freeLedger.record(now, window: configuration.freeReloadWindow) }
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
    public mutating func complete(_ id: String, with outcome: ReloadOutcome, at time: Double) {
        observe(time)
        guard let p = index[id], let flight = state.instances[p].inFlight else { return }
        defer {
            replan(p)
            replanEntry(p)
        }
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
        case .failure, .timedOut:
            let reason: String =
                if case .failure(let text) = outcome { text } else { "timed out" }
            s.consecutiveFailures += 1
            let retry = time + configuration.backoff(afterFailures: s.consecutiveFailures)
            s.backoffUntil = retry
            s.lastFailure = FailureRecord(
                time: time, reason: reason, consecutiveFailures: s.consecutiveFailures, retryAt: retry)
            let d = flight.decision
            if d.trigger != .policy {
                let again = PendingRequest(trigger: d.trigger, charge: d.charge, requestedAt: flight.dueSince)
                if let old = s.request, !(old.charge.isCounted && !again.charge.isCounted) {
                } else {
                    s.request = again
                }
            } else if s.policyDue == nil {
                s.policyDue = flight.dueSince
            }
        }
        state.instances[p] = s
    }

    // MARK: Display

    /// The entry an instance shows at `time` (the last whose date has passed).
    public func displayedEntry(of id: String, at time: Double) -> EntryRecord? {
        index[id].flatMap { state.instances[$0].timeline?.entry(at: time) }
    }

    /// The next time after `time` at which the instance's displayed entry changes.
    public func nextEntryChange(of id: String, after time: Double) -> Double? {
        index[id].flatMap { state.instances[$0].timeline?.entries.first(where: { $0.date > time })?.date }
    }

    /// The relevance score in force for an instance at `time`: the displayed
    /// entry's score while its duration holds (duration 0: while it is
    /// displayed), else 0.
    public func relevanceScore(of id: String, at time: Double) -> Double {
        guard let p = index[id], let entry = state.instances[p].timeline?.entry(at: time),
            let relevance = entry.relevance, time >= entry.date
        else { return 0 }
        if relevance.duration > 0 && time >= entry.date + relevance.duration { return 0 }
        return max(0, relevance.score)
    }

    /// Which instance of a stack should be on top at `time`: the highest
    /// relevance score in force; ties go to the earlier id in `ids`.
    public func topOfStack(_ ids: [String], at time: Double) -> String? {
        var best: (id: String, score: Double)?
        for id in ids where index[id] != nil {
            let score = relevanceScore(of: id, at: time)
            if best == nil || score > best!.score { best = (id, score) }
        }
        return best?.id
    }

    // MARK: Explain

    /// Why an instance is or is not being reloaded, with exact times.
    public func explain(_ id: String, at time: Double) -> ReloadExplanation? {
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
    public mutating func run(
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
