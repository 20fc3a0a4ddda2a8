import WidgetHostModel

/// The state and the rules behind ``ReloadScheduler``, which holds one in a
/// box (``SchedulerBox``) and forwards to it: the members it forwards are
/// documented there.
///
/// Not copyable: a copy is made only where one is meant (``clone()``), never
/// to lend the state to a call. (A copyable value this size, read through
/// a class property or a pointer, was copied to call each non-mutating
/// method on it, every reference in it retained and released: the daemon
/// did so in 67 places, some once per instance.)
struct SchedulerCore: ~Copyable, Sendable {
    var configuration: SchedulerConfiguration {
        willSet { journalWhole() }
        didSet {
            steady = SteadyRules(configuration)
            rebuildIndex()
        }
    }
    /// The numbers of the configuration that the steady state's rules read.
    private var steady: SteadyRules
    var state: SchedulerState {
        var state = SchedulerState()
        state.instances = instances.states
        state.apps = apps
        state.freeLedger = freeLedger
        state.now = latestTime
        return state
    }
    /// The instances by position: their lines (hot and cold records and position numbers, ``InstanceLine``) and names.
    private var instances = InstanceRecords()
    private(set) var apps: [String: AppState] = [:]
    private(set) var freeLedger = RollingLedger()
    private(set) var latestTime: Double?
    private(set) var touched: Set<String> = []
    var tracksTouched = false
    var tracksDisplayChanges = false {
        didSet {
            if !tracksDisplayChanges {
                displayChanges = []
                entryDateChanges = []
            }
        }
    }
    /// Positions whose displayed entry may have changed since the last
    /// ``takeDisplayChanges(into:causes:)`` by a new timeline (or the
    /// instance entered), repeats included.
    private var displayChanges: [Int32] = []
    /// Positions whose displayed entry changed since the last
    /// ``takeDisplayChanges(into:causes:)`` because an entry's date passed,
    /// repeats included.
    private var entryDateChanges: [Int32] = []
    var readAheadMinimum = 8
    var comingReadAheadMinimum = 32_768
    /// How many `dueReloads` calls took their due instances from the walk
    /// of the `nextWakeup()` before them (for the tests).
    var walksReused: Int { scratch.walksReused }
    /// Instance positions by id.
    private var index = PositionIndex()
    /// Per instance position: the time its next reload is due, as planned at
    /// `latestTime` (never later than the truth: the free-reload cap can only
    /// move a plan later after it was made).
    private var reloads = ReloadWheel()
    /// Instances whose plan depends on the hour `now` is in (a counted reload
    /// overdue and waiting for budget: the allowance follows the viewing tier
    /// at `now`), keyed by when that hour (or the learning period) ends.
    private var rechecks = DueQueue()
    /// Per instance position: its next entry date after `latestTime`, with
    /// its timeline's entries and where that entry is in them
    /// (``EntryCursor``), so that an entry change reads neither the
    /// instance's line nor its names.
    private var entryChanges = EntryWheel<EntryCursor>()
    /// Instance positions by app, for app events and `reloadAllTimelines`.
    private var byApp: [String: [Int32]] = [:]
    /// Instance positions by app and kind, for `reloadTimelines(ofKind:)`.
    private var byAppAndKind: [AppKind: [Int32]] = [:]
    /// Positions of the instances that use location.
    private var locationUsers: [Int32] = []
    /// The group number of each plugin and kind ever added.
    private var groups: [PluginKind: Int32] = [:]
    /// The plugin and kind of each group, by number.
    private var groupNames: [PluginKind] = []
    /// Each group's place in the order of plugin and kind, by number: the
    /// order of the batches.
    private var groupRanks: [Int32] = []
    /// The serial number of the last reload issued (``ReloadTicket/serial``).
    private var issuedSerial: UInt64 = 0
    /// ``issuedSerial`` when positions last moved (an instance removed, the
    /// state replaced or rolled back): a ticket issued after it names its
    /// instance's position as it is.
    private var serialAtLastMove: UInt64 = 0
    /// The number of each app ever seen.
    private var appNumbers: [String: Int32] = [:]
    /// Per app number: `appCharge(app)`, kept current by the app events, so
    /// that planning an instance hashes no string.
    private var appCharges: [ReloadCharge] = []
    /// Buffers kept between calls, so that a steady-state event allocates nothing.
    private var scratch = Scratch()
    /// What ``rollBackJournal()`` puts back, while ``beginJournal()`` is in force.
    private var journal: Journal?

    /// The state before the changes made since ``beginJournal()``: each
    /// instance as it was before its first change, the host-wide state as it
    /// was then.
    private struct Journal: Sendable {
        var instances: [Int: InstanceState] = [:]
        var freeLedger: RollingLedger
        var apps: [String: AppState]
        /// The whole scheduler as it was, once positions moved (an instance
        /// added or removed) or the configuration changed: the undo is then
        /// this copy.
        var whole: SchedulerBox?
    }

    private struct AppKind: Hashable, Sendable {
        var app: String
        var kind: String
    }

    private struct PluginKind: Hashable, Sendable {
        var plugin: String
        var kind: String
    }

    /// Buffers `dueReloads` reuses: taken out of the scheduler while in use
    /// (so they are uniquely referenced and keep their capacity), put back after.
    private struct Scratch: Sendable {
        var due: [Int] = []
        /// The tickets of one call, in the order of the instances, before
        /// they are grouped by batch; and the grouped ones `dueReloads(at:limit:)`
        /// makes its batches from.
        var issued: [ReloadTicket] = []
        var tickets: [ReloadTicket] = []
        /// Per group rank: how many tickets of a call, then where they go.
        var rankCounts: [Int] = []
        /// The batches last returned: when the caller has let go of them, their
        /// arrays are reused for the next ones.
        var batches: [ReloadBatch] = []
        var spareDecisions: [[ReloadDecision]] = []
        /// The most positions one `dueReloads` call collected, in this window
        /// of calls and the one before: buffers far larger than that (kept
        /// from a burst, such as every instance's first timeline at start)
        /// are let go instead of reused, so a burst's high-water mark (about
        /// 200 bytes per instance) is not kept for the process's life.
        var peak = 0
        var previousPeak = 0
        /// The most reloads one batch held, in this window and the one
        /// before: a batch's array is kept for reuse only up to 4 times
        /// that. Kept by the call's total instead, the arrays of the start's
        /// burst (a sixth of every instance each, at 100,000 instances) were
        /// kept for the process's life: 361 B per instance.
        var peakBatch = 0
        var previousPeakBatch = 0
        var calls = 0
        /// One bit per position, all zero between calls: how `dueReloads`
        /// sorts its due instances when there are many.
        var dueBitmap: [UInt64] = []
        /// The ids' hashes and positions of a ``complete(_:at:)``.
        var hashes: [UInt64] = []
        var found: [Int] = []
        /// The reload queue's keys in `comingFrom ..< comingThrough` were
        /// the last read ahead as the coming reloads (``readAheadComing()``),
        /// and the positions read.
        var comingFrom = -Double.infinity
        var comingThrough = -Double.infinity
        var coming: [Int] = []
        /// The queued keys ``coalescedWake(now:)`` last walked (those up to
        /// its first plan's deadline), when every plan behind them was its
        /// queued time (none under the free-reload cap): with the reload
        /// queue still as it was then (`walkedChanges`), a `dueReloads` at
        /// the batch time it found (`walkedWake`; NaN: none) takes its due
        /// instances from them, and knows the batch is due, without
        /// walking the queue again. Its first `walkedCount` entries; the
        /// rest is room, written in place by the walk (an append per key
        /// cost the walk twice its instructions).
        var walked: [KeyedPosition] = []
        var walkedCount = 0
        var walkedWake = Double.nan
        var walkedChanges: UInt64 = 0
        /// How many `dueReloads` calls took their due instances from a walk
        /// of `nextWakeup()` (for the tests).
        var walksReused = 0

        /// Calls per window of the peak.
        static let window = 256

        /// Whether a buffer of `capacity` elements is worth keeping.
        func keeps(capacity: Int) -> Bool {
            capacity <= 4 * max(64, peak, previousPeak)
        }

        /// The largest batch array worth keeping, in reloads.
        var batchLimit: Int { 4 * max(64, peakBatch, previousPeakBatch) }

        /// Whether a batch's array of `capacity` reloads is worth keeping.
        func keepsBatch(capacity: Int) -> Bool { capacity <= batchLimit }

        /// Records one call that collected `count` positions.
        mutating func note(_ count: Int) {
            peak = max(peak, count)
            calls += 1
            if calls >= Self.window {
                previousPeak = peak
                peak = 0
                previousPeakBatch = peakBatch
                peakBatch = 0
                calls = 0
            }
        }
    }

    init(
        configuration: SchedulerConfiguration = SchedulerConfiguration(), state: SchedulerState = SchedulerState()
    ) {
        self.configuration = configuration
        steady = SteadyRules(configuration)
        adopt(state)
        rebuildIndex()
    }

    /// A copy of this core: every field copied (the arrays and tables shared
    /// until either changes them). A field added to the core is copied here.
    func clone() -> SchedulerCore { SchedulerCore(cloning: self) }

    private init(cloning other: borrowing SchedulerCore) {
        configuration = other.configuration
        steady = other.steady
        instances = other.instances.clone()
        apps = other.apps
        freeLedger = other.freeLedger
        latestTime = other.latestTime
        touched = other.touched
        tracksTouched = other.tracksTouched
        tracksDisplayChanges = other.tracksDisplayChanges
        displayChanges = other.displayChanges
        entryDateChanges = other.entryDateChanges
        readAheadMinimum = other.readAheadMinimum
        comingReadAheadMinimum = other.comingReadAheadMinimum
        index = other.index
        reloads = other.reloads.clone()
        rechecks = other.rechecks
        entryChanges = other.entryChanges.clone()
        byApp = other.byApp
        byAppAndKind = other.byAppAndKind
        locationUsers = other.locationUsers
        groups = other.groups
        groupNames = other.groupNames
        groupRanks = other.groupRanks
        issuedSerial = other.issuedSerial
        serialAtLastMove = other.serialAtLastMove
        appNumbers = other.appNumbers
        appCharges = other.appCharges
        scratch = other.scratch
        journal = other.journal
    }

    /// Takes `state` as this scheduler's (the index is rebuilt after).
    private mutating func adopt(_ state: SchedulerState) {
        instances = InstanceRecords(state.instances)
        apps = state.apps
        freeLedger = state.freeLedger
        latestTime = state.now
    }

    // MARK: Index

    private mutating func rebuildIndex() {
        index = instances.names.withUnsafeBufferPointer { PositionIndex($0) }
        reloads = ReloadWheel()
        scratch.walkedWake = .nan  // (its count of changes starts again)
        rechecks = DueQueue()
        entryChanges = EntryWheel()
        // Positions may name other instances now: each is entered again below.
        displayChanges.removeAll(keepingCapacity: true)
        entryDateChanges.removeAll(keepingCapacity: true)
        byApp = [:]
        byAppAndKind = [:]
        locationUsers = []
        // The groups' numbers are kept (a ticket's group keeps naming its
        // plugin and kind); a group no instance is in any more costs nothing.
        serialAtLastMove = issuedSerial
        appNumbers = [:]
        appCharges = []
        for app in apps.keys.sorted() { _ = number(ofApp: app) }
        for position in instances.indices {
            enter(position)
        }
        touched = []
    }

    /// The position of the instance `id`, nil if there is none.
    @inline(__always)
    private func position(of id: String) -> Int? {
        instances.names.withUnsafeBufferPointer { index.find(id, in: $0) }
    }

    /// Records that the instance at `p` changed (``touched``).
    @inline(__always)
    private mutating func touch(_ p: Int) {
        if tracksTouched { touched.insert(instances[names: p].id) }
    }

