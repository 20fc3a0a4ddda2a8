import WidgetHostModel

/// The engine behind ``ReloadScheduler``: its instances dealt out among K
/// ``SchedulerCore``s (*shards*), K from 1 to ``ShardSet/maximumShards``.
/// With one shard every call goes straight to it, as it did before shards
/// existed.
///
/// With more, the set keeps what one engine's answers depend on across
/// instances, so that they are exactly one engine's for any K (the same
/// positions, tickets, reloads, batches and reports; checked by running the
/// oracle comparison and the property tests at K = 2 and 3):
///
/// * **Positions.** Global positions are dense, in the order instances
///   were added; each names a shard and a position in it (``ShardPlace``),
///   and each shard's positions map back. A shard's order is the global
///   order restricted to it, so merging shards by global position keeps
///   every order (status paging, `instanceIDs`, pushes, display changes).
///   A removal moves later instances down, globally and in their shard.
/// * **Host-wide state.** Every shard holds the same apps, configuration,
///   time and free-reload ledger: host-wide events reach every shard, and
///   every call that takes a time moves every shard's time first. Only
///   issuing a free reload under the host-wide cap writes the ledger; a
///   wakeup with such a reload due issues in global order, shard run by
///   shard run, each run's ledger handed to the other shards after it (a
///   longer ledger only moves their plans under the cap later, which a
///   queued time allows). So does a wakeup with a `limit` below its due
///   reloads: the first `limit` in global order.
/// * **The batch time is the union's.** Greedy batching over every shard's
///   plans reduces to minima and maxima over the shards: the first plan,
///   then the earliest deadline and latest time within its deadline, then,
///   when they disagree, the latest time within that deadline
///   (``SchedulerCore/batchFirst(now:)`` and the two after it). The
///   minimum of each shard's own batch time would be wrong: plans A =
///   (0, deadline 10) and B = (5, 6), (6, 100) wake one engine at 6.
/// * **Tickets.** A ticket's position is global, its group the set's (one
///   per plugin and kind, numbered in the order first added, as one
///   engine numbers them), and its serial the shard's serial with the
///   shard's number in its low ``shardBits`` bits (unique in the
///   scheduler's life, as before). A wakeup's tickets are merged by the
///   groups' order, then global position: one engine's order. Each shard's
///   thread puts its own in that order; with two shards each thread then
///   merges half of them (``ShardRun``).
///
/// Not copyable: ``clone()`` copies, as ``SchedulerCore`` does.
struct ShardSet: ~Copyable, @unchecked Sendable {
    /// The most shards a set holds: a ticket's serial keeps the shard in
    /// its low ``shardBits`` bits.
    static let maximumShards = 8
    static let shardBits: UInt64 = 3

    /// How many shards: 1 to ``maximumShards``.
    let count: Int
    /// How many consecutive positions go to one shard before the next
    /// (``shard(forPosition:)``).
    let run: Int
    /// The shards, `count` of them, owned by the set.
    let cores: UnsafeMutablePointer<SchedulerCore>
    /// By global position: the shard and the position in it (K > 1 only).
    private var places: [ShardPlace] = []
    /// Per shard, by its position: the global position (K > 1 only).
    private var globals: [[Int32]]
    /// The groups (plugin and kind) as one engine numbers them (K > 1 only).
    private var groups = ShardGroups()
    /// The positions and groups as they were at the first move under a
    /// journal (an instance added or removed, the state replaced), put
    /// back by ``rollBackJournal()``.
    private var saved: (places: [ShardPlace], globals: [[Int32]], groups: ShardGroups)?
    /// Per shard: what its part of a wakeup works on (K > 1).
    private let lanes: UnsafeMutablePointer<ShardLane>
    /// One thread per shard but the first (the caller's thread runs it),
    /// taken from the process's pool at the first wakeup large enough to
    /// share, given back when the set ends.
    private var workers: [ShardWorker] = []
    /// Below this many due reloads (or results) a wakeup's parts run on the
    /// caller's thread, one shard after another: handing them over costs
    /// more than they take. (64 read 1.03× 256 by the median of 28 rounds
    /// at 100,000 instances, two shards, 2026-12-04.)
    var parallelMinimum = 64
    /// Positions reused by ``takeDisplayChanges(into:causes:)``.
    private var positions: [Int] = []

    init(configuration: SchedulerConfiguration, state: SchedulerState, shards: Int, run: Int = 64) {
        precondition(shards >= 1 && shards <= Self.maximumShards, "shards must be 1 to \(Self.maximumShards)")
        count = shards
        self.run = max(1, run)
        cores = .allocate(capacity: shards)
        globals = Array(repeating: [], count: shards)
        lanes = .allocate(capacity: shards)
        if shards == 1 {
            cores.initialize(to: SchedulerCore(configuration: configuration, state: state))
        } else {
            for (s, part) in split(state).enumerated() {
                (cores + s).initialize(to: SchedulerCore(configuration: configuration, state: part))
            }
            numberGroups(of: state)
        }
        for s in 0..<shards { (lanes + s).initialize(to: ShardLane(core: cores + s, shard: s)) }
    }

    private init(cloning other: borrowing ShardSet) {
        count = other.count
        run = other.run
        cores = .allocate(capacity: other.count)
        for s in 0..<other.count { (cores + s).initialize(to: other.cores[s].clone()) }
        places = other.places
        globals = other.globals
        groups = other.groups
        saved = other.saved
        parallelMinimum = other.parallelMinimum
        lanes = .allocate(capacity: other.count)
        for s in 0..<other.count { (lanes + s).initialize(to: ShardLane(core: cores + s, shard: s)) }
    }

    deinit {
        ShardWorkerPool.shared.give(workers)
        lanes.deinitialize(count: count)
        lanes.deallocate()
        cores.deinitialize(count: count)
        cores.deallocate()
    }

    /// Whether the last batch-time walk found at least ``parallelMinimum``
    /// reloads over every shard: the size of a wakeup, known before it.
    private var isLarge: Bool {
        var walked = 0
        for s in 0..<count { walked += cores[s].walkedCount }
        return walked >= parallelMinimum
    }

