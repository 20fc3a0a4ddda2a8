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
/// Cost: the time each instance is next due is kept in a timing wheel of
/// one-second buckets (``ReloadWheel``, with a 4-ary heap, ``DueQueue``, for
/// times past its 2 h 16 min), which keeps its earliest at hand, so
/// `nextWakeup()` reads the earliest and plans only the instances within the
/// coalescing slack of it, and `dueReloads(at:)` plans only the k instances
/// due, and issues a plain policy reload as it was planned when queued:
/// O(k log k) (the due instances put in instance order), and O(log N) more
/// for each time past the wheel. An event plans again only the
/// instances it concerns (per-app and per-app-and-kind indexes; one pass for
/// the host-wide ones). The rules themselves are in `plan` and `constrain`,
/// evaluated per instance exactly as a scan over every instance would.
///
/// A value, copied on write: the state is kept in one box, so a copy costs
/// one reference, a call reads the state where it is, and the first change
/// to a scheduler that shares its box copies the state (its arrays and
/// tables are then copied as each is first changed). A driver that keeps
/// one scheduler never copies it.
public struct ReloadScheduler: Sendable {
    /// The scheduler's state, shared by copies until one changes it.
    private var box: EngineBox

    /// The engine (its shards, ``ShardSet``), read in place through the
    /// box; changed in place once the box is this scheduler's alone (copied
    /// first if a copy shares it). Never a copy of the state: a copy of a
    /// value this size (its queues, tables and ledgers, about a kilobyte of
    /// references) retains and releases every reference in it, which a
    /// holder that reads it from a class property made at every call (the
    /// daemon did, 67 places).
    private var engine: ShardSet {
        unsafeAddress { UnsafePointer(box.engine) }
        unsafeMutableAddress {
            if !isKnownUniquelyReferenced(&box) { box = EngineBox(box.engine.pointee.clone()) }
            return box.engine
        }
    }

    /// The rules' numbers; changing them plans every instance again.
    public var configuration: SchedulerConfiguration {
        get { engine.configuration }
        set { engine.configuration = newValue }
    }

    /// Everything to persist, made on demand (every instance's state: O(N),
    /// for a full write or a test); restore with `init(configuration:state:)`.
    /// The daemon and `simulate` ask for what they read instead
    /// (``instanceState(at:)``, ``instance(at:)``, ``freeLedger``...).
    public var state: SchedulerState { engine.state }

    /// The apps' foreground and session states.
    public var apps: [String: AppState] { engine.apps }

    /// The host-wide ledger of capped free reloads.
    public var freeLedger: RollingLedger { engine.freeLedger }

    /// The latest time the scheduler was told about.
    public var latestTime: Double? { engine.latestTime }

    /// The ids of the instances whose state changed since the last
    /// ``takeTouched()``, recorded while ``tracksTouched`` is on: a driver
    /// that persists writes only these (every place that changes an instance
    /// records it). Off by default, so the benchmarks and
    /// `simulate` pay nothing for it.
    public var touched: Set<String> { engine.touched }

    /// Whether ``touched`` is recorded (the daemon turns it on).
    public var tracksTouched: Bool {
        get { engine.tracksTouched }
        set { engine.tracksTouched = newValue }
    }

    /// Whether the positions whose displayed entry may have changed are
    /// recorded, for ``takeDisplayChanges(into:)`` (`simulate --display`
    /// and `--html` turn it on).
    public var tracksDisplayChanges: Bool {
        get { engine.tracksDisplayChanges }
        set { engine.tracksDisplayChanges = newValue }
    }

    /// The fewest instances `dueReloads` and `complete(_:at:)` read ahead
    /// over: below it the passes cost more than the waits they save (a day
    /// of widgets, with a wakeup every 1.8 events, took 9 % more
    /// instructions reading ahead over every batch). The tests lower it, so
    /// that their small scenarios take the reading-ahead path.
    var readAheadMinimum: Int {
        get { engine.readAheadMinimum }
        set { engine.readAheadMinimum = newValue }
    }

    /// How many `dueReloads` calls took their due instances from the walk
    /// of the `nextWakeup()` just before them (for the tests).
    var walksReused: Int { engine.walksReused }

    /// The fewest instances over which `dueReloads` reads the coming
    /// reloads ahead (``SchedulerCore/readAheadComing()``): about where the records
    /// outgrow a 32 MB last-level cache (with the ledgers, timelines and
    /// queues, about 800 bytes an instance). Below it the records are in
    /// the cache and the reading costs more than it saves (a day of 10,000
    /// widgets took 5 % more instructions). The tests lower it.
    var comingReadAheadMinimum: Int {
        get { engine.comingReadAheadMinimum }
        set { engine.comingReadAheadMinimum = newValue }
    }