    mutating func takeDisplayChanges(
        into positions: inout [Int], causes: DisplayChangeCauses = [.newTimeline, .entryDate]
    ) {
        let start = positions.count
        if causes.contains(.newTimeline) { positions.append(contentsOf: displayChanges.lazy.map(Int.init)) }
        if causes.contains(.entryDate) { positions.append(contentsOf: entryDateChanges.lazy.map(Int.init)) }
        displayChanges.removeAll(keepingCapacity: true)
        entryDateChanges.removeAll(keepingCapacity: true)
        guard positions.count > start else { return }
        positions[start...].sort()
        // Repeats, and positions past the last instance, dropped in place.
        var kept = start
        for i in start..<positions.count {
            let p = positions[i]
            guard p < instances.count, kept == start || positions[kept - 1] != p else { continue }
            positions[kept] = p
            kept += 1
        }
        positions.removeSubrange(kept...)
    }

    mutating func takeTouched() -> Set<String> {
        defer { touched = [] }
        return touched
    }

    // MARK: Undo

    mutating func beginJournal() {
        journal = Journal(freeLedger: freeLedger, apps: apps)
    }

    var isJournaling: Bool { journal != nil }

    mutating func endJournal() {
        journal = nil
    }

    mutating func rollBackJournal() {
        guard let journal else { return }
        self.journal = nil
        undo(journal)
    }

    func instanceStateBeforeJournal(_ id: String) -> InstanceState? {
        guard let journal else { return instanceState(id) }
        if let whole = journal.whole { return whole.core.pointee.instanceState(id) }
        guard let p = position(of: id) else { return nil }
        return journal.instances[p] ?? instances[p]
    }

    mutating func replaceState(_ newState: SchedulerState) {
        journalWhole()
        let touched = self.touched
        adopt(newState)
        rebuildIndex()
        self.touched = touched
    }

    /// Records the state of the instance at `p` before its first change in the journal.
    @inline(__always)
    private mutating func willChange(_ p: Int) {
        if journal != nil { journalInstance(p) }
    }

    /// ``willChange(_:)`` with a journal open, out of line: a copy of the
    /// instance's state inlined at every change weighed on the steady path.
    @inline(never)
    private mutating func journalInstance(_ p: Int) {
        if journal!.whole == nil, journal!.instances[p] == nil {
            journal!.instances[p] = instances[p]
        }
    }

    /// Before positions move or the configuration changes: the journal keeps
    /// the whole scheduler as it was at ``beginJournal()`` instead.
    private mutating func journalWhole() {
        guard var journal, journal.whole == nil else { return }
        self.journal = nil
        let before = SchedulerBox(clone())
        before.core.pointee.undo(journal)
        journal.whole = before
        journal.instances = [:]
        self.journal = journal
    }

    private mutating func undo(_ journal: Journal) {
        if let whole = journal.whole {
            let touched = self.touched
            let serial = issuedSerial
            self = whole.core.pointee.clone()
            self.touched = touched
            // Serials are never used twice, and the tickets issued since are void.
            issuedSerial = serial
            serialAtLastMove = serial
            return
        }
        var replanned: [Int] = []
        if apps != journal.apps {
            let changed = Set(apps.keys).union(journal.apps.keys)
            apps = journal.apps
            for app in changed {
                appChanged(app)
                replanned += (byApp[app] ?? []).map(Int.init)
            }
        }
        if freeLedger != journal.freeLedger {
            // A shorter free ledger can move plans under its cap earlier.
            freeLedger = journal.freeLedger
            replanned += reloads.positionsUnderFreeCap
        }
        for (p, s) in journal.instances {
            instances[p] = s
            replanned.append(p)
            replanEntry(p)
        }
        for p in replanned { replan(p) }
    }

    /// Puts the instance at `position` in the groups and queues.
    private mutating func enter(_ position: Int) {
        let instance = instances[names: position]
        byApp[instance.app, default: []].append(Int32(position))
        byAppAndKind[AppKind(app: instance.app, kind: instance.kind), default: []].append(Int32(position))
        if instance.usesLocation { locationUsers.append(Int32(position)) }
        let key = PluginKind(plugin: instance.plugin, kind: instance.kind)
        let group: Int32
        if let number = groups[key] {
            group = number
        } else {
            group = Int32(groups.count)
            groups[key] = group
            groupNames.append(key)
            // Groups are few (a plugin's kinds) and rarely new: rank them all again.
            let order = groupNames.indices.sorted {
                (groupNames[$0].plugin, groupNames[$0].kind) < (groupNames[$1].plugin, groupNames[$1].kind)
            }
            groupRanks = Array(repeating: 0, count: groupNames.count)
            for (rank, g) in order.enumerated() { groupRanks[g] = Int32(rank) }
        }
        instances[info: position] = PositionInfo(
            group: group, app: number(ofApp: instance.app), jitterFraction: StableJitter.fraction(for: instance.id))
        replan(position)
        replanEntry(position)
    }

    /// The number of `app`, given one (with its current charge) if new.
    private mutating func number(ofApp app: String) -> Int32 {
        if let number = appNumbers[app] { return number }
        let number = Int32(appCharges.count)
        appNumbers[app] = number
        appCharges.append(Self.charge(of: apps[app]))
        return number
    }

    /// Records the app's charge again after its foreground or sessions changed.
    private mutating func appChanged(_ app: String) {
        appCharges[Int(number(ofApp: app))] = Self.charge(of: apps[app])
    }

    /// The rules with the state they read: two fields copied, not the scheduler.
    private var rules: ReloadRules { ReloadRules(configuration: configuration, freeLedger: freeLedger) }

    /// Plans the instance at `position` again, as of `latestTime`.
    private mutating func replan(_ position: Int) { replanInline(position) }

    /// ``replan(_:)``, inlined where every completion calls it.
    @inline(__always)
    private mutating func replanInline(_ position: Int) {
        let stateNow = latestTime ?? -Double.greatestFiniteMagnitude
        let charge = appCharges[instances[info: position].app]
        // The steady state's plan first, from the few numbers it reads.
        let steady = self.steady
        if let plain = instances.withView(
            position, { s in steady.plainPlan(s, appCharge: charge, at: later(stateNow, s.addedAt)) })
        {
            reloads.insert(
                position, at: plain.time, latest: plain.latest, flags: .init(underFreeCap: false, plainPolicy: true))
            setRecheck(position, .infinity)
            return
        }
        replanByTheRules(position)
    }

    /// ``replan(_:)`` past the steady state's plan: every rule asked.
    /// Out of line, so that the inlined steady path keeps its registers.
    @inline(never)
    private mutating func replanByTheRules(_ position: Int) {
        let stateNow = latestTime ?? -Double.greatestFiniteMagnitude
        let charge = appCharges[instances[info: position].app]
        // A policy reload held by the budget alone, of an instance shown
        // all day: its plan and recheck found without the rules.
        let steady = self.steady
        if let held = instances.withView(
            position, { s in steady.heldPlan(s, appCharge: charge, at: later(stateNow, s.addedAt)) })
        {
            reloads.set(
                position, to: held.time, latest: held.time,
                flags: .init(underFreeCap: false, plainPolicy: false, heldPolicy: true))
            setRecheck(position, held.recheck)
            return
        }
        let rules = self.rules
        let (planned, flags, recheck) = instances.withView(position) { s in
            let now = max(stateNow, s.addedAt)
            let planned = rules.candidate(s, appCharge: charge, at: now)
            return (
                (time: planned?.time ?? .infinity, latest: planned?.latest ?? .infinity),
                ReloadWheel.Node.Flags(
                    underFreeCap: rules.hasCappedCandidate(s, appCharge: charge),
                    plainPolicy: planned?.isPlainPolicy ?? false),
                rules.recheckTime(s, appCharge: charge, now: now, planned: planned?.time ?? .infinity)
            )
        }
        reloads.set(position, to: planned.time, latest: planned.latest, flags: flags)
        setRecheck(position, recheck)
    }

    /// Queues the instance at `position` for a recheck at `time` (none
    /// when infinite), touching the queue only when it is or was queued.
    @inline(__always)
    private mutating func setRecheck(_ position: Int, _ time: Double) {
        let queued = time < .infinity
        guard queued || instances[info: position].hasRecheck else { return }
        rechecks.set(position, to: time)
        instances[info: position].hasRecheck = queued
    }

    /// Queues the next entry date after `latestTime` of the instance at
    /// `position`, with its timeline's entries (a new timeline, or the
    /// instance entered or put back).
    private mutating func replanEntry(_ position: Int) { replanEntryInline(position) }

    /// ``replanEntry(_:)``, inlined where every completion calls it.
    @inline(__always)
    private mutating func replanEntryInline(_ position: Int) {
        if tracksDisplayChanges { displayChanges.append(Int32(position)) }
        let now = latestTime ?? -Double.greatestFiniteMagnitude
        // Through the view: a copy of the cold record retained and released all of it.
        let (next, index) = instances.withView(position) { s in
            s.cold.pointee.timeline.map { timeline in
                timeline.entries.withUnsafeBufferPointer { Self.nextEntry(after: now, in: $0, from: 0) }
            } ?? (.infinity, 0)
        }
        guard next < .infinity else {
            // No entry change to come (an entry-less timeline, the last
            // entry shown): the queue is touched only if it may hold one.
            if instances[info: position].mayHaveEntryChange {
                if entryChanges.isQueued(position) {
                    entryChanges.set(position, to: .infinity, payload: EntryCursor(entries: [], index: 0))
                }
                instances[info: position].mayHaveEntryChange = false
            }
            return
        }
        instances[info: position].mayHaveEntryChange = true
        let entries = instances.withView(position) { $0.cold.pointee.timeline.unsafelyUnwrapped.entries }
        entryChanges.set(position, to: next, payload: EntryCursor(entries: entries, index: Int32(clamping: index)))
    }

    /// Moves the earliest queued entry change on to the entry after
    /// `latestTime`, from the entries and cursor queued with it: the
    /// instance's records are not read (at 100,000 instances, its cold
    /// record and then its timeline were two cache misses one after the
    /// other, most of an entry change's time). The search reads the entry
    /// after the last one shown, not the timeline's half-way points.
    private mutating func advanceEarliestEntry() {
        let now = latestTime ?? -Double.greatestFiniteMagnitude
        if tracksDisplayChanges, let p = entryChanges.minimumPosition { entryDateChanges.append(Int32(p)) }
        entryChanges.moveMinimum { cursor in
            let (date, index) = cursor.entries.withUnsafeBufferPointer {
                Self.nextEntry(after: now, in: $0, from: Int(cursor.index))
            }
            cursor.index = Int32(clamping: index)
            return date
        }
    }

    /// The first entry of `entries` (sorted by date: the daemon's result
    /// validator refuses others) dated after `now`, and its index: searched forward from
    /// `hint` when every entry before it is dated up to `now` (then the
    /// answer is at or after it), otherwise by halving.
    static func nextEntry(after now: Double, in entries: UnsafeBufferPointer<EntryRecord>, from hint: Int)
        -> (date: Double, index: Int)
    {
        var low = 0
        var high = entries.count
        // `!(date > now)`, not `date <= now`: as the halving below, a NaN
        // date counts as passed.
        if hint >= 0 && hint <= entries.count && (hint == 0 || !(entries[hint - 1].date > now)) {
            // A few steps forward, then halving what is left.
            low = hint
            let end = min(hint + 4, entries.count)
            while low < end && !(entries[low].date > now) { low += 1 }
            if low < end { high = low }
        }
        while low < high {
            let mid = (low + high) / 2
            if entries[mid].date > now { high = mid } else { low = mid + 1 }
        }
        return low < entries.count ? (entries[low].date, low) : (.infinity, low)
    }

    private mutating func replan(_ positions: [Int32]?) {
        for position in positions ?? [] { replan(Int(position)) }
    }

    // MARK: Instances

    @discardableResult
    mutating func add(_ instance: WidgetInstance, at time: Double) -> Bool {
        guard position(of: instance.id) == nil else { return false }
        journalWhole()
        observe(time)
        var entry = InstanceState(instance: instance, addedAt: time)
        entry.request = PendingRequest(trigger: .added, charge: .free(.instanceAdded), requestedAt: time)
        let position = instances.count
        instances.append(entry)
        instances.names.withUnsafeBufferPointer { index.insert(position: position, of: $0) }
        enter(position)
        touch(position)
        return true
    }