    /// Runs `job` for every shard, shard 0 on this thread and each other on
    /// its worker (taken the first time), and returns when all are done;
    /// with `parallel` false, or without the workers, one after another on
    /// this thread.
    private mutating func everyShard(_ job: ShardJob, parallel: Bool) {
        guard parallel else {
            for s in 0..<count { job(UnsafeMutableRawPointer(lanes + s)) }
            return
        }
        if workers.isEmpty { workers = ShardWorkerPool.shared.take(count - 1) }
        guard workers.count == count - 1 else {
            // The system would not start a thread (a host's limit, not an
            // error of the scheduler's): this wakeup on this thread, and
            // the threads asked for again at the next.
            ShardWorkerPool.shared.give(workers)
            workers = []
            for s in 0..<count { job(UnsafeMutableRawPointer(lanes + s)) }
            return
        }
        // Two posters must never share a worker (each would wait for the
        // other's job): a caller that finds one taken runs its shards on
        // its own thread. (Copies sharing this set, asking `nextWakeup()`
        // on two threads at once, still write the same scratch, as one
        // engine's copies always did: `nextWakeup()` says so.)
        var claimed = 0
        while claimed < workers.count && workers[claimed].claim() { claimed += 1 }
        guard claimed == workers.count else {
            for worker in workers[..<claimed] { worker.release() }
            for s in 0..<count { job(UnsafeMutableRawPointer(lanes + s)) }
            return
        }
        for s in 1..<count { workers[s - 1].post(job, UnsafeMutableRawPointer(lanes + s)) }
        job(UnsafeMutableRawPointer(lanes))
        for worker in workers {
            worker.wait()
            worker.release()
        }
    }

    /// A copy of this set: every shard cloned.
    func clone() -> ShardSet { ShardSet(cloning: self) }

    // MARK: Positions and groups

    /// `state`'s instances dealt out (``shard(forPosition:)``), the places
    /// and back-maps made; every part with the host-wide state.
    private mutating func split(_ state: SchedulerState) -> [SchedulerState] {
        var parts = (0..<count).map { _ in
            var part = SchedulerState()
            part.apps = state.apps
            part.freeLedger = state.freeLedger
            part.now = state.now
            return part
        }
        places = []
        places.reserveCapacity(state.instances.count)
        globals = Array(repeating: [], count: count)
        for (g, instance) in state.instances.enumerated() {
            let s = shard(forPosition: g)
            places.append(ShardPlace(shard: Int32(s), local: Int32(parts[s].instances.count)))
            globals[s].append(Int32(g))
            parts[s].instances.append(instance)
        }
        return parts
    }

    /// The shard an instance added at global `position` goes to: runs of
    /// ``run`` positions dealt out in turn, so that a batch's results of
    /// one shard lie together (each shard's thread takes its own out of
    /// the batch: results of two shards in one cache line would have both
    /// threads write it).
    private func shard(forPosition position: Int) -> Int { position / run % count }

    /// The groups of `state`'s instances numbered in global order (as one
    /// engine enters them), then each shard's numbers mapped to them.
    private mutating func numberGroups(of state: SchedulerState) {
        for instance in state.instances {
            _ = groups.number(plugin: instance.instance.plugin, kind: instance.instance.kind)
        }
        for s in 0..<count { mapGroups(of: s) }
    }

    /// The set's number of each group shard `s` numbered since last asked.
    private mutating func mapGroups(of s: Int) {
        let numbered = cores[s].groupCount
        while groups.ofShard[s].count < numbered {
            let name = cores[s].groupName(groups.ofShard[s].count)
            groups.ofShard[s].append(groups.number(plugin: name.plugin, kind: name.kind))
        }
    }

    /// The shard and its position of the instance `id`.
    private func find(_ id: String) -> (shard: Int, local: Int)? {
        for s in 0..<count {
            if let p = cores[s].instancePosition(of: id) { return (s, p) }
        }
        return nil
    }

    /// The shard and its position at global `position` (in range).
    @inline(__always)
    private func place(_ position: Int) -> (shard: Int, local: Int) {
        let place = places[position]
        return (Int(place.shard), Int(place.local))
    }

    /// Before positions move under a journal: the positions and groups
    /// saved, and every shard keeps its whole self as it was (one engine
    /// does, and its rollback then puts its time back to this moment too).
    private mutating func willMove() {
        guard cores[0].isJournaling else { return }
        if saved == nil { saved = (places, globals, groups) }
        for s in 0..<count { cores[s].journalWholeNow() }
    }

    // MARK: Configuration and state

    var configuration: SchedulerConfiguration {
        get { cores[0].configuration }
        set {
            for s in 0..<count { cores[s].configuration = newValue }
        }
    }

    var state: SchedulerState {
        guard count > 1 else { return cores[0].state }
        var state = SchedulerState()
        state.instances = places.map { cores[Int($0.shard)].instanceState(at: Int($0.local)) }
        state.apps = cores[0].apps
        state.freeLedger = cores[0].freeLedger
        state.now = cores[0].latestTime
        return state
    }

    var apps: [String: AppState] { cores[0].apps }
    var freeLedger: RollingLedger { cores[0].freeLedger }
    var latestTime: Double? { cores[0].latestTime }

    var touched: Set<String> {
        guard count > 1 else { return cores[0].touched }
        return (0..<count).reduce(into: Set<String>()) { $0.formUnion(cores[$1].touched) }
    }

    var tracksTouched: Bool {
        get { cores[0].tracksTouched }
        set {
            for s in 0..<count { cores[s].tracksTouched = newValue }
        }
    }

    var tracksDisplayChanges: Bool {
        get { cores[0].tracksDisplayChanges }
        set {
            for s in 0..<count { cores[s].tracksDisplayChanges = newValue }
        }
    }

    var readAheadMinimum: Int {
        get { cores[0].readAheadMinimum }
        set {
            for s in 0..<count { cores[s].readAheadMinimum = newValue }
        }
    }

    var comingReadAheadMinimum: Int {
        get { cores[0].comingReadAheadMinimum }
        set {
            for s in 0..<count { cores[s].comingReadAheadMinimum = newValue }
        }
    }

    var walksReused: Int { (0..<count).reduce(0) { $0 + cores[$1].walksReused } }

    mutating func takeDisplayChanges(into positions: inout [Int], causes: DisplayChangeCauses) {
        guard count > 1 else { return cores[0].takeDisplayChanges(into: &positions, causes: causes) }
        let start = positions.count
        for s in 0..<count {
            var local = self.positions
            local.removeAll(keepingCapacity: true)
            cores[s].takeDisplayChanges(into: &local, causes: causes)
            for p in local { positions.append(Int(globals[s][p])) }
            self.positions = local
        }
        // Each shard's are once each: so are the set's, merged.
        positions[start...].sort()
    }

    mutating func takeTouched() -> Set<String> {
        guard count > 1 else { return cores[0].takeTouched() }
        return (0..<count).reduce(into: Set<String>()) { $0.formUnion(cores[$1].takeTouched()) }
    }

    // MARK: Undo

    mutating func beginJournal() {
        for s in 0..<count { cores[s].beginJournal() }
        saved = nil
    }

    var isJournaling: Bool { cores[0].isJournaling }

    mutating func endJournal() {
        for s in 0..<count { cores[s].endJournal() }
        saved = nil
    }

    mutating func rollBackJournal() {
        for s in 0..<count { cores[s].rollBackJournal() }
        if let saved { (places, globals, groups) = saved }
        saved = nil
    }

    func instanceStateBeforeJournal(_ id: String) -> InstanceState? {
        for s in 0..<count {
            if let state = cores[s].instanceStateBeforeJournal(id) { return state }
        }
        return nil
    }