    /// A scheduler with `configuration`, taking `state` as its own (a
    /// state persisted from ``state``, or a new one).
    ///
    /// `shards`: how many engines the instances are dealt out among
    /// (``ShardSet``; 1 to 8), each a whole engine of its own, with what is
    /// host-wide kept by the set so that every answer is one engine's.
    public init(
        configuration: SchedulerConfiguration = SchedulerConfiguration(), state: SchedulerState = SchedulerState(),
        shards: Int = 1
    ) {
        box = EngineBox(ShardSet(configuration: configuration, state: state, shards: shards))
    }

    /// A scheduler whose shards take runs of `run` positions in turn (the
    /// tests deal out every instance in turn, `run` 1, so that a few
    /// instances reach every shard).
    init(configuration: SchedulerConfiguration, shards: Int, run: Int) {
        box = EngineBox(ShardSet(configuration: configuration, state: SchedulerState(), shards: shards, run: run))
    }

    /// How many shards the instances are dealt out among.
    public var shardCount: Int { engine.count }

    /// Below this many due reloads or results, a sharded scheduler's
    /// wakeup runs its shards' parts on the caller's thread (the tests set
    /// 1, so that every part runs on the shards' threads).
    var parallelMinimum: Int {
        get { engine.parallelMinimum }
        set { engine.parallelMinimum = newValue }
    }

    /// Appends to `positions`, in order and once each, the positions of
    /// the instances whose displayed entry (``displayedEntry(of:at:)``)
    /// may have changed since the last call, by the `causes` asked for: a
    /// new timeline, or an entry's date passed. Every instance whose
    /// displayed entry changed is among them, so a driver that shows
    /// entries compares only these, not every instance at every wakeup
    /// (``tracksDisplayChanges`` must be on). Every change recorded is
    /// forgotten, whatever the causes asked for.
    ///
    /// ```swift
    /// scheduler.tracksDisplayChanges = true
    /// _ = scheduler.dueReloads(at: now)
    /// scheduler.takeDisplayChanges(into: &changed)
    /// for p in changed { show(scheduler.instance(at: p).id) }
    /// ```
    ///
    /// The daemon's event stream asks for `.entryDate` only: a new
    /// timeline has its own `timeline` event.
    public mutating func takeDisplayChanges(
        into positions: inout [Int], causes: DisplayChangeCauses = [.newTimeline, .entryDate]
    ) {
        engine.takeDisplayChanges(into: &positions, causes: causes)
    }

    /// The instances touched since the last call (``touched``), forgotten.
    public mutating func takeTouched() -> Set<String> {
        engine.takeTouched()
    }

    /// Starts recording what the changes from now on overwrite, so that
    /// ``rollBackJournal()`` can put it back: each instance's state before
    /// its first change, the free ledger and the apps. A driver that commits
    /// each change to a store before acting on it undoes what it could not
    /// store this way, at the cost of what it changed (a copy of the whole
    /// scheduler, as before, cost every instance's state on the next change).
    ///
    /// ```swift
    /// scheduler.beginJournal()
    /// let batches = scheduler.dueReloads(at: now)
    /// if store.commit(batches) { scheduler.endJournal() } else { scheduler.rollBackJournal() }
    /// ```
    public mutating func beginJournal() {
        engine.beginJournal()
    }

    /// Whether a journal is being recorded (``beginJournal()``).
    public var isJournaling: Bool { engine.isJournaling }

    /// Keeps the changes made since ``beginJournal()`` and stops recording.
    public mutating func endJournal() {
        engine.endJournal()
    }

    /// Undoes every change since ``beginJournal()`` (`latestTime` stays: time
    /// does not go back) and stops recording; ``touched`` is left as it is.
    public mutating func rollBackJournal() {
        engine.rollBackJournal()
    }

    /// An instance's state as it was at ``beginJournal()`` (its state now
    /// when no journal is recorded); nil if it did not exist then.
    public func instanceStateBeforeJournal(_ id: String) -> InstanceState? {
        engine.instanceStateBeforeJournal(id)
    }

    /// Replaces the whole state (say, an instance reconfigured in place),
    /// keeping the configuration, ``tracksTouched``, ``touched`` and the
    /// journal (which then keeps the whole scheduler as it was).
    public mutating func replaceState(_ newState: SchedulerState) {
        engine.replaceState(newState)
    }