    @discardableResult
    mutating func remove(_ id: String) -> Bool {
        guard let position = position(of: id) else { return false }
        journalWhole()
        serialAtLastMove = issuedSerial
        instances.names.withUnsafeBufferPointer { index.remove(position: position, of: $0) }
        let removed = instances.remove(at: position).instance
        reloads.removePosition(position)
        rechecks.removePosition(position)
        entryChanges.removePosition(position)
        func renumber(_ list: inout [Int32]) {
            let position = Int32(position)
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
        renumber(&displayChanges)
        renumber(&entryDateChanges)
        return true
    }

    func instanceState(_ id: String) -> InstanceState? {
        position(of: id).map { instances[$0] }
    }

    // MARK: Reading the instances

    // What the daemon, the store and `simulate` read, asked of the
    // scheduler rather than read from ``state``: how the scheduler keeps an
    // instance is its own business (``state`` is the whole state as one
    // value, for a full write).

    var instanceCount: Int { instances.count }

    func instancePosition(of id: String) -> Int? { position(of: id) }

    func instance(at position: Int) -> WidgetInstance {
        instances[names: position]
    }

    func forEachInstance(_ body: (_ position: Int, _ instance: WidgetInstance) throws -> Void) rethrows {
        for position in 0..<instances.count {
            try body(position, instances[names: position])
        }
    }

    func instanceCounts() -> InstanceCounts {
        var counts = InstanceCounts()
        counts.instances = instances.count
        for position in 0..<instances.count {
            instances.withView(position) { view in
                if view.isVisible { counts.visible += 1 }
                if view.isInFlight { counts.inFlight += 1 }
                if view.consecutiveFailures > 0 { counts.failing += 1 }
            }
        }
        return counts
    }

    func relevanceScores(at time: Double) -> [Double] {
        (0..<instances.count).map { position in
            instances.withView(position) { Self.relevanceScore(of: $0.cold.pointee.timeline, at: time) }
        }
    }

    func instanceState(at position: Int) -> InstanceState { instances[position] }

    func isVisible(at position: Int) -> Bool {
        instances.withView(position) { $0.isVisible }
    }

    /// How many reloads in flight are kept in the table of reloads in
    /// flight, not in their instances' lines (for the tests).
    var flightsInTable: Int { instances.flightsInTable }

    func isInFlight(at position: Int) -> Bool {
        instances.withView(position) { $0.isInFlight }
    }

    func consecutiveFailures(at position: Int) -> Int {
        instances.withView(position) { $0.consecutiveFailures }
    }

    @discardableResult
    mutating func reconfigure(_ id: String, as widget: WidgetInstance, at time: Double) -> Bool {
        guard let p = position(of: id), widget.id == id else { return false }
        var changed = widget
        changed.isVisible = instances[hot: p].isVisible
        let old = instances[names: p]
        guard old != changed else { return false }
        let request = PendingRequest(trigger: .added, charge: .free(.instanceAdded), requestedAt: time)
        if old.app == changed.app && old.kind == changed.kind && old.plugin == changed.plugin
            && old.usesLocation == changed.usesLocation
        {
            willChange(p)
            instances[p].instance = changed
            instances[p].request = request
            touch(p)
            replan(p)
        } else {
            var newState = state
            newState.instances[p].instance = changed
            newState.instances[p].request = request
            replaceState(newState)
            touch(p)
        }
        return true
    }

    var recordsAreInStep: Bool { instances.flagsAreInStep }

    var instanceIDs: [String] {
        // In place: mapping the instances would copy each one's whole state.
        instances.names.withUnsafeBufferPointer { all in
            var ids: [String] = []
            ids.reserveCapacity(all.count)
            for index in all.indices { ids.append(all[index].id) }
            return ids
        }
    }

    func getCurrentConfigurations(app: String? = nil) -> [WidgetInfo] {
        instances.names.withUnsafeBufferPointer { names in
            names.compactMap { i in
                guard app == nil || i.app == app else { return nil }
                return WidgetInfo(
                    id: i.id, plugin: i.plugin, kind: i.kind, family: i.family, configuration: i.configuration,
                    app: i.app)
            }
        }
    }

    // MARK: Events

    mutating func handle(_ event: SchedulerEvent, at time: Double) {
        observe(time)
        switch event {
        case .instanceShown(let id):
            guard let p = position(of: id), !instances[hot: p].isVisible else { return }
            willChange(p)
            instances[p].instance.isVisible = true
            instances[p].visibleSince = time
            touch(p)
            replan(p)
        case .instanceHidden(let id):
            guard let p = position(of: id), instances[hot: p].isVisible else { return }
            willChange(p)
            let since = instances[hot: p].visibleSince ?? time
            instances[p].views.markVisible(from: since, to: time)
            instances[p].instance.isVisible = false
            instances[p].visibleSince = nil
            touch(p)
            replan(p)
        case .appForeground(let app):
            apps[app, default: AppState()].foreground = true
            appChanged(app)
            // A counted WidgetCenter request of this app still waiting (for the
            // spacing or the budget) is served now as the foreground makes it: free.
            for p in (byApp[app] ?? []).lazy.map(Int.init) {
                guard var pending = instances.withView(p, { $0.request }), pending.charge.isCounted else { continue }
                switch pending.trigger {
                case .reloadTimelines(_, let by) where by == app, .reloadAllTimelines(let by) where by == app:
                    pending.charge = .free(.appForeground)
                    willChange(p)
                    instances[p].request = pending
                    touch(p)
                default: break
                }
            }
            replan(byApp[app])
        case .appBackground(let app):
            apps[app, default: AppState()].foreground = false
            appChanged(app)
            replan(byApp[app])
        case .sessionStarted(let app, let kind):
            apps[app, default: AppState()].sessions.insert(kind)
            appChanged(app)
            replan(byApp[app])
        case .sessionEnded(let app, let kind):
            apps[app, default: AppState()].sessions.remove(kind)
            appChanged(app)
            replan(byApp[app])
        case .appIntent(let id):
            guard let p = position(of: id) else { return }
            request(p, PendingRequest(trigger: .appIntent, charge: .free(.appIntent), requestedAt: time))
        case .systemChange(let change):
            let reason: FreeReason =
                switch change {
                case .locale: .localeChange
                case .accessibility: .accessibilityChange
                case .timeZone: .timeZoneChange
                }
            for p in instances.indices {
                request(p, PendingRequest(trigger: .systemChange(change), charge: .free(reason), requestedAt: time))
            }
        case .significantLocationChange:
            for p in locationUsers.lazy.map(Int.init) where instances.withView(p, { $0.locationChangeAt }) == nil {
                willChange(p)
                instances[p].locationChangeAt = time
                touch(p)
                replan(p)
            }
        case .reloadTimelines(let kind, let app):
            let charge = Self.charge(of: apps[app])
            for p in (byAppAndKind[AppKind(app: app, kind: kind)] ?? []).lazy.map(Int.init) {
                request(
                    p,
                    PendingRequest(trigger: .reloadTimelines(kind: kind, app: app), charge: charge, requestedAt: time))
            }
        case .reloadAllTimelines(let app):
            let charge = Self.charge(of: apps[app])
            for p in (byApp[app] ?? []).lazy.map(Int.init) {
                request(p, PendingRequest(trigger: .reloadAllTimelines(app: app), charge: charge, requestedAt: time))
            }
        case .push(let kind, let plugin):
            for p in positions(ofKind: kind, plugin: plugin) {
                request(p, PendingRequest(trigger: .push, charge: .free(.push), requestedAt: time))
            }
        }
    }

    @discardableResult
    mutating func push(kind: String, plugin: String? = nil, at time: Double) -> [PushDecision] {
        handle(.push(kind: kind, plugin: plugin), at: time)
        return positions(ofKind: kind, plugin: plugin).map { p in
            let s = instances[p]
            return PushDecision(instanceID: s.instance.id, reload: s.isInFlight ? nil : plan(s, at: time))
        }
    }

    /// Positions of the instances of `kind` (and `plugin`, when given),
    /// ascending. `mutating` though it only reads: its callers are, and a
    /// non-mutating call from them copied the core's bytes to lend it.
    private mutating func positions(ofKind kind: String, plugin: String?) -> [Int] {
        var found: [Int] = []
        for (key, positions) in byAppAndKind where key.kind == kind { found += positions.lazy.map(Int.init) }
        if let plugin { found.removeAll { instances[names: $0].plugin != plugin } }
        return found.sorted()
    }

    func appCharge(_ app: String) -> ReloadCharge { Self.charge(of: apps[app]) }

    /// The charge of a reload of an app in the state `s` (nil: an app with
    /// no state, in the background). Static: a call from a `mutating`
    /// method to a non-mutating one of the core copied the core's bytes
    /// (about 1 KB) to the stack to lend it.
    private static func charge(of s: AppState?) -> ReloadCharge {
        guard let s else { return .counted }
        if s.foreground { return .free(.appForeground) }
        if s.sessions.contains(.audio) { return .free(.audioSession) }
        if s.sessions.contains(.navigation) { return .free(.navigationSession) }
        return .counted
    }

    private mutating func request(_ p: Int, _ new: PendingRequest) {
        // One pending request per instance: a free one replaces a counted one;
        // otherwise the older one stays (one reload serves both).
        if let old = instances.withView(p, { $0.request }), !old.isReplaced(by: new) { return }
        willChange(p)
        instances[p].request = new
        touch(p)
        replan(p)
    }

    /// Moves `latestTime` forward to `time`: plans that depend on the hour
    /// are made again, entries whose date passed give way to the next.
    private mutating func observe(_ time: Double) {
        if let now = latestTime, now >= time { return }
        latestTime = time
        while rechecks.minimumKey <= time, let p = rechecks.minimumPosition { replan(p) }
        while entryChanges.minimumKey <= time { advanceEarliestEntry() }
    }

    // MARK: Budget

    func tier(of id: String, at time: Double) -> ViewTier? {
        position(of: id).map { tier(instances[$0], at: time) }
    }

    func tier(_ s: InstanceState, at time: Double) -> ViewTier {
        InstanceView.of(s) { rules.tier($0, at: time) }
    }

    /// The plan of `s` as of `now` (off the hot paths: hashes the app's name).
    func plan(_ s: InstanceState, at now: Double) -> PlannedReload? {
        let charge = appCharge(s.instance.app)
        return InstanceView.of(s) { rules.plan($0, appCharge: charge, at: now) }
    }

    func allowance(of id: String, at time: Double) -> Int? {
        tier(of: id, at: time).map { configuration.allowance(for: $0) }
    }

    // MARK: Planning

    func policyDue(for timeline: TimelineRecord, instanceID: String, receivedAt time: Double) -> Double? {
        rules.policyDue(for: timeline, jitterFraction: StableJitter.fraction(for: instanceID), receivedAt: time)
    }

    func plannedReload(of id: String, at time: Double) -> PlannedReload? {
        position(of: id).flatMap { plan(instances[$0], at: time) }
    }

    func queuedReload(of id: String) -> (time: Double, latest: Double)? {
        position(of: id).map { (reloads.key(of: $0), reloads.node(of: $0).latest) }
    }

    // MARK: Driving

    /// `mutating`, though it only reads: a call through the box's pointer
    /// then lends the core by address, where a non-mutating one copies its
    /// bytes (about 900) to the stack first, once per wakeup.
    mutating func nextWakeup() -> Double? {
        let now = latestTime ?? -Double.greatestFiniteMagnitude
        let result = min(coalescedWake(now: now) ?? .infinity, entryChanges.minimumKey)
        guard result.isFinite else { return nil }
        return max(result, latestTime ?? result)
    }

    /// The time of the next reload batch: greedy batching (Android's alarm
    /// batching) takes reloads in order of their earliest time while that
    /// time is within every taken reload's coalescing deadline, and wakes at
    /// the last one taken. Nil when no reload is planned.
    ///
    /// Only the instances whose queued time is within the coalescing cap of
    /// the earliest plan are planned: a reload later than that cannot join
    /// the batch (every deadline is at most the cap after its time).
    /// `mutating` though it only reads, as ``nextWakeup()``: a non-mutating
    /// call from it copied the core's bytes to the stack at every wakeup.
    private mutating func coalescedWake(now: Double) -> Double? {
        scratch.walkedWake = .nan
        guard reloads.minimumKey < .infinity else { return nil }
        if earliestPlanHasNoSlack { return reloads.minimumKey }
        let slack = max(0, configuration.coalescingCap)
        return keepingWalk(
            now: now, wake: { $0 },
            walk: { queued, walked, found, asQueued in
                Self.coalescedWake(queued, slack: slack, now: now, walked: walked, found: &found, asQueued: &asQueued)
            })
    }

    /// Runs `walk` over the queue with the scratch buffer of walked keys
    /// (it writes them as far as the buffer has room, counts them all in
    /// `found`, and says whether every plan behind them was its queued
    /// time), then keeps them for a `dueReloads` at `wake(result)`
    /// (``batchIsLater(than:collecting:)`` takes its due instances from
    /// them), or makes the buffer larger for next time when they did not
    /// fit.
    private mutating func keepingWalk<R>(
        now: Double, wake: (R) -> Double?,
        walk: (QueuedPlans, UnsafeMutableBufferPointer<KeyedPosition>, inout Int, inout Bool) -> R
    ) -> R {
        var walked = scratch.walked
        scratch.walked = []
        var found = 0
        var asQueued = false
        let result = walked.withUnsafeMutableBufferPointer { walked in
            withQueuedPlans(now: now) { walk($0, walked, &found, &asQueued) }
        }
        if !scratch.keeps(capacity: walked.capacity) {
            walked = []
        } else if found > walked.count {
            // Room for more next time, when worth keeping (as the scratch
            // arrays are); this time, no findings to keep.
            let room = max(64, found + found / 2)
            if scratch.keeps(capacity: room) {
                walked = Array(repeating: KeyedPosition(key: 0, position: 0), count: room)
            }
        } else if asQueued, let wake = wake(result) {
            scratch.walkedWake = wake
            scratch.walkedChanges = reloads.changes
            scratch.walkedCount = found
        }
        scratch.walked = walked
        return result
    }

    /// The batch time (``coalescedWake(now:)``). The keys up to the first
    /// plan's deadline are written to `walked` as far as it has room,
    /// `found` counting them all; `asQueued` says whether every plan behind
    /// them was its queued time (none under the free-reload cap).
    private static func coalescedWake(
        _ queued: QueuedPlans, slack: Double, now: Double, walked: UnsafeMutableBufferPointer<KeyedPosition>,
        found: inout Int, asQueued: inout Bool
    ) -> Double? {
        guard let first = firstPlan(queued, slack: slack, now: now) else { return nil }
        // Greedy batching takes the plans in order of time while each time is
        // within every deadline taken. What it takes is every plan whose time
        // is within `m`, the earliest deadline of the plans whose times are
        // within the first plan's deadline: each plan it takes is within the
        // deadlines of all it takes (a deadline is never before its own
        // time), the first one left out is after their earliest deadline,
        // and plans after that are after their own deadlines' minimum too.
        // Every plan is at or after its queued time, so those plans are
        // behind the queued times up to the first plan's deadline: two walks
        // of them find the batch time (the latest time within `m`) without
        // ordering them, and one does when every plan within the first
        // deadline is within `m` too (the usual case: reloads with the same
        // slack), as the first walk found the latest of their times.
        let within = plansWithin(queued, deadline: first.latest, walked: walked, found: &found, asQueued: &asQueued)
        if within.latestTime <= within.earliestDeadline { return within.latestTime }
        return latestPlan(queued, upTo: within.earliestDeadline)
    }

    /// The first plan greedy batching takes: the earliest queued one, unless
    /// the free-reload cap may have moved it later since it was queued; then
    /// the earliest of the plans behind the queued times, looked for again
    /// from it until it is within the slack of where the walk began. Nil
    /// when none is planned.
    private static func firstPlan(_ queued: QueuedPlans, slack: Double, now: Double) -> (
        time: Double, latest: Double
    )? {
        let reloads = queued.reloads
        guard let position = reloads.pointee.minimumPosition else { return nil }
        let node = reloads.pointee.node(of: position)
        var first = (time: node.key, latest: node.latest)
        if node.underFreeCap {
            var bound = reloads.pointee.minimumKey + slack
            while true {
                first = (.infinity, .infinity)
                reloads.pointee.collectNodes(upTo: max(bound, now)) { position, node in
                    if let plan = queued.plan(position, node), plan.time < first.time { first = plan }
                }
                if first.time + slack <= bound { break }
                bound = first.time < .infinity ? first.time + slack : .infinity
            }
            guard first.time < .infinity else { return nil }
        }
        return first
    }

    /// Over the plans whose times are within `deadline` (behind the keys up
    /// to it): the earliest deadline and the latest time. The keys are
    /// written to `walked` as far as it has room, `found` counting them
    /// all; `asQueued` says whether every plan behind them was its queued
    /// time (none under the free-reload cap).
    private static func plansWithin(
        _ queued: QueuedPlans, deadline: Double, walked: UnsafeMutableBufferPointer<KeyedPosition>,
        found: inout Int, asQueued: inout Bool
    ) -> (earliestDeadline: Double, latestTime: Double) {
        var m = Double.infinity
        var latestTime = -Double.infinity
        var capped = false
        var count = found
        queued.reloads.pointee.collectNodes(upTo: deadline) { position, node in
            if count < walked.count {
                walked[count] = KeyedPosition(key: node.key, position: Int32(truncatingIfNeeded: position))
            }
            count &+= 1
            capped = capped || node.underFreeCap
            guard let plan = queued.plan(position, node), plan.time <= deadline else { return }
            m = min(m, plan.latest)
            latestTime = max(latestTime, plan.time)
        }
        found = count
        asQueued = !capped
        return (m, latestTime)
    }

    /// The latest time of the plans within `bound`.
    private static func latestPlan(_ queued: QueuedPlans, upTo bound: Double) -> Double {
        var wake = -Double.infinity
        queued.reloads.pointee.collectNodes(upTo: bound) { position, node in
            if let plan = queued.plan(position, node), plan.time <= bound { wake = max(wake, plan.time) }
        }
        return wake
    }

    /// Calls `body` with what reads the plans behind the queued times
    /// (``QueuedPlans``), valid inside `body` only.
    @inline(__always)
    private func withQueuedPlans<R>(now: Double, _ body: (QueuedPlans) -> R) -> R {
        let ledgers = instances.ledgers.unsafeAddresses
        return withUnsafePointer(to: rules) { rules in
            withUnsafePointer(to: reloads) { reloads in
                instances.lines.withUnsafeBufferPointer { lines in
                    appCharges.withUnsafeBufferPointer { charges in
                        body(
                            QueuedPlans(
                                reloads: reloads, rules: rules, lines: lines, appCharges: charges, ledgers: ledgers,
                                now: now))
                    }
                }
            }
        }
    }

    /// The plan behind a queued time: a queued time is never later than the
    /// plan, except for plans made before `now` that are due by now (those
    /// are within `now`). It is the plan's time unless the free-reload cap
    /// may have moved the plan since: then the instance is planned again.
    ///
    /// Plain pointers into the scheduler's arrays, valid inside
    /// ``withQueuedPlans(now:_:)`` only: holding the arrays (and the rules'
    /// ledger) themselves, every closure that used it copied it, four
    /// references retained and released, several times per wakeup: with a
    /// wakeup a second (entry changes, uncoalesced reloads) that was a
    /// quarter of the scheduler's work.
    private struct QueuedPlans {
        /// The queue itself.
        let reloads: UnsafePointer<ReloadWheel>
        let rules: UnsafePointer<ReloadRules>
        let lines: UnsafeBufferPointer<InstanceLine>
        let appCharges: UnsafeBufferPointer<ReloadCharge>
        /// The instances' ledgers (``LedgerArena/unsafeAddresses``).
        let ledgers: (slots: UnsafePointer<LedgerArena.Slot>, times: UnsafeMutablePointer<Double>)
        let now: Double

        /// The plan behind the queued `node` of `position`: the node's own
        /// time and deadline, read with its key, unless it is under the
        /// free-reload cap.
        func plan(_ position: Int, _ node: ReloadWheel.Node) -> (time: Double, latest: Double)? {
            guard node.underFreeCap else { return (node.key, node.latest) }
            let s = InstanceView(
                line: lines.baseAddress.unsafelyUnwrapped + position, ledger: (ledgers.slots + position, ledgers.times))
            let app = InstanceLine.info(lines.baseAddress.unsafelyUnwrapped + position).pointee.app
            return rules.pointee.candidate(s, appCharge: appCharges[app], at: max(now, s.addedAt))
                .map { ($0.time, $0.latest) }
        }
    }

    /// Whether the earliest queued time is a plan with no coalescing slack
    /// (a deferred or explicit reload, or a policy reload when slack is 0),
    /// trusted as queued (not under the free-reload cap): the batch time is
    /// then that time, found without walking the queue. Every other queued
    /// time is at or after it, and every deadline at or after its own time,
    /// so greedy batching takes the earliest plan, whose deadline is its own
    /// time, and nothing later. A day of widgets wakes every few seconds for
    /// an entry change or a reload, mostly with such a plan first: the walk
    /// was an eighth of its work.
    private var earliestPlanHasNoSlack: Bool {
        guard let p = reloads.minimumPosition else { return false }
        let node = reloads.node(of: p)
        return !node.underFreeCap && node.latest <= node.key
    }

    /// Whether the coalesced batch time is after `now` (`coalescedWake(now:)
    /// > now`), found without ordering the batch: the greedy batching takes
    /// every plan due by `now` (those with times up to `tmax`) unless one
    /// of their deadlines (the earliest, `lmin`) is before `tmax`; it then
    /// goes past `now` exactly when a plan's time is in `(now, lmin]`.
    /// `dueReloads` asks this at every call, mostly at the batch time that
    /// `nextWakeup()` just computed: ordering the batch again was a tenth
    /// of the scheduler's work. The walk over the keys up to `now` appends
    /// each position to `due` (every position whose key is `≤ now`, as
    /// ``ReloadWheel/collect(upTo:into:)`` would), so that the instances
    /// to issue are collected in the same walk; the second walk reads only
    /// the keys in `(now, lmin]`.
    /// `mutating` though it only reads: its caller is, and a non-mutating
    /// call copied the whole scheduler (936 bytes) to lend it.
    private mutating func batchIsLater(than now: Double, collecting due: inout [Int]) -> Bool {
        guard reloads.minimumKey < .infinity else { return false }
        if now == scratch.walkedWake && reloads.changes == scratch.walkedChanges {
            // `nextWakeup()` found this batch time by walking the queue as
            // it is, every plan its queued time: the batch is due now (the
            // time it found does not depend on `now` then), and the keys it
            // walked (up to a deadline at or after `now`) hold every one
            // due. Written in place, one slot per key walked (the slots
            // not used are dropped after): an append per position asked
            // whether `due`'s buffer was shared, a call to the runtime for
            // about every reload issued.
            appendWalked(upTo: now, into: &due)
            return false
        }
        if earliestPlanHasNoSlack {
            reloads.collect(upTo: now, into: &due)
            return reloads.minimumKey > now
        }
        let later: Bool? = withQueuedPlans(now: now) { queued in
            let reloads = queued.reloads
            var tmax = -Double.infinity
            var lmin = Double.infinity
            var anyDue = false
            // The earliest plan behind a key up to `now` that is later than
            // `now` (the free-reload cap moved it since it was queued).
            var movedPast = Double.infinity
            reloads.pointee.collectNodes(upTo: now) { position, node in
                due.append(position)
                guard let plan = queued.plan(position, node) else { return }
                if plan.time <= now {
                    anyDue = true
                    tmax = max(tmax, plan.time)
                    lmin = min(lmin, plan.latest)
                } else {
                    movedPast = min(movedPast, plan.time)
                }
            }
            // nil: queued by now, but due later (plans the free-reload cap
            // moved): rare, asked in full below.
            guard anyDue else { return nil }
            if lmin < tmax { return false }
            if movedPast <= lmin { return true }
            // A plan in `(now, lmin]` behind a later key (a plan is never
            // before its key).
            var later = false
            reloads.pointee.collectNodes(after: now, upTo: lmin) { position, node in
                guard !later, let plan = queued.plan(position, node) else { return }
                if plan.time <= lmin { later = true }
            }
            return later
        }
        return later ?? coalescedWake(now: now).map { now < $0 } ?? false
    }

    /// Appends to `due` the positions of the keys up to `now` that the last
    /// batch-time walk kept (``batchIsLater(than:collecting:)`` when the walk
    /// holds every one due).
    private mutating func appendWalked(upTo now: Double, into due: inout [Int]) {
        let walkedCount = scratch.walkedCount
        let start = due.count
        due.append(contentsOf: repeatElement(0, count: walkedCount))
        var end = start
        due.withUnsafeMutableBufferPointer { due in
            scratch.walked.withUnsafeBufferPointer { walked in
                for entry in walked[..<walkedCount] where entry.key <= now {
                    due[end] = Int(entry.position)
                    end += 1
                }
            }
        }
        if end < due.count { due.removeLast(due.count - end) }
        scratch.walksReused &+= 1
    }

    mutating func dueReloads(at now: Double, limit: Int = .max) -> [ReloadBatch] {
        var tickets = scratch.tickets
        scratch.tickets = []
        dueReloads(at: now, limit: limit, into: &tickets)
        var batches = recycledBatches()
        var start = 0
        while start < tickets.count {
            let group = tickets[start].group
            var decisions = scratch.spareDecisions.popLast() ?? []
            var end = start
            while end < tickets.count, tickets[end].group == group {
                decisions.append(decision(at: Int(tickets[end].position)))
                end += 1
            }
            let names = groupNames[Int(group)]
            scratch.peakBatch = max(scratch.peakBatch, decisions.count)
            batches.append(ReloadBatch(plugin: names.plugin, kind: names.kind, time: now, decisions: decisions))
            start = end
        }
        scratch.tickets = scratch.keeps(capacity: tickets.capacity) ? tickets : []
        scratch.batches = batches
        return batches
    }

    mutating func dueReloads(at now: Double, limit: Int = .max, into tickets: inout [ReloadTicket]) {
        // Emptied only when not empty: `removeAll` costs about 50
        // instructions even then, and most wakeups of a day of widgets
        // (an entry change) issue nothing.
        if !tickets.isEmpty { tickets.removeAll(keepingCapacity: true) }
        // A wakeup with nothing queued by now (an entry change, mostly)
        // moves time on and issues nothing: nothing to plan again, no
        // batch time to ask for (asking it at every entry change was a
        // fifth of the work of a day of widgets with entries), and the
        // scratch arrays left alone (two thirds of that day's wakeups).
        observe(now)
        guard reloads.minimumKey <= now else {
            readAheadComing()
            return
        }
        var issued = scratch.issued
        scratch.issued = []
        if !issued.isEmpty { issued.removeAll(keepingCapacity: true) }
        let grouped = issueDue(at: now, limit: limit, into: &issued)
        groupByBatch(issued, grouped: grouped, into: &tickets)
        scratch.issued = scratch.keeps(capacity: issued.capacity) ? issued : []
        readAheadComing()
    }

    /// Reads ahead the records of the reloads queued next, a stretch of
    /// the reload queue ahead: whole buckets, at least ``comingReadAhead``
    /// positions, read as the earliest reload enters the stretch read
    /// before. At 100,000 instances a wakeup issues one or two reloads,
    /// each of which waited, one miss after another, for its records,
    /// ledger, timeline and places in the queues (and the queue's walk for
    /// the next earliest, for its bucket's nodes); read a stretch ahead,
    /// they are in the cache when their wakeup comes.
    @inline(__always)
    private mutating func readAheadComing() {
        let next = reloads.minimumKey
        guard next >= scratch.comingFrom, next < .infinity, instances.count >= comingReadAheadMinimum else {
            return
        }
        var coming = scratch.coming
        scratch.coming = []
        coming.removeAll(keepingCapacity: true)
        let from = max(next, scratch.comingThrough)
        scratch.comingFrom = from
        scratch.comingThrough = reloads.collectComing(from: from, atLeast: Self.comingReadAhead, into: &coming)
        coming.withUnsafeBufferPointer { readAhead($0, forIssue: true) }
        scratch.coming = coming
    }

    /// How many coming reloads ``readAheadComing()`` reads ahead at least.
    static let comingReadAhead = 16

    /// Issues the reloads due at `now` (at most `limit`), their tickets
    /// appended to `tickets` (empty) in the order of the instances.
    /// Returns whether they are of more than one group (batch).
    /// `latestTime` is `now` and a reload is queued by `now` (its one
    /// caller, ``dueReloads(at:limit:into:)``, saw to both).
    private mutating func issueDue(
        at now: Double, limit: Int, into tickets: inout [ReloadTicket]
    ) -> Bool {
        // A wakeup for something else before the coalesced batch time issues
        // nothing: every reload due by now belongs to that batch and can wait
        // for it, so the batch stays one wakeup. The question is asked in the
        // walk that collects the due instances.
        var due = scratch.due
        scratch.due = []
        due.removeAll(keepingCapacity: true)
        if batchIsLater(than: now, collecting: &due) {
            due.removeAll(keepingCapacity: true)
            scratch.due = scratch.keeps(capacity: due.capacity) ? due : []
            return false
        }
        prepare(&due)
        guard !due.isEmpty else {
            scratch.due = scratch.keeps(capacity: due.capacity) ? due : []
            return false
        }
        let grouped = due.withUnsafeMutableBufferPointer {
            issue($0, all: true, at: now, limit: limit, asPlannedOnly: false, into: &tickets).grouped
        }
        scratch.due = scratch.keeps(capacity: due.capacity) ? due : []
        return grouped
    }

    /// The positions due collected: counted (for the scratch arrays' sizes),
    /// a burst's table of reloads in flight let go once none is in it, and
    /// put in the order of the instances, as the free-reload cap is consumed.
    private mutating func prepare(_ due: inout [Int]) {
        scratch.note(due.count)
        if !scratch.keeps(capacity: instances.flightCapacity) {
            instances.letGoOfFlights(keeping: max(64, due.count))
        }
        guard !due.isEmpty else { return }
        var bitmap = scratch.dueBitmap
        scratch.dueBitmap = []
        due.withUnsafeMutableBufferPointer { $0.sortDistinctPositions(below: instances.count, bitmap: &bitmap) }
        scratch.dueBitmap = bitmap
    }

    /// Issues the reloads of `due` (positions due at `now`, ascending), at
    /// most `limit`, their tickets appended to `tickets` in that order;
    /// the ones not issued are planned again, those past the limit left
    /// queued as they are. `all`: `due` is every position queued by `now`
    /// (the usual wakeup), so that when every one is issued the wheel's due
    /// buckets are emptied at once. `asPlannedOnly` (with no limit): the
    /// reloads not issued as planned (made by every rule, which may read
    /// and write the host-wide free-reload ledger) are left queued as they
    /// are, their positions moved to the front of `due`, in order, but
    /// for those the rules cannot read or write it for (a counted reload
    /// of an app in the background, not under the free cap, outside
    /// developer mode), which are issued by the rules here, as they read
    /// and write nothing another shard does (one not due after all is left
    /// too, and found so again in global order); `leavesNotIssued`: so are
    /// the reloads not due after all, to be planned again by the caller
    /// (``replan(positions:)``) after the wakeup's last issue, as one
    /// engine plans them after its whole wakeup. Returns how many were
    /// issued, how many were left so, and whether the reloads issued are of
    /// more than one group (batch).
    /// Called once per wakeup, from
    /// ``issueDue(at:limit:into:)`` and a shard's
    /// ``issueShard(_:all:at:limit:asPlannedOnly:leavesNotIssued:into:)``, and never
    /// inlined, so that the loop is one copy, into which the calls every
    /// reload makes are inlined (two copies of it had `issuePolicyReload`
    /// left out of line: 27 more instructions per reload).
    @inline(never)
    private mutating func issue(
        _ due: UnsafeMutableBufferPointer<Int>, all: Bool, at now: Double, limit: Int, asPlannedOnly: Bool,
        leavesNotIssued: Bool = false, into tickets: inout [ReloadTicket]
    ) -> (issued: Int, left: Int, grouped: Bool) {
        // Read ahead a small chunk at a time, a few chunks before the
        // issuing reaches it (``readAhead(_:aheadOf:readUpTo:forIssue:)``):
        // at 100,000 instances a wakeup's thousands of due instances, read
        // ahead all at once, no longer fit in the cache by the time they
        // were issued.
        let readsAhead = due.count >= readAheadMinimum
        var readUpTo = 0
        var issued = 0
        // Past the limit, the instances not looked at stay queued as they
        // are (due, to be planned when a later call reaches them): planning
        // them again at every call made a storm of N due reloads, issued
        // `limit` at a time, cost N²/limit plans.
        var examined = due.count
        // With `asPlannedOnly` or `leavesNotIssued`: the positions left.
        var left = 0
        // The tickets written in place, one slot per due reload (the slots
        // not used are dropped after), noting whether they are of more than
        // one group as they are: an append asked whether the array's buffer
        // was shared and had room, and the grouping looked at every ticket
        // again to find out. (Counted by group as they were written, the
        // counts' array filled at every wakeup cost the day of widgets,
        // whose wakeups issue a reload or two, 4 % more instructions.)
        let placeholder = ReloadTicket(position: 0, group: 0, serial: 0)
        let start = tickets.count
        // Whether a counted reload not under the free cap leaves the
        // free-reload ledger alone (in developer mode a free reload is
        // recorded there though no cap is asked).
        let countedLeavesLedger = !configuration.developerMode
        tickets.append(contentsOf: repeatElement(placeholder, count: due.count))
        var firstGroup: Int32 = -1
        var grouped = false
        // Through the buffers, written in place: each write to an array
        // itself asked whether its buffer was shared (the calls between
        // them hide that it never is).
        tickets.withUnsafeMutableBufferPointer { tickets in
            for i in due.indices {
                let p = due[i]
                guard issued < limit else {
                    examined = i
                    break
                }
                if readsAhead {
                    readUpTo = readAhead(
                        UnsafeBufferPointer(due), aheadOf: i, readUpTo: readUpTo, forIssue: true)
                }
                let steady = self.steady
                let charge = appCharges[instances[info: p].app]
                // Only a reload issued has its plan made (with its trigger). A
                // plain policy reload, trusted as queued (not under the free
                // cap, no recheck queued), is the plan made when it was queued:
                // no event has changed it since (each one plans its instances
                // again), and its budget reads the same viewing tier at `now` as
                // at its time when no whole hour and no end of learning lies
                // between them; so it is not made again. Nor is a policy
                // reload held by the budget alone until its queued time (an
                // instance shown all day past its learning period): its tier,
                // and so its budget, have not changed since it was planned,
                // and the rules would find the same plan, deferred from its
                // policy's due time.
                let node = reloads.node(of: p)
                let trusted = !node.underFreeCap && !instances[info: p].hasRecheck && charge == .counted
                var dueSince = node.key
                var planned: Deferral?
                let asPlanned: Bool
                if trusted && node.plainPolicy {
                    asPlanned = now < steady.tierBoundary(after: node.key, addedAt: instances[hot: p].addedAt)
                } else if trusted && node.heldPolicy {
                    dueSince = instances[hot: p].storedPolicyDue
                    planned = Deferral(from: dueSince, until: node.key, cause: .budget)
                    asPlanned = true
                } else {
                    asPlanned = false
                }
                let serial: UInt64
                if asPlanned {
                    // Its in-flight record made at once, from one call
                    // (inlined here): no plan with a trigger to copy.
                    serial = issuePolicyReload(
                        p, dueSince: dueSince, time: node.key, latest: node.latest, planned: planned, at: now)
                } else {
                    // Left queued as it is, for the set to issue in
                    // global order (moved to the front of `due` below),
                    // when the rules may read or write the ledger for it.
                    if asPlannedOnly && !(countedLeavesLedger && charge == .counted && !node.underFreeCap) {
                        continue
                    }
                    #if DEBUG
                        // On a shard's thread, the ledger is the other shards' too.
                        let ledgerBefore = asPlannedOnly ? freeLedger : nil
                    #endif
                    guard let ruled = issueByTheRules(p, appCharge: charge, at: now) else { continue }
                    #if DEBUG
                        assert(
                            ledgerBefore.map { $0 == freeLedger } ?? true,
                            "a reload issued on a shard's thread recorded a free reload in the host-wide ledger")
                    #endif
                    serial = ruled
                }
                let group = Int32(instances[info: p].group)
                if firstGroup < 0 { firstGroup = group }
                grouped = grouped || group != firstGroup
                tickets[start + issued] = ReloadTicket(position: Int32(p), group: group, serial: serial)
                issued += 1
                due[i] = ~p  // issued: in flight, nothing to plan until it completes
            }
        }
        tickets.removeLast(due.count - issued)
        if all && issued == due.count {
            // Every due reload issued (the usual wakeup): the wheel's due
            // buckets are emptied at once, and each instance in flight has
            // no plan and no recheck (what `replan` would find).
            for i in due.indices {
                due[i] = ~due[i]
                setRecheck(due[i], .infinity)
            }
            reloads.removeAll(UnsafeBufferPointer(due), upTo: now)
        } else {
            for i in 0..<examined {
                let p = due[i]
                if p < 0 {
                    // What `replan` would find for an instance in flight: no plan, no recheck.
                    reloads.set(~p, to: .infinity)
                    setRecheck(~p, .infinity)
                } else if asPlannedOnly || leavesNotIssued {
                    due[left] = p  // (over a position already seen to)
                    left += 1
                } else {
                    replan(p)
                }
            }
        }
        return (issued, left, grouped)
    }

    /// Issues the reload of the instance at `p` due at `now` as every rule
    /// plans it (nil when none is due after all). Out of line, so that the
    /// issue loop's plain path keeps its registers.
    @inline(never)
    private mutating func issueByTheRules(_ p: Int, appCharge charge: ReloadCharge, at now: Double) -> UInt64? {
        let rules = self.rules
        guard
            let plan = instances.withView(
                p,
                { s in
                    rules.candidate(s, appCharge: charge, at: now).flatMap { $0.time <= now ? $0.planned(s) : nil }
                }
            )
        else { return nil }
        return issue(p, plan, at: now)
    }

    /// `issued` (in the order of the instances) grouped by batch into
    /// `tickets` (``ReloadTicket/appendGrouped(_:grouped:ranks:counts:to:)``).
    private mutating func groupByBatch(_ issued: [ReloadTicket], grouped: Bool, into tickets: inout [ReloadTicket]) {
        var counts = scratch.rankCounts
        scratch.rankCounts = []
        ReloadTicket.appendGrouped(issued, grouped: grouped, ranks: groupRanks, counts: &counts, to: &tickets)
        scratch.rankCounts = counts
    }

    /// The decision of the reload in flight at `p`.
    private func decision(at p: Int) -> ReloadDecision {
        instances.flight(at: p).unsafelyUnwrapped.decision(of: instances[names: p])
    }

    /// The batch array last returned, emptied, with its decision arrays kept
    /// as spares: no allocation when the caller no longer holds them.
    private mutating func recycledBatches() -> [ReloadBatch] {
        var batches = scratch.batches
        scratch.batches = []
        // Spares left unused since a larger burst go too.
        let limit = scratch.batchLimit
        scratch.spareDecisions.removeAll { $0.capacity > limit }
        for i in batches.indices {
            var decisions: [ReloadDecision] = []
            swap(&decisions, &batches[i].decisions)
            guard scratch.keepsBatch(capacity: decisions.capacity) else { continue }
            decisions.removeAll(keepingCapacity: true)
            scratch.spareDecisions.append(decisions)
        }
        batches.removeAll(keepingCapacity: true)
        return batches
    }

    /// Issues the reload planned as `plan` for the instance at `p`: marks
    /// it in flight and records its charge. Returns its serial number.
    private mutating func issue(_ p: Int, _ plan: PlannedReload, at now: Double) -> UInt64 {
        issue(
            p,
            InFlightRecord(
                time: now, dueSince: plan.deferral?.from ?? plan.time, trigger: plan.trigger, charge: plan.charge,
                attempt: plan.attempt,
                deferral: Self.deferral(
                    issuedAt: now, time: plan.time, latest: plan.latest, isPolicy: plan.trigger == .policy,
                    planned: plan.deferral),
                wouldHaveBeenDeferred: plan.wouldHaveBeenDeferred, allowance: nil, countedInWindow: nil))
    }

    /// The deferral of a reload planned for `time` (with the coalescing
    /// deadline `latest` and the plan's own deferral, `planned`) and issued
    /// at `now`: the plan's, and past its time, until `now`: coalescing for
    /// a policy reload on time issued within its deadline, late otherwise.
    private static func deferral(
        issuedAt now: Double, time: Double, latest: Double, isPolicy: Bool, planned: Deferral? = nil
    ) -> Deferral? {
        guard now > time else { return planned }
        let coalesced = planned == nil && isPolicy && now <= latest
        return Deferral(from: planned?.from ?? time, until: now, cause: coalesced ? .coalescing : .late)
    }

    /// Issues the reload of the instance at `p` recorded as `record` (its
    /// time, trigger, charge, deferrals; the budget and serial are filled
    /// in here). Returns its serial number.
    private mutating func issue(_ p: Int, _ record: consuming InFlightRecord) -> UInt64 {
        willChange(p)
        let now = record.time
        var record = record
        issuedSerial += 1
        record.serial = issuedSerial
        // In place, in the ledger's arena: a state of the instance, changed,
        // would copy its ledger out of the arena and back.
        switch record.charge {
        case .counted:
            (record.countedInWindow, record.allowance) = recordCounted(p, at: now)
        case .free(.push):
            instances[p].pushLedger.record(now, window: configuration.budgetWindow)
        case .free(let reason):
            if reason.isCapped { freeLedger.record(now, window: configuration.freeReloadWindow) }
        }
        instances.setInFlight(p, consume record, issuedAt: now)
        didIssue(p)
        return issuedSerial
    }

    /// `issue(_:_:)` (of a record) for a counted policy reload on
    /// its plan (the steady state's): due since `dueSince`, planned for
    /// `time` (`dueSince` when not deferred) with the coalescing deadline
    /// `latest` and the plan's deferral `planned`, issued at `now`. Its
    /// record is not made as an ``InFlightRecord`` when the line keeps it
    /// (``LineFlight``, nearly always); otherwise it is, and goes where
    /// ``InstanceRecords/setInFlight(_:_:issuedAt:)`` puts it. Called from one place, the issue loop, where it
    /// is inlined: called from two, it was not, which cost 46 instructions
    /// per reload.
    private mutating func issuePolicyReload(
        _ p: Int, dueSince: Double, time: Double, latest: Double, planned: Deferral?, at now: Double
    ) -> UInt64 {
        willChange(p)
        issuedSerial += 1
        let deferral = Self.deferral(issuedAt: now, time: time, latest: latest, isPolicy: true, planned: planned)
        let (counted, allowance) = recordCounted(p, at: now)
        let line = instances.withView(p) {
            LineFlight(
                dueSince: dueSince, deferral: deferral, counted: counted, allowance: allowance, hot: $0.hot.pointee,
                lastReloadAt: now)
        }
        if let line {
            instances.setInFlight(p, line: line, serial: issuedSerial, issuedAt: now)
        } else {
            // (Rare: due since other than the policy's due time, or counts
            // over 255.) The record made, to go where it can be kept.
            var record = InFlightRecord(
                time: now, dueSince: dueSince, trigger: .policy, charge: .counted,
                attempt: instances[hot: p].consecutiveFailures, deferral: deferral, wouldHaveBeenDeferred: nil,
                allowance: allowance, countedInWindow: counted)
            record.serial = issuedSerial
            instances.setInFlight(p, record, issuedAt: now)
        }
        didIssue(p)
        return issuedSerial
    }

    /// Records a counted reload of the instance at `p` issued at `now` in
    /// its ledger. Returns the reloads counted in the window ending at
    /// `now` and the allowance of its viewing tier at `now`.
    @inline(__always)
    private mutating func recordCounted(_ p: Int, at now: Double) -> (counted: Int, allowance: Int) {
        let counted = instances.recordCounted(p, at: now, window: configuration.budgetWindow)
        let steady = self.steady
        let viewTier = instances.withView(p) { steady.tier($0, at: now) }
        return (counted, steady.allowance(for: viewTier))
    }

    /// What every issue ends with: the request and location change it
    /// answers forgotten, the instance touched.
    @inline(__always)
    private mutating func didIssue(_ p: Int) {
        if instances[hot: p].hasRare {
            instances[p].request = nil
            instances[p].locationChangeAt = nil
        }
        touch(p)
    }

    mutating func complete(_ id: String, with outcome: ReloadOutcome, at time: Double) {
        observe(time)
        guard let p = position(of: id) else { return }
        complete(at: p, with: outcome, at: time)
    }

    mutating func complete(_ completions: [ReloadCompletion], at time: Double) {
        guard completions.count >= readAheadMinimum else {
            for completion in completions { complete(completion.instanceID, with: completion.outcome, at: time) }
            return
        }
        observe(time)
        var hashes = scratch.hashes
        var found = scratch.found
        scratch.hashes = []
        scratch.found = []
        hashes.removeAll(keepingCapacity: true)
        found.removeAll(keepingCapacity: true)
        // By index, through the buffer: iterating the array copied each
        // result (a retain and release of its timeline's parts).
        completions.withUnsafeBufferPointer { results in
            for i in results.indices { hashes.append(StableJitter.fnv1a64(results[i].instanceID)) }
            instances.names.withUnsafeBufferPointer { names in
                hashes.withUnsafeBufferPointer { index.readAhead($0, in: names) }
                for i in results.indices {
                    found.append(index.find(results[i].instanceID, hash: hashes[i], in: names) ?? Int.min)
                }
            }
            // Ids not found (rare) are left out of the reading ahead.
            let ahead = found.allSatisfy { $0 >= 0 } ? found : found.filter { $0 >= 0 }
            var readUpTo = 0
            var j = 0  // the index in `ahead` of the next found position
            for i in results.indices where found[i] >= 0 {
                readUpTo = readAhead(ahead, aheadOf: j, readUpTo: readUpTo, forIssue: false)
                j += 1
                complete(at: found[i], with: results[i].outcome, at: time)
            }
        }
        scratch.hashes = scratch.keeps(capacity: hashes.capacity) ? hashes : []
        scratch.found = scratch.keeps(capacity: found.capacity) ? found : []
    }

    mutating func complete(_ ticket: ReloadTicket, with outcome: ReloadOutcome, at time: Double) {
        observe(time)
        guard let p = position(of: ticket) else { return }
        complete(at: p, with: outcome, at: time)
    }

    mutating func complete(_ results: [TicketCompletion], at time: Double) {
        guard results.count >= readAheadMinimum, !instances.indices.isEmpty else {
            for result in results { complete(result.ticket, with: result.outcome, at: time) }
            return
        }
        // By index, through the buffer: iterating the array copied each
        // result (a retain and release of its timeline's parts). Only read.
        results.withUnsafeBufferPointer { complete(UnsafeMutableBufferPointer(mutating: $0), taking: false, at: time) }
    }

    mutating func complete(taking results: inout [TicketCompletion], at time: Double) {
        if results.count >= readAheadMinimum, !instances.indices.isEmpty {
            results.withUnsafeMutableBufferPointer { complete($0, taking: true, at: time) }
        } else {
            for result in results { complete(result.ticket, with: result.outcome, at: time) }
        }
        results.removeAll(keepingCapacity: true)
    }

    /// ``complete(_:at:)`` (of tickets) over `results`, read ahead a chunk
    /// at a time. With `taking`, each outcome is moved out of `results`
    /// (a timed-out one left in its place): a success's timeline goes to
    /// its instance with no copy retained, and none is left for the caller
    /// to release. Without it, `results` is only read.
    private mutating func complete(
        _ results: UnsafeMutableBufferPointer<TicketCompletion>, taking: Bool, at time: Double
    ) {
        observe(time)
        var ahead = scratch.found
        scratch.found = []
        ahead.removeAll(keepingCapacity: true)
        let count = instances.count
        // The positions as issued, to read ahead (a ticket whose
        // instance moved since is read where it was: a wasted read),
        // written in place.
        ahead.append(contentsOf: repeatElement(0, count: results.count))
        ahead.withUnsafeMutableBufferPointer { ahead in
            for i in results.indices {
                let p = Int(results[i].ticket.position)
                ahead[i] = p >= 0 && p < count ? p : 0
            }
        }
        var readUpTo = 0
        for i in results.indices {
            readUpTo = readAhead(ahead, aheadOf: i, readUpTo: readUpTo, forIssue: false)
            guard let p = position(of: results[i].ticket) else { continue }
            if taking {
                var outcome = ReloadOutcome.timedOut
                swap(&outcome, &results[i].outcome)
                switch consume outcome {
                case .success(let timeline): completeInline(at: p, with: timeline, at: time)
                case let other: complete(at: p, with: other, at: time)
                }
            } else if case .success(let timeline) = results[i].outcome {
                // A success's timeline taken out here, in place: passing the
                // outcome on copied it once more.
                complete(at: p, with: timeline, at: time)
            } else {
                complete(at: p, with: results[i].outcome, at: time)
            }
        }
        scratch.found = scratch.keeps(capacity: ahead.capacity) ? ahead : []
    }

    /// The position of the instance whose reload `ticket` names, nil when
    /// that reload is not in flight (completed, rolled back, the instance
    /// removed, the state replaced). Inlined: called from `mutating`
    /// methods, a non-mutating call copied the core's bytes (about 1 KB) to
    /// lend it, at every completion by ticket.
    @inline(__always)
    private func position(of ticket: ReloadTicket) -> Int? {
        let p = Int(ticket.position)
        let serial = ticket.serial
        guard serial > 0, p >= 0 else { return nil }
        if serial > serialAtLastMove {
            // No position moved since it was issued.
            return p < instances.count && inFlightSerial(at: p) == serial ? p : nil
        }
        // Removals move an instance down, never up: it is at `p` or below.
        var q = min(p, instances.count - 1)
        while q >= 0 {
            if inFlightSerial(at: q) == serial { return q }
            q -= 1
        }
        return nil
    }

    /// The serial number of the reload in flight at `p`, 0 if none.
    @inline(__always)
    private func inFlightSerial(at p: Int) -> UInt64 {
        instances.inFlightSerial(at: p)
    }

    func instance(of ticket: ReloadTicket) -> WidgetInstance? {
        position(of: ticket).map { instances[names: $0] }
    }

    func decision(for ticket: ReloadTicket) -> ReloadDecision? {
        position(of: ticket).map { decision(at: $0) }
    }

    func pluginAndKind(of ticket: ReloadTicket) -> (plugin: String, kind: String)? {
        let g = Int(ticket.group)
        guard g >= 0, g < groupNames.count else { return nil }
        return (groupNames[g].plugin, groupNames[g].kind)
    }

    /// How many instances are read ahead together, within a batch: a few,
    /// so that the lines asked for go out a few at a time between the
    /// work on instances, not hundreds at once. A prefetch that finds no
    /// free fill buffer waits, and everything after it: with 128 at a
    /// time, the work stopped while some 700 lines were asked for, then
    /// ran while nothing was on its way (step 24).
    static let readAheadChunk = 4
    /// How many chunks ahead of the work the second pass (the lines found
    /// through the first's: ledger times, timelines' entries, entry-queue
    /// links) is: 8-12 instances.
    static let readAheadLead = 2
    /// How many chunks ahead of the second pass the first is (16-20
    /// instances ahead of the work): the first pass's lines have that
    /// long to come before the second reads them.
    static let readAheadGap = 2

    /// Keeps the reading ahead over `positions` before the work, which
    /// takes `positions[i]` next, in a pipeline: `positions[..<readUpTo]`
    /// had both passes; when `i` comes within ``readAheadLead`` chunks of
    /// that end, the next chunk has its second pass, and the chunk
    /// ``readAheadGap`` chunks after it its first (at the start, the
    /// first pass of everything up to there). Returns the new end.
    /// The ledgers are read ahead for an issue (`forIssue`: a counted
    /// reload records itself in its ledger), not for a completion (a
    /// steady-state plan knows the ledger's count from the hot record,
    /// and a completion checks its ticket against the cold one).
    /// The reload queue's neighbours are not read ahead: a wakeup that
    /// issues every due reload (the usual one) empties its due buckets
    /// whole, and their nodes are the batch's own, read in the first pass;
    /// the instance of a completion has no place in the queue.
    private mutating func readAhead(
        _ positions: UnsafeBufferPointer<Int>, aheadOf i: Int, readUpTo: Int, forIssue: Bool
    ) -> Int {
        let chunk = Self.readAheadChunk
        let lead = Self.readAheadLead * chunk
        let gap = Self.readAheadGap * chunk
        guard i + lead >= readUpTo, readUpTo < positions.count else { return readUpTo }
        let start = readUpTo
        let end = min(positions.count, start + chunk)
        let linesFrom = start == 0 ? 0 : min(positions.count, start + gap)
        let linesTo = min(positions.count, end + gap)
        if linesFrom < linesTo {
            readAheadLines(UnsafeBufferPointer(rebasing: positions[linesFrom..<linesTo]), forIssue: forIssue)
        }
        readAheadReferenced(UnsafeBufferPointer(rebasing: positions[start..<end]), forIssue: forIssue)
        return end
    }

    /// ``readAhead(_:aheadOf:readUpTo:forIssue:)`` over an array. Its early
    /// exit (most calls) is repeated here, so that the array's buffer is
    /// asked for only when a chunk is read.
    private mutating func readAhead(_ positions: [Int], aheadOf i: Int, readUpTo: Int, forIssue: Bool) -> Int {
        guard i + Self.readAheadLead * Self.readAheadChunk >= readUpTo, readUpTo < positions.count else {
            return readUpTo
        }
        return positions.withUnsafeBufferPointer { readAhead($0, aheadOf: i, readUpTo: readUpTo, forIssue: forIssue) }
    }

    /// Reads ahead what the work on the instances at `positions` reads
    /// first: their lines (records and position numbers) and ledgers, their
    /// places in the queues. In passes: the first asks for the lines found
    /// from a position alone (the instance's two lines, queue nodes); each later
    /// one reads lines an earlier one asked for, to find the blocks they
    /// point to (ledgers, timelines' entries, neighbours in the entry
    /// queue), and asks for those. The lines of a pass are on their way
    /// together, where the work on one instance after another waited on
    /// each of its misses in turn. See ``ReadAhead``.
    ///
    /// `mutating` though it only reads: its callers are, and a non-mutating
    /// call from them copied the whole scheduler (936 bytes) to lend it.
    private mutating func readAhead(_ positions: UnsafeBufferPointer<Int>, forIssue: Bool) {
        readAheadLines(positions, forIssue: forIssue)
        readAheadReferenced(positions, forIssue: forIssue)
    }

    /// The first pass of ``readAhead(_:forIssue:)``: the lines found from
    /// a position alone.
    private mutating func readAheadLines(_ positions: UnsafeBufferPointer<Int>, forIssue: Bool) {
        // The positions are not negative (each caller's are instances'
        // positions, none issued yet), and the first pass only prefetches:
        // an address wrong by a bad position would do no harm.
        for p in positions {
            assert(p >= 0 && p < instances.count, "a read-ahead position out of range")
            instances.readAheadRecord(p, forIssue: forIssue)
            reloads.readAheadNode(p)
        }
    }

    /// The later passes of ``readAhead(_:forIssue:)``: the lines found
    /// through those the first pass asked for.
    private mutating func readAheadReferenced(_ positions: UnsafeBufferPointer<Int>, forIssue: Bool) {
        if forIssue { instances.readAheadReferenced(positions) }
        // None queued (the entry-less timelines of some plugins): no
        // position's flag to read.
        guard entryChanges.count > 0 else { return }
        let lines = instances.lines.unsafeBaseAddress
        entryChanges.readAheadLinks(positions) { InstanceLine.info(lines + $0).pointee.mayHaveEntryChange }
        if forIssue {
            entryChanges.readAheadNeighbours(positions) { InstanceLine.info(lines + $0).pointee.mayHaveEntryChange }
        }
    }

    /// ``complete(_:with:at:)`` for the instance at `p`.
    private mutating func complete(at p: Int, with outcome: ReloadOutcome, at time: Double) {
        switch outcome {
        case .success(let timeline): complete(at: p, with: timeline, at: time)
        case .failure(let text): completeWithoutTimeline(at: p, failure: text, retryAt: nil, at: time)
        case .timedOut: completeWithoutTimeline(at: p, failure: "timed out", retryAt: nil, at: time)
        case .notCalled(_, let retryAt): completeWithoutTimeline(at: p, failure: nil, retryAt: retryAt, at: time)
        }
    }

    /// `complete(at:with:at:)` (of an outcome) for a reload that brought no
    /// timeline; the last good one is kept, and the request (or the
    /// policy's due time) waits again. A `failure` counts and retries with
    /// backoff. A reload never called (`failure` nil) gives its charge
    /// back to the instance's ledger it was taken from (a counted or push
    /// reload's), counts no failure, and is held until `retryAt` (the
    /// backoff's field carries the hold; the last failure is left as it
    /// was).
    private mutating func completeWithoutTimeline(at p: Int, failure reason: String?, retryAt: Double?, at time: Double)
    {
        guard instances.withView(p, { $0.isInFlight }) else { return }
        willChange(p)
        touch(p)
        var s = instances[p]
        let flight = s.inFlightRecord!
        s.inFlight = nil
        if let reason {
            s.consecutiveFailures += 1
            let retry = time + configuration.backoff(afterFailures: s.consecutiveFailures)
            s.backoffUntil = retry
            s.lastFailure = FailureRecord(
                time: time, reason: reason, consecutiveFailures: s.consecutiveFailures, retryAt: retry)
        } else {
            // The instance's own charges only: the host-wide cap on free
            // reloads limits how often they are tried, called or not (and
            // giving a slot back would move other instances' capped plans
            // earlier, which their queued times never do).
            switch flight.charge {
            case .counted: s.ledger.forget(flight.time)
            case .free(.push): s.pushLedger.forget(flight.time)
            case .free: break
            }
            let until = retryAt.map { $0.isFinite ? max($0, time) : time } ?? time
            s.backoffUntil = max(until, s.backoffUntil ?? until)
        }
        if flight.trigger != .policy {
            let again = PendingRequest(trigger: flight.trigger, charge: flight.charge, requestedAt: flight.dueSince)
            if s.request.map({ $0.isReplaced(by: again) }) ?? true { s.request = again }
        } else if s.policyDue == nil {
            s.policyDue = flight.dueSince
        }
        instances[p] = s
        replan(p)
        replanEntry(p)
    }

    mutating func endHold(of id: String, at time: Double) {
        observe(time)
        guard let p = position(of: id), let until = instances.withView(p, { $0.backoffUntil }), until > time else {
            return
        }
        let failures = instances.withView(p) { $0.consecutiveFailures }
        let retry = failures > 0 ? instances[p].lastFailure?.retryAt : nil
        guard retry.map({ $0 < until }) ?? true else { return }
        willChange(p)
        touch(p)
        instances[p].backoffUntil = retry
        replan(p)
    }

    /// `complete(at:with:at:)` (of an outcome) for a success:
    /// `timeline` is moved into the instance's record (the one copy made
    /// of it, where the outcome was copied twice on the way).
    private mutating func complete(at p: Int, with timeline: consuming TimelineRecord, at time: Double) {
        completeInline(at: p, with: timeline, at: time)
    }

    /// ``complete(at:with:at:)`` (of a timeline), inlined where a batch's
    /// results are taken.
    @inline(__always)
    private mutating func completeInline(at p: Int, with timeline: consuming TimelineRecord, at time: Double) {
        guard instances.withView(p, { $0.isInFlight }) else { return }
        willChange(p)
        touch(p)
        // In place, field by field: no copy of the instance's state.
        let due = steady.policyDue(for: timeline, jitterFraction: instances[info: p].jitterFraction, receivedAt: time)
        let hasEntries = !timeline.entries.isEmpty
        instances.recordSuccess(p, timeline: timeline, at: time, policyDue: due)
        if instances[hot: p].hasRare { clearFailures(p) }
        replanInline(p)
        // An entry-less timeline replacing one with no entry change queued
        // leaves the entry queue as it is: what `replanEntry` would find
        // (its timeline read back from the record), known here.
        if hasEntries || instances[info: p].mayHaveEntryChange || tracksDisplayChanges { replanEntryInline(p) }
    }

    /// A success's end of the backoff and of the last failure, for an
    /// instance with rare values (out of line: it reads and writes the
    /// whole state).
    @inline(never)
    private mutating func clearFailures(_ p: Int) {
        instances[p].backoffUntil = nil
        instances[p].lastFailure = nil
    }

    // MARK: Display

    func displayedEntry(of id: String, at time: Double) -> EntryRecord? {
        position(of: id).flatMap { instances[cold: $0].timeline?.entry(at: time) }
    }

    func nextEntryChange(of id: String, after time: Double) -> Double? {
        position(of: id).flatMap { instances[cold: $0].timeline?.entries.first(where: { $0.date > time })?.date }
    }

    func relevanceScore(of id: String, at time: Double) -> Double {
        guard let p = position(of: id) else { return 0 }
        return instances.withView(p) { Self.relevanceScore(of: $0.cold.pointee.timeline, at: time) }
    }

    /// The relevance score in force at `time` of `timeline`'s displayed entry.
    static func relevanceScore(of timeline: TimelineRecord?, at time: Double) -> Double {
        guard let entry = timeline?.entry(at: time), let relevance = entry.relevance, time >= entry.date
        else { return 0 }
        if relevance.duration > 0 && time >= entry.date + relevance.duration { return 0 }
        return max(0, relevance.score)
    }

    func topOfStack(_ ids: [String], at time: Double) -> String? {
        var best: (id: String, score: Double)?
        for id in ids where position(of: id) != nil {
            let score = relevanceScore(of: id, at: time)
            if best == nil || score > best!.score { best = (id, score) }
        }
        return best?.id
    }

    // MARK: Explain

    func explain(_ id: String, at time: Double) -> ReloadExplanation? {
        guard let p = position(of: id) else { return nil }
        let s = instances[p]
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
            lastFailure: s.lastFailure, next: plan(s, at: time), pushAllowance: configuration.pushAllowance,
            pushesInWindow: s.pushLedger.count(at: time, window: configuration.budgetWindow),
            pushAvailableAt: s.pushLedger.nextAllowed(
                from: time, limit: configuration.pushAllowance, window: configuration.budgetWindow))
    }

}