    mutating func replaceState(_ newState: SchedulerState) {
        guard count > 1 else { return cores[0].replaceState(newState) }
        willMove()
        for (s, part) in split(newState).enumerated() { cores[s].replaceState(part) }
        numberGroups(of: newState)
    }

    // MARK: Instances

    mutating func add(_ instance: WidgetInstance, at time: Double) -> Bool {
        guard count > 1 else { return cores[0].add(instance, at: time) }
        guard find(instance.id) == nil else { return false }
        willMove()
        observe(time)
        let s = shard(forPosition: places.count)
        guard cores[s].add(instance, at: time) else { return false }
        places.append(ShardPlace(shard: Int32(s), local: Int32(globals[s].count)))
        globals[s].append(Int32(places.count - 1))
        mapGroups(of: s)
        return true
    }

    mutating func remove(_ id: String) -> Bool {
        guard count > 1 else { return cores[0].remove(id) }
        guard let (s, local) = find(id) else { return false }
        willMove()
        guard cores[s].remove(id) else { return false }
        let g = Int32(globals[s][local])
        places.remove(at: Int(g))
        globals[s].remove(at: local)
        for t in 0..<count {
            globals[t].withUnsafeMutableBufferPointer { back in
                for i in back.indices where back[i] > g { back[i] -= 1 }
            }
            // Tickets of the other shards are looked for below the
            // position given, as their global positions moved.
            if t != s { cores[t].positionsMoved() }
        }
        for i in Int(g)..<places.count where places[i].shard == Int32(s) { places[i].local -= 1 }
        return true
    }

    func instanceState(_ id: String) -> InstanceState? {
        guard count > 1 else { return cores[0].instanceState(id) }
        return find(id).map { cores[$0.shard].instanceState(at: $0.local) }
    }

    var instanceCount: Int { count > 1 ? places.count : cores[0].instanceCount }

    func instancePosition(of id: String) -> Int? {
        guard count > 1 else { return cores[0].instancePosition(of: id) }
        return find(id).map { Int(globals[$0.shard][$0.local]) }
    }

    func instance(at position: Int) -> WidgetInstance {
        guard count > 1 else { return cores[0].instance(at: position) }
        let (s, p) = place(position)
        return cores[s].instance(at: p)
    }

    func forEachInstance(_ body: (_ position: Int, _ instance: WidgetInstance) throws -> Void) rethrows {
        guard count > 1 else { return try cores[0].forEachInstance(body) }
        for position in places.indices { try body(position, instance(at: position)) }
    }

    func instanceCounts() -> InstanceCounts {
        guard count > 1 else { return cores[0].instanceCounts() }
        var counts = InstanceCounts()
        for s in 0..<count {
            let part = cores[s].instanceCounts()
            counts.instances += part.instances
            counts.visible += part.visible
            counts.inFlight += part.inFlight
            counts.failing += part.failing
        }
        return counts
    }

    func relevanceScores(at time: Double) -> [Double] {
        guard count > 1 else { return cores[0].relevanceScores(at: time) }
        var scores = [Double](repeating: 0, count: places.count)
        for s in 0..<count {
            for (p, score) in cores[s].relevanceScores(at: time).enumerated() { scores[Int(globals[s][p])] = score }
        }
        return scores
    }

    func instanceState(at position: Int) -> InstanceState {
        guard count > 1 else { return cores[0].instanceState(at: position) }
        let (s, p) = place(position)
        return cores[s].instanceState(at: p)
    }

    func isVisible(at position: Int) -> Bool {
        guard count > 1 else { return cores[0].isVisible(at: position) }
        let (s, p) = place(position)
        return cores[s].isVisible(at: p)
    }

    var flightsInTable: Int { (0..<count).reduce(0) { $0 + cores[$1].flightsInTable } }

    func isInFlight(at position: Int) -> Bool {
        guard count > 1 else { return cores[0].isInFlight(at: position) }
        let (s, p) = place(position)
        return cores[s].isInFlight(at: p)
    }

    func consecutiveFailures(at position: Int) -> Int {
        guard count > 1 else { return cores[0].consecutiveFailures(at: position) }
        let (s, p) = place(position)
        return cores[s].consecutiveFailures(at: p)
    }

    mutating func reconfigure(_ id: String, as widget: WidgetInstance, at time: Double) -> Bool {
        guard count > 1 else { return cores[0].reconfigure(id, as: widget, at: time) }
        guard let (s, local) = find(id) else { return false }
        let old = cores[s].instance(at: local)
        let replaces =
            widget.id == id
            && (old.app != widget.app || old.kind != widget.kind || old.plugin != widget.plugin
                || old.usesLocation != widget.usesLocation)
        // The shard replaces its state (one engine replaces its whole
        // state): every shard keeps its whole self from here.
        if replaces { willMove() }
        let changed = cores[s].reconfigure(id, as: widget, at: time)
        if changed && replaces {
            // As one engine's replaced state: every reload in flight
            // elsewhere is no longer its ticket's, every position planned
            // and entered again (display changes included).
            for t in 0..<count where t != s { cores[t].replaceState(cores[t].state) }
        }
        mapGroups(of: s)
        return changed
    }

    var recordsAreInStep: Bool { (0..<count).allSatisfy { cores[$0].recordsAreInStep } }

    var instanceIDs: [String] {
        guard count > 1 else { return cores[0].instanceIDs }
        var ids: [String] = []
        ids.reserveCapacity(places.count)
        forEachInstance { _, instance in ids.append(instance.id) }
        return ids
    }

    func getCurrentConfigurations(app: String?) -> [WidgetInfo] {
        guard count > 1 else { return cores[0].getCurrentConfigurations(app: app) }
        var infos: [WidgetInfo] = []
        forEachInstance { _, i in
            guard app == nil || i.app == app else { return }
            infos.append(
                WidgetInfo(
                    id: i.id, plugin: i.plugin, kind: i.kind, family: i.family, configuration: i.configuration,
                    app: i.app))
        }
        return infos
    }

    // MARK: Events

    /// Moves every shard's time to `time` (each shard's own call does so
    /// only for itself).
    private mutating func observe(_ time: Double) {
        for s in 0..<count { cores[s].observeTime(time) }
    }

    mutating func handle(_ event: SchedulerEvent, at time: Double) {
        guard count > 1 else { return cores[0].handle(event, at: time) }
        observe(time)
        switch event {
        case .instanceShown(let id), .instanceHidden(let id), .appIntent(let id):
            if let (s, _) = find(id) { cores[s].handle(event, at: time) }
        case .appForeground, .appBackground, .sessionStarted, .sessionEnded, .systemChange,
            .significantLocationChange, .reloadTimelines, .reloadAllTimelines, .push:
            for s in 0..<count { cores[s].handle(event, at: time) }
        }
    }