    /// Adds an instance; it gets its first timeline at once, free. Returns
    /// false (and changes nothing) if the id exists.
    @discardableResult
    public mutating func add(_ instance: WidgetInstance, at time: Double) -> Bool {
        engine.add(instance, at: time)
    }

    /// Removes an instance and everything known about it.
    @discardableResult
    public mutating func remove(_ id: String) -> Bool {
        engine.remove(id)
    }

    /// The state of one instance.
    public func instanceState(_ id: String) -> InstanceState? {
        engine.instanceState(id)
    }

    /// How many instances there are; positions run from 0 to `instanceCount - 1`.
    public var instanceCount: Int { engine.instanceCount }

    /// The position of instance `id` (its place in the order instances
    /// were added), nil if there is none. Positions move when an instance
    /// is removed.
    public func instancePosition(of id: String) -> Int? {
        engine.instancePosition(of: id)
    }

    /// The instance at `position` (its id, plugin, kind, app, family,
    /// configuration and visibility), without the rest of its state.
    /// `position` must be in `0 ..< instanceCount` (a trap otherwise).
    public func instance(at position: Int) -> WidgetInstance {
        checkPosition(position)
        return engine.instance(at: position)
    }

    /// Calls `body` with each instance and its position, in order of
    /// position, in one pass.
    ///
    /// To read every instance, use it (or ``instanceCounts()``,
    /// ``relevanceScores(at:)``) rather than ``instance(at:)`` per
    /// position: one pass over the records, one call.
    ///
    /// ```swift
    /// var kinds: Set<String> = []
    /// scheduler.forEachInstance { _, instance in kinds.insert(instance.kind) }
    /// ```
    public func forEachInstance(_ body: (_ position: Int, _ instance: WidgetInstance) throws -> Void) rethrows {
        try engine.forEachInstance(body)
    }

    /// How many instances there are, shown, reloading and failing: one
    /// pass over the hot records, nothing copied.
    public func instanceCounts() -> InstanceCounts {
        engine.instanceCounts()
    }

    /// Every instance's relevance score in force at `time`
    /// (``relevanceScore(of:at:)``), by position.
    public func relevanceScores(at time: Double) -> [Double] {
        engine.relevanceScores(at: time)
    }

    /// The whole state of the instance at `position`.
    /// `position` must be in `0 ..< instanceCount` (a trap otherwise).
    public func instanceState(at position: Int) -> InstanceState {
        checkPosition(position)
        return engine.instanceState(at: position)
    }

    /// Whether the instance at `position` is shown.
    /// `position` must be in `0 ..< instanceCount` (a trap otherwise).
    public func isVisible(at position: Int) -> Bool {
        checkPosition(position)
        return engine.isVisible(at: position)
    }

    /// Whether a reload of the instance at `position` is in flight.
    /// `position` must be in `0 ..< instanceCount` (a trap otherwise).
    public func isInFlight(at position: Int) -> Bool {
        checkPosition(position)
        return engine.isInFlight(at: position)
    }

    /// How many reloads in flight are kept in the table of reloads in
    /// flight rather than in their instances' lines (``LineFlight``): 0 on
    /// the steady path. For the tests.
    var flightsInTable: Int { engine.flightsInTable }

    /// Failed reloads in a row of the instance at `position`.
    /// `position` must be in `0 ..< instanceCount` (a trap otherwise).
    public func consecutiveFailures(at position: Int) -> Int {
        checkPosition(position)
        return engine.consecutiveFailures(at: position)
    }

    /// Traps for a position outside `0 ..< instanceCount`: inside, the
    /// records are read through pointers, unchecked in a release build.
    @inline(__always)
    private func checkPosition(_ position: Int) {
        precondition(position >= 0 && position < engine.instanceCount, "instance position out of range")
    }

    /// Replaces instance `id` by `widget` (same id; another configuration,
    /// family, kind, app or plugin), keeping its ledger, timeline and
    /// history, and asks for a free reload (`.added`) at `time`, as
    /// WidgetKit does for an edited widget. The visibility stays the
    /// instance's own. True if the instance changed; false if it is the
    /// same, or there is no instance `id`, or `widget` has another id.
    ///
    /// A new configuration or family changes the instance in place; a new
    /// app, kind, plugin or use of location moves it between the per-app,
    /// per-kind and location lists, which are made again (as
    /// ``replaceState(_:)`` does).
    @discardableResult
    public mutating func reconfigure(_ id: String, as widget: WidgetInstance, at time: Double) -> Bool {
        engine.reconfigure(id, as: widget, at: time)
    }