// MARK: A shard of a sharded engine

/// What ``ShardSet`` asks of each of its cores: the batch time's parts,
/// which it reduces over every shard (the batch time is the union's), and
/// the issue split from the gate, so that the set decides when a batch is
/// due and in which order the shards issue (every call that takes a time
/// reaches every shard first, through ``observeTime(_:)``).
extension SchedulerCore {
    /// Moves `latestTime` forward to `time` (``observe(_:)``).
    mutating func observeTime(_ time: Double) { observe(time) }

    /// The earliest time queued in the reload queue (infinity: none).
    var earliestQueuedReload: Double { reloads.minimumKey }

    /// The earliest recheck queued (infinity: none).
    var earliestRecheck: Double { rechecks.minimumKey }

    /// The earliest entry change queued (infinity: none).
    var earliestEntryChange: Double { entryChanges.minimumKey }

    /// How many groups (plugin and kind) this core has numbered.
    var groupCount: Int { groupNames.count }

    /// The plugin and kind of a group this core numbered.
    func groupName(_ group: Int) -> (plugin: String, kind: String) {
        (groupNames[group].plugin, groupNames[group].kind)
    }

    /// Takes the host-wide free-reload ledger as it is after another shard
    /// recorded in it. Longer than this core's, it can only move plans
    /// under its cap later: the queued times stay no later than the truth.
    mutating func adoptFreeLedger(_ ledger: RollingLedger) { freeLedger = ledger }