    mutating func push(kind: String, plugin: String?, at time: Double) -> [PushDecision] {
        guard count > 1 else { return cores[0].push(kind: kind, plugin: plugin, at: time) }
        observe(time)
        var decisions: [(position: Int32, decision: PushDecision)] = []
        for s in 0..<count {
            for decision in cores[s].push(kind: kind, plugin: plugin, at: time) {
                guard let p = cores[s].instancePosition(of: decision.instanceID) else { continue }
                decisions.append((globals[s][p], decision))
            }
        }
        return decisions.sorted { $0.position < $1.position }.map(\.decision)
    }

    func appCharge(_ app: String) -> ReloadCharge { cores[0].appCharge(app) }

    mutating func endHold(of id: String, at time: Double) {
        guard count > 1 else { return cores[0].endHold(of: id, at: time) }
        observe(time)
        if let (s, _) = find(id) { cores[s].endHold(of: id, at: time) }
    }

    // MARK: Reading one instance

    /// `body` on the shard that holds `id`; nil when none does.
    private func onShard<R>(of id: String, _ body: (borrowing SchedulerCore) -> R?) -> R? {
        guard count > 1 else { return body(cores[0]) }
        for s in 0..<count where cores[s].instancePosition(of: id) != nil { return body(cores[s]) }
        return nil
    }

    func tier(of id: String, at time: Double) -> ViewTier? {
        onShard(of: id) { $0.tier(of: id, at: time) }
    }

    func allowance(of id: String, at time: Double) -> Int? {
        onShard(of: id) { $0.allowance(of: id, at: time) }
    }

    func policyDue(for timeline: TimelineRecord, instanceID: String, receivedAt time: Double) -> Double? {
        cores[0].policyDue(for: timeline, instanceID: instanceID, receivedAt: time)
    }

    func plannedReload(of id: String, at time: Double) -> PlannedReload? {
        onShard(of: id) { $0.plannedReload(of: id, at: time) }
    }

    func queuedReload(of id: String) -> (time: Double, latest: Double)? {
        onShard(of: id) { $0.queuedReload(of: id) }
    }

    func displayedEntry(of id: String, at time: Double) -> EntryRecord? {
        onShard(of: id) { $0.displayedEntry(of: id, at: time) }
    }

    func nextEntryChange(of id: String, after time: Double) -> Double? {
        onShard(of: id) { $0.nextEntryChange(of: id, after: time) }
    }

    func relevanceScore(of id: String, at time: Double) -> Double {
        onShard(of: id) { $0.relevanceScore(of: id, at: time) } ?? 0
    }

    func topOfStack(_ ids: [String], at time: Double) -> String? {
        guard count > 1 else { return cores[0].topOfStack(ids, at: time) }
        var best: (id: String, score: Double)?
        for id in ids where find(id) != nil {
            let score = relevanceScore(of: id, at: time)
            if best == nil || score > best!.score { best = (id, score) }
        }
        return best?.id
    }

    func explain(_ id: String, at time: Double) -> ReloadExplanation? {
        onShard(of: id) { $0.explain(id, at: time) }
    }

    // MARK: Driving

    mutating func nextWakeup() -> Double? {
        guard count > 1 else { return cores[0].nextWakeup() }
        let latest = cores[0].latestTime
        var entries = Double.infinity
        for s in 0..<count { entries = min(entries, cores[s].earliestEntryChange) }
        let result = min(batchTime(now: latest ?? -Double.greatestFiniteMagnitude) ?? .infinity, entries)
        guard result.isFinite else { return nil }
        return max(result, latest ?? result)
    }

    /// The batch time over every shard's plans (greedy batching of the
    /// union; see the type's notes), each shard's walk kept for a
    /// `dueReloads` at it. Nil when no reload is planned.
    private mutating func batchTime(now: Double) -> Double? {
        var first: (time: Double, latest: Double)?
        for s in 0..<count {
            if let f = cores[s].batchFirst(now: now), first.map({ f.time < $0.time }) ?? true { first = f }
        }
        guard let first else { return nil }
        var m = Double.infinity
        var latest = -Double.infinity
        for s in 0..<count {
            lanes[s].now = now
            lanes[s].deadline = first.latest
        }
        // The walk over every shard's plans within the first deadline: on
        // every shard's thread when the last one found many.
        everyShard(withinPhase, parallel: count > 1 && isLarge)
        for s in 0..<count {
            m = min(m, lanes[s].within.earliestDeadline)
            latest = max(latest, lanes[s].within.latestTime)
        }
        var wake = latest
        if latest > m {
            // The latest plan within that earliest deadline, on every
            // shard's thread when the wakeup is large.
            for s in 0..<count { lanes[s].deadline = m }
            everyShard(latestPhase, parallel: count > 1 && isLarge)
            wake = -.infinity
            for s in 0..<count { wake = max(wake, lanes[s].latest) }
        }
        for s in 0..<count { cores[s].acceptWake(wake) }
        return wake
    }

    mutating func dueReloads(at now: Double, limit: Int) -> [ReloadBatch] {
        guard count > 1 else { return cores[0].dueReloads(at: now, limit: limit) }
        var tickets: [ReloadTicket] = []
        dueReloads(at: now, limit: limit, into: &tickets)
        var batches: [ReloadBatch] = []
        for ticket in tickets {
            let (s, p) = place(Int(ticket.position))
            let decision = cores[s].decision(atPosition: p)
            let name = groups.names[Int(ticket.group)]
            if let last = batches.last, last.plugin == name.plugin && last.kind == name.kind {
                batches[batches.count - 1].decisions.append(decision)
            } else {
                batches.append(ReloadBatch(plugin: name.plugin, kind: name.kind, time: now, decisions: [decision]))
            }
        }
        return batches
    }