    /// Whether every instance's hot flags say what its cold record holds (for the tests).
    var recordsAreInStep: Bool { engine.recordsAreInStep }

    /// The instances' ids, in the order they were added.
    public var instanceIDs: [String] { engine.instanceIDs }

    /// WidgetCenter's `getCurrentConfigurations()`: the placed instances, of
    /// one app or of all.
    public func getCurrentConfigurations(app: String? = nil) -> [WidgetInfo] {
        engine.getCurrentConfigurations(app: app)
    }

    /// Records something that happened at `time`. Reloads it causes come out
    /// of the next `dueReloads(at:)`.
    public mutating func handle(_ event: SchedulerEvent, at time: Double) {
        engine.handle(event, at: time)
    }

    /// A push update for the instances of `kind` (of `plugin` only, when
    /// given): each gets a reload with trigger `push`, free for its timeline
    /// budget and counted against its push budget
    /// (``SchedulerConfiguration/pushAllowance`` per 24 h). The reloads come
    /// out of the next `dueReloads(at:)` calls; over budget they are deferred
    /// (cause `.pushBudget`), never dropped. Returns, per instance of the kind
    /// in the order they were added, when its next reload is planned now.
    ///
    /// ```swift
    /// for d in scheduler.push(kind: "score", at: now) {
    ///     print(d.instanceID, d.reload?.time ?? .nan, d.reload?.deferral?.cause as Any)
    /// }
    /// ```
    @discardableResult
    public mutating func push(kind: String, plugin: String? = nil, at time: Double) -> [PushDecision] {
        engine.push(kind: kind, plugin: plugin, at: time)
    }

    /// WidgetCenter: `reloadTimelines(ofKind:)` from `app`.
    public mutating func reloadTimelines(ofKind kind: String, app: String, at time: Double) {
        engine.handle(.reloadTimelines(ofKind: kind, app: app), at: time)
    }

    /// WidgetCenter: `reloadAllTimelines()` from `app`.
    public mutating func reloadAllTimelines(app: String, at time: Double) {
        engine.handle(.reloadAllTimelines(app: app), at: time)
    }

    /// Free while the app is in the foreground or in a session, counted otherwise.
    public func appCharge(_ app: String) -> ReloadCharge {
        engine.appCharge(app)
    }

    /// The viewing tier of an instance at `time`.
    public func tier(of id: String, at time: Double) -> ViewTier? {
        engine.tier(of: id, at: time)
    }

    /// Counted reloads allowed in the 24 h window for this instance at `time`.
    public func allowance(of id: String, at time: Double) -> Int? {
        engine.allowance(of: id, at: time)
    }

    /// When a timeline received at `time` makes the instance due.
    public func policyDue(for timeline: TimelineRecord, instanceID: String, receivedAt time: Double) -> Double? {
        engine.policyDue(for: timeline, instanceID: instanceID, receivedAt: time)
    }

    /// The next reload of an instance, with every rule applied, as of `time`;
    /// nil if nothing is due (or it is in flight, or waits to be shown).
    public func plannedReload(of id: String, at time: Double) -> PlannedReload? {
        engine.plannedReload(of: id, at: time)
    }

    /// The time an instance is queued at and its coalescing deadline, as
    /// the index holds them (the plan they were made from may be older than
    /// `now`): what a test reports when the index and the plain scan differ.
    func queuedReload(of id: String) -> (time: Double, latest: Double)? {
        engine.queuedReload(of: id)
    }

    /// When the driver should next call `dueReloads(at:)`: the coalesced time
    /// of the next reload batch, or the next entry change, whichever is first.
    /// Never earlier than the latest time the scheduler was told about. Nil
    /// when nothing is scheduled.
    ///
    /// It keeps what its walk of the queue found for the `dueReloads` that
    /// follows, in the state it reads in place: copies that share their
    /// state (none changed since the copy) must not ask it on two threads
    /// at once. A driver keeps one scheduler and asks it from one thread.
    public func nextWakeup() -> Double? {
        // Through the pointer: a read, though the core's call is `mutating`.
        box.engine.pointee.nextWakeup()
    }