    /// Positions moved in another shard (an instance removed): the
    /// tickets issued until now are looked for below the position given.
    mutating func positionsMoved() { serialAtLastMove = issuedSerial }

    /// This shard's first plan of greedy batching (``firstPlan(_:slack:now:)``).
    mutating func batchFirst(now: Double) -> (time: Double, latest: Double)? {
        guard reloads.minimumKey < .infinity else { return nil }
        let slack = max(0, configuration.coalescingCap)
        return withQueuedPlans(now: now) { Self.firstPlan($0, slack: slack, now: now) }
    }

    /// This shard's plans within `deadline` (``plansWithin(_:deadline:walked:found:asQueued:)``).
    /// The keys walked are kept, as ``coalescedWake(now:)`` keeps them, for
    /// ``acceptWake(_:)``.
    mutating func batchWithin(deadline: Double, now: Double) -> (earliestDeadline: Double, latestTime: Double) {
        scratch.walkedWake = .nan
        // Kept with no batch time yet (-infinity): set by acceptWake.
        return keepingWalk(
            now: now, wake: { _ in -.infinity },
            walk: { queued, walked, found, asQueued in
                Self.plansWithin(queued, deadline: deadline, walked: walked, found: &found, asQueued: &asQueued)
            })
    }

    /// This shard's latest plan within `bound` (``latestPlan(_:upTo:)``).
    mutating func batchLatest(upTo bound: Double, now: Double) -> Double {
        withQueuedPlans(now: now) { Self.latestPlan($0, upTo: bound) }
    }