    mutating func dueReloads(at now: Double, limit: Int, into tickets: inout [ReloadTicket]) {
        guard count > 1 else { return cores[0].dueReloads(at: now, limit: limit, into: &tickets) }
        // The caller's tickets are replaced: the merge writes over their
        // slots (no fill of the room first); without one, they are emptied.
        var merged = false
        defer { if !merged && !tickets.isEmpty { tickets.removeAll(keepingCapacity: true) } }
        // Each shard's time moved on (its rechecks and entry changes due by
        // now), on every shard's thread when a recheck is due and the
        // wakeup is large.
        let observing = (0..<count).contains { cores[$0].earliestRecheck <= now }
        for s in 0..<count { lanes[s].now = now }
        everyShard(observePhase, parallel: count > 1 && observing && isLarge)
        var anyQueued = false
        for s in 0..<count where cores[s].earliestQueuedReload <= now { anyQueued = true }
        // What comes next read ahead after every wakeup: by each shard's
        // thread in its last part of an issuing wakeup, else here.
        var readsComingAhead = true
        defer {
            if readsComingAhead { for s in 0..<count { cores[s].readAheadComingReloads() } }
        }
        guard anyQueued else { return }
        // The gate is the union's: a wakeup before the batch time issues
        // nothing. At the batch time `nextWakeup()` found, every shard's
        // walk holds its due reloads, and the gate is passed.
        if !(0..<count).allSatisfy({ cores[$0].walkHoldsDue(at: now) }) {
            if let wake = batchTime(now: now), wake > now { return }
        }
        // Each lane holds its shard's maps (the set's global position of
        // each of its positions, the set's group of each of its groups)
        // until its tickets are made the set's: a swap, no copy.
        for s in 0..<count {
            lanes[s].now = now
            lanes[s].issued.removeAll(keepingCapacity: true)
            lanes[s].next = 0
            lanes[s].finishesEarly = limit == .max
            lanes[s].finished = false
            swap(&lanes[s].globals, &globals[s])
            swap(&lanes[s].groupsOfShard, &groups.ofShard[s])
            lanes[s].ranks = groups.ranks
        }
        // Each shard issues its due reloads issued as planned, and those
        // made by every rule that cannot read or write the free-reload
        // ledger (a counted reload of an app in the background, not under
        // the free cap, outside developer mode), which read and write
        // nothing host-wide, on every shard's thread when they are many;
        // the others are left in its lane. With a limit, only when every
        // due reload is within it. With none, a shard that left none makes
        // its tickets the set's in the same part.
        let parallel: Bool
        if limit == .max {
            parallel = count > 1 && isLarge
            everyShard(collectAndIssuePhase, parallel: parallel)
        } else {
            var total = 0
            for s in 0..<count {
                cores[s].collectDue(at: now, into: &lanes[s].due)
                total += lanes[s].due.count
            }
            parallel = count > 1 && total >= parallelMinimum
            if total <= limit { everyShard(issuePhase, parallel: parallel) }
        }
        // The rest in global order: what one engine issues after those,
        // the ledger's writes in the same order (none into a finished
        // lane: it left nothing).
        for s in 0..<count where !lanes[s].finished { lanes[s].planned = lanes[s].issued.count }
        issueInGlobalOrder(at: now, limit: limit)
        // Each shard's tickets made the set's where it did not already, on
        // its own thread, whose cache its next issue reads (a finished
        // lane's part is empty), then merged.
        if (0..<count).contains(where: { !lanes[$0].finished }) { everyShard(finishPhase, parallel: parallel) }
        for s in 0..<count {
            swap(&lanes[s].globals, &globals[s])
            swap(&lanes[s].groupsOfShard, &groups.ofShard[s])
        }
        readsComingAhead = false
        merged = true
        merge(into: &tickets, parallel: parallel)
    }

    /// Issues the shards' due reloads not looked at yet (each lane's from
    /// its `next`, its maps lent to it) in global order, a run of one
    /// shard's positions at a time, at most `limit` in all with those
    /// issued before; after each
    /// run that recorded a free reload under the cap, the ledger is handed
    /// to the other shards.
    private mutating func issueInGlobalOrder(at now: Double, limit: Int) {
        var left = limit
        for s in 0..<count {
            left -= lanes[s].issued.count
            lanes[s].replan.removeAll(keepingCapacity: true)
        }
        defer {
            for s in 0..<count where !lanes[s].replan.isEmpty { cores[s].replan(positions: lanes[s].replan) }
        }
        while left > 0 {
            // The shard whose next due position is the lowest globally, and
            // how far its run goes (up to the others' next).
            var s = -1
            var lowest = Int32.max
            var second = Int32.max
            for t in 0..<count where lanes[t].next < lanes[t].due.count {
                let g = lanes[t].globals[lanes[t].due[lanes[t].next]]
                if g < lowest {
                    second = lowest
                    lowest = g
                    s = t
                } else if g < second {
                    second = g
                }
            }
            guard s >= 0 else { break }
            let lane = lanes + s
            let start = lane.pointee.next
            var end = start
            while end < lane.pointee.due.count && lane.pointee.globals[lane.pointee.due[end]] < second { end += 1 }
            let ledger = cores[s].freeLedger
            // The shard's whole due list in one run: its due buckets may be emptied at once.
            let all = start == 0 && end == lane.pointee.due.count
            let result = lane.pointee.due.withUnsafeMutableBufferPointer { due in
                cores[s].issueShard(
                    UnsafeMutableBufferPointer(rebasing: due[start..<end]), all: all, at: now, limit: left,
                    asPlannedOnly: false, leavesNotIssued: true, into: &lane.pointee.issued)
            }
            let issued = result.issued
            // Those not due after all are planned again after the last run
            // (with the ledger as the whole wakeup leaves it).
            lane.pointee.replan.append(contentsOf: lane.pointee.due[start..<start + result.left])
            left -= issued
            lane.pointee.next = end
            if cores[s].freeLedger != ledger {
                let changed = cores[s].freeLedger
                for t in 0..<count where t != s { cores[t].adoptFreeLedger(changed) }
            }
        }
    }

    /// The shards' tickets, the set's already and each shard's in its
    /// batches' order (``ShardLane/finish()``), in place of what `tickets`
    /// held (written over its slots, so its room is not filled first),
    /// merged: the batches in the order of their plugin and kind,
    /// each in global order, as one engine groups them
    /// (``ReloadTicket/appendGrouped(_:grouped:ranks:counts:to:)``). With
    /// two shards and `parallel`, each thread merges half of them.
    private mutating func merge(into tickets: inout [ReloadTicket], parallel: Bool) {
        var total = 0
        for s in 0..<count { total += lanes[s].issued.count }
        if tickets.count > total {
            tickets.removeLast(tickets.count - total)
        } else if tickets.count < total {
            tickets.append(
                contentsOf: repeatElement(ReloadTicket(position: 0, group: 0, serial: 0), count: total - tickets.count))
        }
        guard total > 0 else { return }
        let lanes = self.lanes
        let count = self.count
        // Two threads when two shards' workers are there (asked for at
        // this wakeup's earlier parts, not again here).
        let halves = parallel && count == 2 && !workers.isEmpty
        tickets.withUnsafeMutableBufferPointer { tickets in
            let out = tickets.baseAddress!
            withUnsafeTemporaryAllocation(of: ShardRun.self, capacity: count) { runs in
                // Each lane's tickets and batches' ends lent for the merge
                // (read by both threads, written by none meanwhile).
                func lend(_ s: Int) {
                    if s < count {
                        // Its tickets made the set's and put in their
                        // batches' order (every rank's end kept) this wakeup.
                        assert(lanes[s].rankEnds.count == lanes[s].ranks.count + 1)
                        lanes[s].issued.withUnsafeBufferPointer { issued in
                            lanes[s].rankEnds.withUnsafeBufferPointer { ends in
                                runs[s] = ShardRun(tickets: issued, ends: ends)
                                lend(s + 1)
                            }
                        }
                    } else if !halves {
                        ShardRun.merge(runs, into: out)
                    } else {
                        // Where the first half ends in each run: the
                        // merge's path cut at the middle ticket.
                        let middle = lanes[0].ranks.withUnsafeBufferPointer { ranks in
                            ShardRun.cut(runs[0], runs[1], at: total / 2, ranks: ranks)
                        }
                        let whole = (a: runs[0].tickets.count, b: runs[1].tickets.count)
                        lanes[0].span = ShardSpan(
                            a: runs[0], b: runs[1], from: (0, 0), to: middle, out: out)
                        lanes[1].span = ShardSpan(
                            a: runs[0], b: runs[1], from: middle, to: whole, out: out)
                        everyShard(mergePhase, parallel: true)
                    }
                }
                lend(0)
            }
        }
    }