    /// The reloads due at `now`, batched by plugin and kind. Each is marked in
    /// flight (and counted, if counted) until `complete(_:with:at:)`.
    ///
    /// The decisions of ``dueReloads(at:limit:into:)``'s tickets, with
    /// their names and details: for a driver that logs or reports every
    /// reload. The arrays returned are reused by the next call when the
    /// caller has let go of them by then, so that steady-state calls
    /// allocate nothing.
    ///
    /// At most `limit` are issued (in the order of the instances); the
    /// others stay due, and `nextWakeup()` is `now` until they are issued. A
    /// driver that answers requests between calls uses it to bound its turns.
    public mutating func dueReloads(at now: Double, limit: Int = .max) -> [ReloadBatch] {
        engine.dueReloads(at: now, limit: limit)
    }

    /// The reloads due at `now`, as tickets in `tickets`, in place of what
    /// it held:
    /// grouped by batch (one per plugin and kind, in the order of their
    /// plugin and kind), each batch in the order of the instances. Each is
    /// marked in flight (and counted, if counted) until it is completed
    /// (``complete(_:with:at:)-(ReloadTicket,_,_)``).
    ///
    /// What ``dueReloads(at:limit:)`` decides, handed out as plain numbers:
    /// no string is copied and nothing is retained per reload, and a caller
    /// that keeps `tickets` between calls allocates nothing. At most `limit`
    /// are issued (in the order of the instances); the others stay due.
    ///
    /// ```swift
    /// var tickets: [ReloadTicket] = []
    /// var results: [TicketCompletion] = []
    /// while let wake = scheduler.nextWakeup(), wake <= end {
    ///     scheduler.dueReloads(at: wake, into: &tickets)
    ///     results.removeAll(keepingCapacity: true)
    ///     for ticket in tickets {
    ///         results.append(TicketCompletion(ticket: ticket, outcome: call(scheduler.instance(of: ticket)!)))
    ///     }
    ///     scheduler.complete(results, at: wake)
    /// }
    /// ```
    public mutating func dueReloads(at now: Double, limit: Int = .max, into tickets: inout [ReloadTicket]) {
        engine.dueReloads(at: now, limit: limit, into: &tickets)
    }

    /// Records how a reload ended. A success replaces the timeline; a failure
    /// keeps the last good one and retries with exponential backoff.
    public mutating func complete(_ id: String, with outcome: ReloadOutcome, at time: Double) {
        engine.complete(id, with: outcome, at: time)
    }

    /// Records how several reloads ended, at `time`: the same as
    /// ``complete(_:with:at:)`` for each in turn, faster for many (a batch's
    /// results). The instances' records are read ahead, a chunk at a time,
    /// before they are completed: at 100,000 instances they are not in the
    /// cache, and the misses of one completion after another were most of
    /// its time.
    ///
    /// ```swift
    /// let batch = scheduler.dueReloads(at: now)[0]
    /// let results = batch.decisions.map {
    ///     ReloadCompletion(instanceID: $0.instanceID, outcome: .success(timeline))
    /// }
    /// scheduler.complete(results, at: now)
    /// ```
    public mutating func complete(_ completions: [ReloadCompletion], at time: Double) {
        engine.complete(completions, at: time)
    }

    /// Records how the reload of `ticket` ended: ``complete(_:with:at:)``
    /// for its instance, without looking up an id. A ticket given back
    /// twice, or whose reload was completed another way, is ignored.
    public mutating func complete(_ ticket: ReloadTicket, with outcome: ReloadOutcome, at time: Double) {
        engine.complete(ticket, with: outcome, at: time)
    }

    /// Records how several reloads ended, at `time`, by ticket: the same as
    /// ``complete(_:with:at:)-(ReloadTicket,_,_)`` for each in turn, with
    /// the instances' records read ahead a chunk at a time (see
    /// ``complete(_:at:)-([ReloadCompletion],_)``).
    public mutating func complete(_ results: [TicketCompletion], at time: Double) {
        engine.complete(results, at: time)
    }

    /// ``complete(_:at:)-([TicketCompletion],_)`` taking the results out of
    /// `results`, which is left empty with its capacity, to be filled again:
    /// each success's timeline moves into its instance, where the other
    /// form copies it (and the caller releases its own copy when it empties
    /// the array). For a driver that completes batch after batch.
    ///
    /// ```swift
    /// var results: [TicketCompletion] = []
    /// for ticket in tickets {
    ///     results.append(TicketCompletion(ticket: ticket, outcome: .success(call(ticket))))
    /// }
    /// scheduler.complete(taking: &results, at: now)   // results.isEmpty
    /// ```
    public mutating func complete(taking results: inout [TicketCompletion], at time: Double) {
        engine.complete(taking: &results, at: time)
    }