    /// The batch time the set found over every shard: the keys
    /// ``batchWithin(deadline:now:)`` walked (up to a deadline at or after
    /// it) hold every reload of this shard due by then.
    mutating func acceptWake(_ wake: Double) {
        if scratch.walkedWake == -.infinity { scratch.walkedWake = wake }
    }

    /// Whether the last walk holds every reload of this shard due by `now`
    /// (the set found `now` as the batch time, and the queue is as it was).
    func walkHoldsDue(at now: Double) -> Bool {
        now == scratch.walkedWake && reloads.changes == scratch.walkedChanges
    }

    /// This shard's positions queued by `now`, ascending, in `due`
    /// (emptied first), from the last walk when it holds them. The set
    /// has found the batch due (the gate is the union's).
    mutating func collectDue(at now: Double, into due: inout [Int]) {
        if !due.isEmpty { due.removeAll(keepingCapacity: true) }
        if walkHoldsDue(at: now) {
            appendWalked(upTo: now, into: &due)
        } else {
            reloads.collect(upTo: now, into: &due)
        }
        prepare(&due)
    }

    /// Issues the reloads of `due` (this shard's positions queued by `now`,
    /// ascending), at most `limit`: ``issue(_:all:at:limit:asPlannedOnly:into:)``.
    /// Returns how many were issued and how many were left (moved to the
    /// front of `due`): with `asPlannedOnly`, those made by every rule that
    /// may touch the free-reload ledger, and those found not due after all;
    /// not due after all, with `leavesNotIssued`.
    mutating func issueShard(
        _ due: UnsafeMutableBufferPointer<Int>, all: Bool, at now: Double, limit: Int, asPlannedOnly: Bool,
        leavesNotIssued: Bool = false, into tickets: inout [ReloadTicket]
    ) -> (issued: Int, left: Int) {
        let result = issue(
            due, all: all, at: now, limit: limit, asPlannedOnly: asPlannedOnly, leavesNotIssued: leavesNotIssued,
            into: &tickets)
        return (result.issued, result.left)
    }