    // MARK: Completing

    /// The shard of a set's ticket and the shard's own ticket: its serial,
    /// and a position at or above the instance's in the shard (exact unless
    /// positions moved since it was issued; the shard then looks below it).
    private func shardTicket(_ ticket: ReloadTicket) -> (shard: Int, ticket: ReloadTicket)? {
        let s = Int(ticket.serial & (1 << Self.shardBits - 1))
        let serial = ticket.serial >> Self.shardBits
        guard s < count, serial > 0, ticket.position >= 0 else { return nil }
        let local = places.withUnsafeBufferPointer {
            ShardPlace.local(below: Int(ticket.position), in: $0, shard: Int32(s))
        }
        return (s, ReloadTicket(position: local, group: 0, serial: serial))
    }

    mutating func complete(_ id: String, with outcome: ReloadOutcome, at time: Double) {
        guard count > 1 else { return cores[0].complete(id, with: outcome, at: time) }
        observe(time)
        if let (s, _) = find(id) { cores[s].complete(id, with: outcome, at: time) }
    }

    mutating func complete(_ completions: [ReloadCompletion], at time: Double) {
        guard count > 1 else { return cores[0].complete(completions, at: time) }
        guard !completions.isEmpty else { return }
        observe(time)
        var parts = (0..<count).map { _ in [ReloadCompletion]() }
        for completion in completions {
            if let (s, _) = find(completion.instanceID) { parts[s].append(completion) }
        }
        for s in 0..<count where !parts[s].isEmpty { cores[s].complete(parts[s], at: time) }
    }

    mutating func complete(_ ticket: ReloadTicket, with outcome: ReloadOutcome, at time: Double) {
        guard count > 1 else { return cores[0].complete(ticket, with: outcome, at: time) }
        observe(time)
        if let (s, own) = shardTicket(ticket) { cores[s].complete(own, with: outcome, at: time) }
    }

    mutating func complete(_ results: [TicketCompletion], at time: Double) {
        guard count > 1 else { return cores[0].complete(results, at: time) }
        var results = results
        complete(taking: &results, at: time)
    }

    mutating func complete(taking results: inout [TicketCompletion], at time: Double) {
        guard count > 1 else { return cores[0].complete(taking: &results, at: time) }
        guard !results.isEmpty else { return }
        // Each shard's thread moves its time on, finds its own results by
        // their serials' low bits (reading every result's serial), and
        // completes them, writing its own results' outcomes only.
        results.withUnsafeMutableBufferPointer { results in
            places.withUnsafeBufferPointer { places in
                for s in 0..<count {
                    lanes[s].results = results
                    lanes[s].places = places
                    lanes[s].now = time
                }
                everyShard(completePhase, parallel: results.count >= parallelMinimum)
                for s in 0..<count {
                    lanes[s].results = UnsafeMutableBufferPointer(start: nil, count: 0)
                    lanes[s].places = UnsafeBufferPointer(start: nil, count: 0)
                }
            }
        }
        results.removeAll(keepingCapacity: true)
    }

    func instance(of ticket: ReloadTicket) -> WidgetInstance? {
        guard count > 1 else { return cores[0].instance(of: ticket) }
        return shardTicket(ticket).flatMap { cores[$0.shard].instance(of: $0.ticket) }
    }

    func decision(for ticket: ReloadTicket) -> ReloadDecision? {
        guard count > 1 else { return cores[0].decision(for: ticket) }
        return shardTicket(ticket).flatMap { cores[$0.shard].decision(for: $0.ticket) }
    }

    func pluginAndKind(of ticket: ReloadTicket) -> (plugin: String, kind: String)? {
        guard count > 1 else { return cores[0].pluginAndKind(of: ticket) }
        guard ticket.group >= 0 && Int(ticket.group) < groups.names.count else { return nil }
        return groups.names[Int(ticket.group)]
    }