    /// The instance whose reload `ticket` names, as it is now; nil when that
    /// reload is no longer in flight.
    public func instance(of ticket: ReloadTicket) -> WidgetInstance? {
        engine.instance(of: ticket)
    }

    /// The decision of the reload `ticket` names, as ``dueReloads(at:limit:)``
    /// would have handed it out; nil when that reload is no longer in flight.
    public func decision(for ticket: ReloadTicket) -> ReloadDecision? {
        engine.decision(for: ticket)
    }

    /// The plugin and kind of the batch `ticket` belongs to
    /// (``ReloadTicket/group``); nil for a group this scheduler does not
    /// know (a ticket from before the state was replaced).
    public func pluginAndKind(of ticket: ReloadTicket) -> (plugin: String, kind: String)? {
        engine.pluginAndKind(of: ticket)
    }

    /// Ends the hold of a reload that was not called
    /// (``ReloadOutcome/notCalled(reason:retryAt:)``), now that its cause is
    /// gone (the plugin loaded again): the instance waits only for what its
    /// own failures ask (the last failure's retry time while it has failed
    /// in a row), so a due reload is issued at the next wakeup. Does nothing
    /// for an instance that is not held.
    ///
    /// ```swift
    /// // The plugin loaded after a fix: its held instances reload now.
    /// for id in idsOfThePlugin { scheduler.endHold(of: id, at: now) }
    /// ```
    public mutating func endHold(of id: String, at time: Double) {
        engine.endHold(of: id, at: time)
    }

    /// The entry an instance shows at `time` (the last whose date has passed).
    public func displayedEntry(of id: String, at time: Double) -> EntryRecord? {
        engine.displayedEntry(of: id, at: time)
    }

    /// The next time after `time` at which the instance's displayed entry changes.
    public func nextEntryChange(of id: String, after time: Double) -> Double? {
        engine.nextEntryChange(of: id, after: time)
    }

    /// The relevance score in force for an instance at `time`: the displayed
    /// entry's score while its duration holds (duration 0: while it is
    /// displayed), else 0.
    public func relevanceScore(of id: String, at time: Double) -> Double {
        engine.relevanceScore(of: id, at: time)
    }

    /// Which instance of a stack should be on top at `time`: the highest
    /// relevance score in force; ties go to the earlier id in `ids`.
    public func topOfStack(_ ids: [String], at time: Double) -> String? {
        engine.topOfStack(ids, at: time)
    }

    /// Why an instance is or is not being reloaded, with exact times.
    public func explain(_ id: String, at time: Double) -> ReloadExplanation? {
        engine.explain(id, at: time)
    }

    /// Drives the scheduler in virtual time up to `end`: jumps the clock to
    /// each wakeup, issues the due reloads, and completes each at once with
    /// `provider`'s outcome. Returns the decisions in order.
    @discardableResult
    public mutating func run(until end: Double, clock: VirtualClock, provider: (ReloadDecision) -> ReloadOutcome)
        -> [ReloadDecision]
    {
        engine.run(until: end, clock: clock, provider: provider)
    }
}

/// The box a ``ReloadScheduler`` keeps its engine (``ShardSet``) in: one
/// allocation, read and changed in place through its pointer.
///
/// `@unchecked Sendable`: a box shared by two schedulers is never changed
/// (each copies it before its first change: copy on write), so sharing one
/// across tasks shares immutable state.
final class EngineBox: @unchecked Sendable {
    /// The engine, owned by the box: initialized at `init`, destroyed at `deinit`.
    let engine: UnsafeMutablePointer<ShardSet>

    init(_ engine: consuming ShardSet) {
        self.engine = .allocate(capacity: 1)
        self.engine.initialize(to: engine)
    }

    deinit {
        engine.deinitialize(count: 1)
        engine.deallocate()
    }
}

/// The box a ``SchedulerCore`` is kept in where it is shared: a journal's
/// whole copy (``SchedulerCore/journalWhole()``).
///
/// `@unchecked Sendable`: a box shared by two owners is never changed.
final class SchedulerBox: @unchecked Sendable {
    /// The core, owned by the box: initialized at `init`, destroyed at `deinit`.
    let core: UnsafeMutablePointer<SchedulerCore>

    init(_ core: consuming SchedulerCore) {
        self.core = .allocate(capacity: 1)
        self.core.initialize(to: core)
    }

    deinit {
        core.deinitialize(count: 1)
        core.deallocate()
    }
}