    /// Plans the instances at `positions` again (those a wakeup's issue
    /// left, ``issueShard(_:all:at:limit:asPlannedOnly:leavesNotIssued:into:)``).
    mutating func replan(positions: [Int]) {
        for p in positions { replan(p) }
    }

    /// The decision of the reload in flight at `p` (``decision(at:)``).
    func decision(atPosition p: Int) -> ReloadDecision { decision(at: p) }

    /// Under a journal, keeps the whole core as it was at
    /// ``beginJournal()`` from now on (``journalWhole()``): every shard
    /// does so when one of them would, so that a rollback puts every shard
    /// back to the same moment.
    mutating func journalWholeNow() { journalWhole() }

    /// Completes this shard's results among `results` (a ``ShardSet``'s
    /// batch, its tickets the set's: the shard's own serial in the bits
    /// above the low `bits`), those at `indices`, taking their outcomes;
    /// another shard's thread takes the others meanwhile. A ticket's
    /// position here is that of `recent`'s serials (the last wakeup's, by
    /// serial), else the global one mapped through `places` (at or above
    /// it: the instance is looked for below it when positions moved). Read
    /// ahead as ``complete(_:taking:at:)`` reads.
    mutating func completeShard(
        _ results: UnsafeMutableBufferPointer<TicketCompletion>, indices: UnsafeBufferPointer<Int32>, shard: Int,
        bits: UInt64, places: UnsafeBufferPointer<ShardPlace>,
        recent: (base: UInt64, locals: UnsafeBufferPointer<Int32>), at time: Double
    ) {
        observe(time)
        // No instance: no ticket of this shard names a reload in flight.
        guard !instances.indices.isEmpty else { return }
        var ahead = scratch.found
        scratch.found = []
        ahead.removeAll(keepingCapacity: true)
        let count = instances.count
        // The shard's own ticket of a set's ticket.
        @inline(__always) func own(_ ticket: ReloadTicket) -> ReloadTicket {
            let serial = ticket.serial >> bits
            let k = serial &- recent.base
            if k < UInt64(recent.locals.count) {
                return ReloadTicket(position: recent.locals[Int(k)], group: 0, serial: serial)
            }
            let local = ShardPlace.local(below: Int(ticket.position), in: places, shard: Int32(shard))
            return ReloadTicket(position: local, group: 0, serial: serial)
        }
        // The positions as issued, to read ahead (one no longer there, after
        // a removal or a rollback, read as position 0: a wasted read).
        ahead.append(contentsOf: repeatElement(0, count: indices.count))
        ahead.withUnsafeMutableBufferPointer { ahead in
            for j in indices.indices {
                let p = Int(own(results[Int(indices[j])].ticket).position)
                ahead[j] = p >= 0 && p < count ? p : 0
            }
        }
        var readUpTo = 0
        for j in indices.indices {
            let i = Int(indices[j])
            readUpTo = readAhead(ahead, aheadOf: j, readUpTo: readUpTo, forIssue: false)
            guard let p = position(of: own(results[i].ticket)) else { continue }
            // Taken as ``complete(_:taking:at:)`` takes it: no copy retained.
            // (Through the call that is not inlined: a third place inlining
            // `completeInline` had it left out of line in the other two,
            // the one-shard path's, 21 more instructions per reload.)
            var outcome = ReloadOutcome.timedOut
            swap(&outcome, &results[i].outcome)
            switch consume outcome {
            case .success(let timeline): complete(at: p, with: timeline, at: time)
            case let other: complete(at: p, with: other, at: time)
            }
        }
        scratch.found = scratch.keeps(capacity: ahead.capacity) ? ahead : []
    }

    /// How many keys the last batch-time walk found (a wakeup's size, to
    /// decide whether its parts are worth handing to other threads).
    var walkedCount: Int { scratch.walkedCount }

    /// ``readAheadComing()``, after a shard's wakeup.
    mutating func readAheadComingReloads() { readAheadComing() }
}