    mutating func run(until end: Double, clock: VirtualClock, provider: (ReloadDecision) -> ReloadOutcome)
        -> [ReloadDecision]
    {
        var all: [ReloadDecision] = []
        var previous = -Double.infinity
        while let wake = nextWakeup(), wake <= end {
            clock.advance(to: wake)
            let now = clock.now()
            let batches = dueReloads(at: now, limit: .max)
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

/// Where an instance of a ``ShardSet`` is: its shard and its position there.
struct ShardPlace: Sendable, Equatable {
    var shard: Int32
    var local: Int32

    /// The position in `shard` of the instance issued at global `position`,
    /// or one above it: removals move an instance down, never up, and a
    /// shard's order is the global order restricted to it, so the first
    /// place of the shard at or below `position` is at or above the
    /// instance (exact unless positions moved since). -1 when there is none.
    static func local(below position: Int, in places: UnsafeBufferPointer<ShardPlace>, shard: Int32) -> Int32 {
        var g = min(position, places.count - 1)
        while g >= 0 && places[g].shard != shard { g -= 1 }
        return g >= 0 ? places[g].local : -1
    }
}

/// A ``ShardSet``'s groups: one per plugin and kind, numbered in the order
/// first added, ranked in the order of plugin and kind (the batches' order),
/// and each shard's own numbers mapped to them.
struct ShardGroups: Sendable {
    private var numbers: [String: Int32] = [:]
    private(set) var names: [(plugin: String, kind: String)] = []
    /// Each group's place in the order of plugin and kind, by number.
    private(set) var ranks: [Int32] = []
    /// Per shard, by the shard's group number: the set's.
    var ofShard: [[Int32]] = Array(repeating: [], count: ShardSet.maximumShards)

    /// The number of the group of `plugin` and `kind`, given one if new.
    mutating func number(plugin: String, kind: String) -> Int32 {
        let key = plugin + "\u{0}" + kind
        if let number = numbers[key] { return number }
        let number = Int32(names.count)
        numbers[key] = number
        names.append((plugin, kind))
        // Groups are few and rarely new: rank them all again.
        let order = names.indices.sorted { (names[$0].plugin, names[$0].kind) < (names[$1].plugin, names[$1].kind) }
        ranks = Array(repeating: 0, count: names.count)
        for (rank, g) in order.enumerated() { ranks[g] = Int32(rank) }
        return number
    }
}

/// One shard's part of a ``ShardSet``'s wakeup: its core, its buffers
/// (kept from wakeup to wakeup), and what a phase reads (the time, a
/// batch's results and the places). A phase on a shard's thread writes
/// its lane and its core only; the merge's halves (``mergePhase``) also read
/// the other lane's tickets and write their own part of the caller's.
struct ShardLane {
    let core: UnsafeMutablePointer<SchedulerCore>
    let shard: Int
    /// Its positions due at `now`, ascending, and the first not issued yet.
    var due: [Int] = []
    var next = 0
    /// Its tickets issued, in its order: those issued in its shard's part
    /// (the first `planned`), then those issued in global order; after
    /// ``finish()``, the set's tickets in their batches' order (by the
    /// rank of their plugin and kind, then in global order).
    var issued: [ReloadTicket] = []
    var planned = 0
    /// Whether it may end its wakeup in its issuing part (no limit), and
    /// whether it did (``finishPhase``).
    var finishesEarly = false
    var finished = false
    /// After ``finish()``: where each rank's batch ends in `issued`, by
    /// rank (one more, the last the count).
    var rankEnds: [Int] = []
    /// Scratch for ``finish()``.
    var sorted: [ReloadTicket] = []
    /// The set's own maps, lent from the issuing part of a wakeup to the
    /// end of ``finish()``: the set's global position of each of the
    /// shard's positions, and the set's group of each of the shard's
    /// groups.
    var globals: [Int32] = []
    var groupsOfShard: [Int32] = []
    /// The set's ranks of its groups, lent for ``finish()`` and the merge.
    var ranks: [Int32] = []
    /// Its half of the set's merge, with two shards (``mergePhase``).
    var span: ShardSpan?
    /// Its positions not due after all, to plan again after the wakeup.
    var replan: [Int] = []
    var now = 0.0
    var results = UnsafeMutableBufferPointer<TicketCompletion>(start: nil, count: 0)
    /// Room for the index of every result in `results`, its own first
    /// (counted at each batch; grown, never filled).
    var indices: [Int32] = []
    var places = UnsafeBufferPointer<ShardPlace>(start: nil, count: 0)
    /// The shard's serial of its first ticket of the last wakeup, and the
    /// position of each of that wakeup's tickets, by serial.
    var serialBase: UInt64 = 0
    var locals: [Int32] = []
    /// The batch-time walk's deadline (then the set's earliest, for
    /// ``latestPhase``), and what the walk found.
    var deadline = 0.0
    var within = (earliestDeadline: Double.infinity, latestTime: -Double.infinity)
    /// The shard's latest plan within the set's earliest deadline (asked
    /// at `deadline` when the walk's answers disagree).
    var latest = -Double.infinity

    init(core: UnsafeMutablePointer<SchedulerCore>, shard: Int) {
        self.core = core
        self.shard = shard
    }

    /// The wakeup's tickets made the set's, in their batches' order: each
    /// one's position in the shard kept first, by serial (the shard numbers
    /// its issues one after another: a batch's completion finds each there,
    /// not in the global places, a miss each); those issued in its shard's
    /// part and those issued in global order merged (each part is in
    /// order); then
    /// the global position, the set's group, and the serial with the shard
    /// in its low ``ShardSet/shardBits`` bits; then grouped by batch with
    /// the counting sort one engine uses
    /// (``ReloadTicket/appendGrouped(_:grouped:ranks:counts:to:)``), each
    /// rank's end kept for the set's merge.
    mutating func finish() {
        locals.removeAll(keepingCapacity: true)
        serialBase = issued.first?.serial ?? 0
        locals.append(contentsOf: issued.lazy.map { $0.position })
        if planned > 0 && planned < issued.count && issued[planned - 1].position > issued[planned].position {
            sorted.removeAll(keepingCapacity: true)
            var a = 0
            var b = planned
            while a < planned || b < issued.count {
                if b == issued.count || (a < planned && issued[a].position < issued[b].position) {
                    sorted.append(issued[a])
                    a += 1
                } else {
                    sorted.append(issued[b])
                    b += 1
                }
            }
            swap(&sorted, &issued)
        }
        var first: Int32 = -1
        var grouped = false
        let shard = UInt64(self.shard)
        globals.withUnsafeBufferPointer { globals in
            groupsOfShard.withUnsafeBufferPointer { groupsOfShard in
                issued.withUnsafeMutableBufferPointer { issued in
                    for i in issued.indices {
                        let ticket = issued[i]
                        let group = groupsOfShard[Int(ticket.group)]
                        if first < 0 { first = group }
                        grouped = grouped || group != first
                        issued[i] = ReloadTicket(
                            position: globals[Int(ticket.position)], group: group,
                            serial: ticket.serial << ShardSet.shardBits | shard)
                    }
                }
            }
        }
        if grouped {
            sorted.removeAll(keepingCapacity: true)
            ReloadTicket.appendGrouped(issued, grouped: true, ranks: ranks, counts: &rankEnds, to: &sorted)
            swap(&sorted, &issued)
        } else {
            // One batch (or none): every rank's end before it 0, from it the count.
            let rank = first < 0 ? 0 : Int(ranks[Int(first)])
            rankEnds.removeAll(keepingCapacity: true)
            rankEnds.append(contentsOf: repeatElement(0, count: rank))
            rankEnds.append(contentsOf: repeatElement(issued.count, count: ranks.count + 1 - rank))
        }
    }
}

/// A shard's tickets of a wakeup, in their batches' order, lent for the
/// set's merge: where each rank's batch ends (by rank; one more, the count).
struct ShardRun {
    var tickets: UnsafeBufferPointer<ReloadTicket>
    var ends: UnsafeBufferPointer<Int>

    /// `runs` merged into `out` (room for all): rank by rank, the lowest
    /// next position of any run's batch of that rank, one ticket at a time.
    static func merge(_ runs: UnsafeMutableBufferPointer<ShardRun>, into out: UnsafeMutablePointer<ReloadTicket>) {
        if runs.count == 2 {
            let whole = (a: runs[0].tickets.count, b: runs[1].tickets.count)
            return merge(runs[0], runs[1], from: (0, 0), to: whole, into: out)
        }
        var o = out
        withUnsafeTemporaryAllocation(of: (next: Int, end: Int, position: Int32).self, capacity: runs.count) { heads in
            for s in runs.indices { heads[s] = (0, 0, .max) }
            for r in 0..<runs[0].ends.count - 1 {
                var left = 0
                for s in runs.indices {
                    let (next, _, _) = heads[s]
                    let end = runs[s].ends[r]
                    heads[s] = (next, end, next < end ? runs[s].tickets[next].position : .max)
                    left += end - next
                }
                for _ in 0..<left {
                    // Chosen without a branch (a select): which run is next
                    // is a coin toss at every ticket.
                    var best = 0
                    for s in 1..<runs.count { best = heads[s].position < heads[best].position ? s : best }
                    let (next, end, _) = heads[best]
                    o.pointee = runs[best].tickets[next]
                    o += 1
                    heads[best] = (next + 1, end, next + 1 < end ? runs[best].tickets[next + 1].position : .max)
                }
            }
        }
    }

    /// `a` and `b` merged from the cut `from` (how many of each come before
    /// it) to the cut `to` into `out` at `from.a + from.b` on: rank by rank,
    /// the lower position first.
    static func merge(
        _ a: ShardRun, _ b: ShardRun, from: (a: Int, b: Int), to: (a: Int, b: Int),
        into out: UnsafeMutablePointer<ReloadTicket>
    ) {
        var i = from.a
        var j = from.b
        var o = out + (from.a + from.b)
        for r in 0..<a.ends.count - 1 where i < to.a || j < to.b {
            let endA = max(i, min(a.ends[r], to.a))
            let endB = max(j, min(b.ends[r], to.b))
            while i < endA && j < endB {
                // A select, not a branch: which run is next is a coin toss.
                let x = a.tickets[i]
                let y = b.tickets[j]
                let first = x.position < y.position
                o.pointee = first ? x : y
                o += 1
                i &+= first ? 1 : 0
                j &+= first ? 0 : 1
            }
            while i < endA {
                o.pointee = a.tickets[i]
                o += 1
                i += 1
            }
            while j < endB {
                o.pointee = b.tickets[j]
                o += 1
                j += 1
            }
        }
    }

    /// How many of `a`'s and of `b`'s tickets come among the first `h` of
    /// their merge (in the order of rank, then position): a binary search
    /// on the merge's path.
    static func cut(_ a: ShardRun, _ b: ShardRun, at h: Int, ranks: UnsafeBufferPointer<Int32>) -> (a: Int, b: Int) {
        func key(_ ticket: ReloadTicket) -> Int64 {
            Int64(ranks[Int(ticket.group)]) << 32 | Int64(ticket.position)
        }
        var low = max(0, h - b.tickets.count)
        var high = min(h, a.tickets.count)
        while low < high {
            let middle = (low + high) / 2
            // a's ticket there comes before b's last of the first h: more
            // of a's are among them.
            if key(a.tickets[middle]) < key(b.tickets[h - middle - 1]) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return (low, h - low)
    }
}

/// One thread's half of a two-shard merge (``ShardRun/merge(_:_:from:to:into:)``).
struct ShardSpan {
    var a: ShardRun
    var b: ShardRun
    var from: (a: Int, b: Int)
    var to: (a: Int, b: Int)
    var out: UnsafeMutablePointer<ReloadTicket>
}

/// A shard's half of the set's merge of a wakeup's tickets, with two shards.
private let mergePhase: ShardJob = { raw in
    let lane = raw.assumingMemoryBound(to: ShardLane.self)
    guard let span = lane.pointee.span else { return }
    ShardRun.merge(span.a, span.b, from: span.from, to: span.to, into: span.out)
    lane.pointee.span = nil
}

/// A shard's time moved on to its lane's `now` (its rechecks and entry
/// changes due by then).
private let observePhase: ShardJob = { raw in
    let lane = raw.assumingMemoryBound(to: ShardLane.self)
    lane.pointee.core.pointee.observeTime(lane.pointee.now)
}

/// A shard's end of an issuing wakeup: its tickets made the set's
/// (``ShardLane/finish()``), and what comes next read ahead on its thread.
private let finishPhase: ShardJob = { raw in
    let lane = raw.assumingMemoryBound(to: ShardLane.self)
    guard !lane.pointee.finished else { return }
    lane.pointee.finish()
    lane.pointee.core.pointee.readAheadComingReloads()
    lane.pointee.finished = true
}

/// A shard's collecting and issuing at a wakeup with no limit: its due
/// reloads collected, those it may issue issued (``issuePhase``);
/// when that left none for the set to issue in global order, its end of
/// the wakeup too (``finishPhase``: no second part to hand over).
private let collectAndIssuePhase: ShardJob = { raw in
    let lane = raw.assumingMemoryBound(to: ShardLane.self)
    lane.pointee.core.pointee.collectDue(at: lane.pointee.now, into: &lane.pointee.due)
    issuePhase(raw)
    if lane.pointee.finishesEarly && lane.pointee.due.isEmpty {
        lane.pointee.planned = lane.pointee.issued.count
        finishPhase(raw)
    }
}

/// A shard's issuing of its due reloads issued as planned, and of those
/// made by every rule that cannot touch the free-reload ledger (collected
/// already); the others left in `due`, for the set to issue in global
/// order.
private let issuePhase: ShardJob = { raw in
    let lane = raw.assumingMemoryBound(to: ShardLane.self)
    let now = lane.pointee.now
    let left = lane.pointee.due.withUnsafeMutableBufferPointer { due in
        lane.pointee.core.pointee.issueShard(
            due, all: true, at: now, limit: .max, asPlannedOnly: true, into: &lane.pointee.issued
        ).left
    }
    lane.pointee.due.removeLast(lane.pointee.due.count - left)
}

/// A shard's walk of its plans within the batch's first deadline.
private let withinPhase: ShardJob = { raw in
    let lane = raw.assumingMemoryBound(to: ShardLane.self)
    lane.pointee.within = lane.pointee.core.pointee.batchWithin(deadline: lane.pointee.deadline, now: lane.pointee.now)
}

/// A shard's latest plan within its lane's deadline (the set's earliest).
private let latestPhase: ShardJob = { raw in
    let lane = raw.assumingMemoryBound(to: ShardLane.self)
    lane.pointee.latest = lane.pointee.core.pointee.batchLatest(upTo: lane.pointee.deadline, now: lane.pointee.now)
}

/// A shard's completing of its results in a batch.
private let completePhase: ShardJob = { raw in
    let lane = raw.assumingMemoryBound(to: ShardLane.self)
    // Its own results found first, by their serials' low bits: every
    // index written, and counted when the result is the shard's, without a
    // branch (the shards' results alternate as their positions do, which
    // no predictor follows), in room for all of them (grown, not filled,
    // at each batch).
    let mask = UInt64(1) << ShardSet.shardBits - 1
    let shard = UInt64(lane.pointee.shard)
    let results = lane.pointee.results
    if lane.pointee.indices.count < results.count {
        lane.pointee.indices.append(contentsOf: repeatElement(0, count: results.count - lane.pointee.indices.count))
    }
    let own = lane.pointee.indices.withUnsafeMutableBufferPointer { indices in
        var n = 0
        for i in results.indices {
            indices[n] = Int32(i)
            n &+= results[i].ticket.serial & mask == shard ? 1 : 0
        }
        return n
    }
    lane.pointee.locals.withUnsafeBufferPointer { locals in
        lane.pointee.indices.withUnsafeBufferPointer { indices in
            lane.pointee.core.pointee.completeShard(
                lane.pointee.results, indices: UnsafeBufferPointer(rebasing: indices[..<own]),
                shard: lane.pointee.shard, bits: ShardSet.shardBits, places: lane.pointee.places,
                recent: (lane.pointee.serialBase, locals), at: lane.pointee.now)
        }
    }
}
