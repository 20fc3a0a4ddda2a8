import WidgetHostModel

/// An explicit reload waiting to happen.
public struct PendingRequest: Sendable, Hashable, Codable {
    public var trigger: ReloadTrigger
    public var charge: ReloadCharge
    public var requestedAt: Double

    public init(trigger: ReloadTrigger, charge: ReloadCharge, requestedAt: Double) {
        self.trigger = trigger
        self.charge = charge
        self.requestedAt = requestedAt
    }

    /// One request waits per instance, and one reload serves every request
    /// made meanwhile. A new request takes the place of the waiting one when
    /// it is cheaper: free over counted, and any other free reason over a
    /// push (which spends the push budget); otherwise the older one stays.
    public func isReplaced(by new: PendingRequest) -> Bool {
        if charge.isCounted { return !new.charge.isCounted }
        return charge == .free(.push) && !new.charge.isCounted && new.charge != .free(.push)
    }
}

/// A reload issued and not yet completed.
public struct InFlightReload: Sendable, Hashable, Codable {
    public var decision: ReloadDecision
    /// When the reload was first due (for re-queuing an explicit request after a failure).
    public var dueSince: Double

    public init(decision: ReloadDecision, dueSince: Double) {
        self.decision = decision
        self.dueSince = dueSince
    }
}

/// Everything the scheduler knows about one instance. Plain Codable values:
/// the daemon persists them (ledger, last good timeline, backoff).
///
/// Two records and the names (issue 17): ``HotRecord``, the plain numbers
/// the rules read on every plan in one 64-byte line, ``ColdRecord``, the
/// rest a reload reads and writes (last reload, timeline, the box of rare
/// values), and the instance's names (``names``), with the ledger and the
/// record of the reload in flight, if any (``InFlightRecord``). The
/// scheduler keeps the records in one array of two-line ``InstanceLine``s
/// and the names in another, the ledgers in an arena (``LedgerArena``) and the
/// reloads in flight in their lines (``LineFlight``) or, those the lines
/// cannot rebuild, in a table of their own (``InFlightTable``), and makes
/// an `InstanceState` on demand; here they are one value. Optional
/// times are stored as a `Double` with NaN for `nil` (a NaN time is never
/// valid: reading one gives `nil`), and the values most instances never
/// have (a pending request, a location change, backoff, the last failure,
/// push reloads) live in one shared box, copied on write and dropped when
/// empty. The properties, their Codable keys and their equality are those
/// of the plain struct.
public struct InstanceState: Sendable, Hashable, Codable {
    /// What the rules read on every plan.
    var hot: HotRecord
    /// The rest that a reload reads and writes.
    var cold: ColdRecord
    /// The instance's names and visibility (``instance``).
    var names: WidgetInstance
    /// The reload in flight, without the instance's names.
    private(set) var flight: InFlightRecord?
    /// The counted reloads' times (``ledger``).
    private(set) var storedLedger: RollingLedger

    init(hot: HotRecord, cold: ColdRecord, names: WidgetInstance, flight: InFlightRecord?, ledger: RollingLedger) {
        self.hot = hot
        self.cold = cold
        self.names = names
        self.flight = flight
        self.storedLedger = ledger
    }

    /// The instance. Its id, plugin and kind are also the in-flight
    /// decision's (the record does not repeat them): changed while a reload
    /// is in flight, the record keeps the names it was issued with.
    public var instance: WidgetInstance {
        get { names }
        _modify {
            let before = names
            // In a `defer`: an access that throws after changing the names
            // ends the yield without running the code after it.
            defer {
                hot.isVisible = names.isVisible
                let now = names
                if flight != nil, flight?.names == nil,
                    before.id != now.id || before.plugin != now.plugin || before.kind != now.kind
                {
                    flight?.names = InFlightRecord.Names(
                        instanceID: before.id, plugin: before.plugin, kind: before.kind)
                }
            }
            yield &names
        }
    }
    public var addedAt: Double {
        get { hot.addedAt }
        set { hot.addedAt = newValue }
    }
    /// The last good timeline (kept across failures).
    public var timeline: TimelineRecord? {
        get { cold.timeline }
        set { cold.timeline = newValue }
    }
    /// Counted reload times (rolling window).
    public var ledger: RollingLedger {
        get { storedLedger }
        _modify {
            defer { hot.noteLedger(storedLedger) }
            yield &storedLedger
        }
    }
    public var views: ViewHistory {
        get { hot.views }
        set { hot.views = newValue }
    }
    public var inFlight: InFlightReload? {
        get { flight.map { $0.reload(of: names) } }
        set { inFlightRecord = newValue.map { InFlightRecord($0, of: names) } }
    }
    /// Whether a reload is in flight, without copying the record.
    public var isInFlight: Bool { hot.isInFlight }

    /// The in-flight record as kept (no names).
    var inFlightRecord: InFlightRecord? {
        get { flight }
        set {
            flight = newValue
            hot.isInFlight = newValue != nil
        }
    }
    /// Failed reloads in a row (kept up to `Int32.max`).
    public var consecutiveFailures: Int {
        get { hot.consecutiveFailures }
        set { hot.consecutiveFailures = newValue }
    }

    /// Whether the hot record's flags say what the cold one holds.
    var flagsAreInStep: Bool {
        hot.isVisible == names.isVisible && hot.isInFlight == (flight != nil)
            && hot.hasRare == cold.hasRare && hot.ledgerLast == storedLedger.last
            && Int(hot.storedLedgerCount) == min(storedLedger.count, Int(UInt16.max))
    }

    public init(instance: WidgetInstance, addedAt: Double) {
        hot = HotRecord(addedAt: addedAt, isVisible: instance.isVisible)
        cold = ColdRecord()
        names = instance
        storedLedger = RollingLedger()
        self.visibleSince = instance.isVisible ? addedAt : nil
    }

    public var timelineReceivedAt: Double? {
        get { hot.timelineReceivedAt }
        set { hot.timelineReceivedAt = newValue }
    }
    /// When the timeline's policy makes the instance due (jitter and the
    /// minimum interval applied); `nil` for `never` or before the first timeline.
    public var policyDue: Double? {
        get { hot.policyDue }
        set { hot.policyDue = newValue }
    }
    public var lastReloadAt: Double? {
        get { cold.lastReloadAt }
        set { cold.lastReloadAt = newValue }
    }
    /// When the instance was last shown, while it is visible.
    public var visibleSince: Double? {
        get { hot.visibleSince }
        set { hot.visibleSince = newValue }
    }

    /// Push reloads (rolling window of `budgetWindow`), for the push budget.
    public var pushLedger: RollingLedger {
        get { cold.pushLedger }
        _modify {
            defer { hot.hasRare = cold.hasRare }
            yield &cold.pushLedger
        }
    }
    public var request: PendingRequest? {
        get { cold.request }
        set {
            cold.request = newValue
            hot.hasRare = cold.hasRare
        }
    }
    /// A significant location change not yet served (reload when next viewed).
    public var locationChangeAt: Double? {
        get { cold.locationChangeAt }
        set {
            cold.locationChangeAt = newValue
            hot.hasRare = cold.hasRare
        }
    }
    public var backoffUntil: Double? {
        get { cold.backoffUntil }
        set {
            cold.backoffUntil = newValue
            hot.hasRare = cold.hasRare
        }
    }
    public var lastFailure: FailureRecord? {
        get { cold.lastFailure }
        set {
            cold.lastFailure = newValue
            hot.hasRare = cold.hasRare
        }
    }

    private enum CodingKeys: String, CodingKey {
        case instance, addedAt, timeline, timelineReceivedAt, policyDue, ledger, pushLedger, lastReloadAt
        case visibleSince, views, request, locationChangeAt, inFlight, consecutiveFailures, backoffUntil
        case lastFailure
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let instance = try c.decode(WidgetInstance.self, forKey: .instance)
        let addedAt = try c.decode(Double.self, forKey: .addedAt)
        self.init(instance: instance, addedAt: addedAt)
        timeline = try c.decodeIfPresent(TimelineRecord.self, forKey: .timeline)
        ledger = try c.decode(RollingLedger.self, forKey: .ledger)
        views = try c.decode(ViewHistory.self, forKey: .views)
        inFlight = try c.decodeIfPresent(InFlightReload.self, forKey: .inFlight)
        let failures = try c.decode(Int.self, forKey: .consecutiveFailures)
        guard let stored = Int32(exactly: failures), stored >= 0 else {
            throw DecodingError.dataCorruptedError(
                forKey: .consecutiveFailures, in: c,
                debugDescription: "consecutiveFailures is \(failures), expected a whole number from 0 to \(Int32.max)")
        }
        hot.storedFailures = stored
        timelineReceivedAt = try c.decodeIfPresent(Double.self, forKey: .timelineReceivedAt)
        policyDue = try c.decodeIfPresent(Double.self, forKey: .policyDue)
        lastReloadAt = try c.decodeIfPresent(Double.self, forKey: .lastReloadAt)
        visibleSince = try c.decodeIfPresent(Double.self, forKey: .visibleSince)
        pushLedger = try c.decode(RollingLedger.self, forKey: .pushLedger)
        request = try c.decodeIfPresent(PendingRequest.self, forKey: .request)
        locationChangeAt = try c.decodeIfPresent(Double.self, forKey: .locationChangeAt)
        backoffUntil = try c.decodeIfPresent(Double.self, forKey: .backoffUntil)
        lastFailure = try c.decodeIfPresent(FailureRecord.self, forKey: .lastFailure)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(instance, forKey: .instance)
        try c.encode(addedAt, forKey: .addedAt)
        try c.encodeIfPresent(timeline, forKey: .timeline)
        try c.encodeIfPresent(timelineReceivedAt, forKey: .timelineReceivedAt)
        try c.encodeIfPresent(policyDue, forKey: .policyDue)
        try c.encode(ledger, forKey: .ledger)
        try c.encode(pushLedger, forKey: .pushLedger)
        try c.encodeIfPresent(lastReloadAt, forKey: .lastReloadAt)
        try c.encodeIfPresent(visibleSince, forKey: .visibleSince)
        try c.encode(views, forKey: .views)
        try c.encodeIfPresent(request, forKey: .request)
        try c.encodeIfPresent(locationChangeAt, forKey: .locationChangeAt)
        try c.encodeIfPresent(inFlight, forKey: .inFlight)
        try c.encode(consecutiveFailures, forKey: .consecutiveFailures)
        try c.encodeIfPresent(backoffUntil, forKey: .backoffUntil)
        try c.encodeIfPresent(lastFailure, forKey: .lastFailure)
    }

    public static func == (a: InstanceState, b: InstanceState) -> Bool {
        a.instance == b.instance && a.addedAt == b.addedAt && a.timeline == b.timeline
            && a.timelineReceivedAt == b.timelineReceivedAt && a.policyDue == b.policyDue && a.ledger == b.ledger
            && a.lastReloadAt == b.lastReloadAt && a.visibleSince == b.visibleSince && a.views == b.views
            && a.inFlight == b.inFlight && a.consecutiveFailures == b.consecutiveFailures
            && a.pushLedger == b.pushLedger && a.request == b.request && a.locationChangeAt == b.locationChangeAt
            && a.backoffUntil == b.backoffUntil && a.lastFailure == b.lastFailure
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(instance)
        hasher.combine(addedAt)
        hasher.combine(timeline)
        hasher.combine(timelineReceivedAt)
        hasher.combine(policyDue)
        hasher.combine(ledger)
        hasher.combine(lastReloadAt)
        hasher.combine(visibleSince)
        hasher.combine(views)
        hasher.combine(inFlight)
        hasher.combine(consecutiveFailures)
        hasher.combine(pushLedger)
        hasher.combine(request)
        hasher.combine(locationChangeAt)
        hasher.combine(backoffUntil)
        hasher.combine(lastFailure)
    }
}

/// A stored optional time: NaN is `nil` (a NaN time is never valid).
/// (`value != value`: NaN, in one comparison; `isNaN` tests the bits.)
@inline(__always)
private func optionalTime(_ value: Double) -> Double? { value != value ? nil : value }

/// What the rules read of an instance on every plan, as plain numbers in
/// one 64-byte record (with ``ColdRecord``, an ``InstanceState``): its
/// times, the last time in its ledger (the spacing rule's), its view
/// history, its failures and flags that say whether the cold record need
/// be read at all (a reload in flight, a rare value). Optional times are
/// NaN for `nil`.
struct HotRecord: Sendable {
    var addedAt: Double
    var storedTimelineReceivedAt = Double.nan
    var storedPolicyDue = Double.nan
    var storedVisibleSince = Double.nan
    /// The ledger's `last`.
    var storedLedgerLast = Double.nan
    var views = ViewHistory()
    var storedFailures: Int32 = 0
    /// The instance's `isVisible` (its names, ``InstanceState/names``, say the same).
    var isVisible: Bool
    /// Whether a reload is in flight (the instance's ``InFlightRecord``).
    var isInFlight = false
    /// Whether the cold record holds a box of rare values.
    var hasRare = false
    /// The ledger's `count` (up to `UInt16.max`): a ledger
    /// holding fewer times than an allowance has room under it in every
    /// window, which the plan of a steady-state reload then knows without
    /// reading the ledger.
    var storedLedgerCount: UInt16 = 0

    init(addedAt: Double, isVisible: Bool) {
        self.addedAt = addedAt
        self.isVisible = isVisible
    }

    var timelineReceivedAt: Double? {
        get { optionalTime(storedTimelineReceivedAt) }
        set { storedTimelineReceivedAt = newValue ?? .nan }
    }
    var policyDue: Double? {
        get { optionalTime(storedPolicyDue) }
        set { storedPolicyDue = newValue ?? .nan }
    }
    var visibleSince: Double? {
        get { optionalTime(storedVisibleSince) }
        set { storedVisibleSince = newValue ?? .nan }
    }
    var ledgerLast: Double? {
        get { optionalTime(storedLedgerLast) }
        set { storedLedgerLast = newValue ?? .nan }
    }
    var consecutiveFailures: Int {
        get { Int(storedFailures) }
        set { storedFailures = Int32(clamping: newValue) }
    }

    /// Keeps the copies of `ledger`'s last time and count in step.
    @inline(__always)
    mutating func noteLedger(_ ledger: RollingLedger) {
        noteLedger(last: ledger.last, count: ledger.count)
    }

    /// Keeps the copies of the ledger's last time and count in step, as read.
    @inline(__always)
    mutating func noteLedger(last: Double?, count: Int) {
        ledgerLast = last
        storedLedgerCount = UInt16(clamping: count)
    }
}

/// What a reload reads and writes of an instance besides its hot record
/// (with ``HotRecord`` and the instance's names, an ``InstanceState``): its
/// last reload's time, its timeline, the box of rare values (its push
/// ledger, a request, a backoff, a failure), and its reload in flight's
/// slot and serial number. The flags of its hot record say whether the box
/// is here; ``InstanceState`` keeps them in step. At most 48 bytes: in the
/// scheduler's arrays it shares its instance's second cache line
/// (``InstanceLine``). Its fields are in this order so that ``lineFlight``
/// and the slot fill the room the 17-byte timeline leaves before the next
/// 8 bytes, and the serial takes no more.
struct ColdRecord: Sendable {
    var storedLastReloadAt = Double.nan
    /// The rarely set values; `nil` when all are empty.
    private var rare: RareInstanceState?
    var timeline: TimelineRecord?
    /// The reload in flight as the line keeps it when ``flightSlot`` is
    /// ``keptInLine`` (the 3 bytes after the 17-byte timeline; the slot and
    /// serial number follow). Kept by ``InstanceRecords`` alone, as
    /// ``flightSlot``; read only when the slot says so.
    var lineFlight = LineFlight()
    /// The slot of the instance's reload in flight in the scheduler's
    /// ``InFlightTable``, -1 when none, ``keptInLine`` when the line keeps
    /// it (``lineFlight``). Kept by ``InstanceRecords`` alone: an
    /// ``InstanceState`` holds its record itself, and this number in its
    /// cold record means nothing.
    var flightSlot: Int32 = -1
    /// The serial number of the instance's reload in flight
    /// (``ReloadTicket/serial``), 0 when none or when no ticket names it.
    /// Kept by ``InstanceRecords`` alone, as ``flightSlot``: here, in the
    /// line a completion reads first, a ticket is checked without a read
    /// of the table of reloads in flight.
    var flightSerial: UInt64 = 0

    init() {}

    /// A record that holds nothing, to stand in an array while its own is moved out.
    static let placeholder = ColdRecord()

    /// The ``flightSlot`` of a reload in flight kept in the line.
    static let keptInLine: Int32 = -2

    var lastReloadAt: Double? {
        get { optionalTime(storedLastReloadAt) }
        set { storedLastReloadAt = newValue ?? .nan }
    }

    /// Whether the box of rare values is here.
    var hasRare: Bool { rare != nil }

    /// The box's identity (for the tests: a change in place keeps it).
    var rareIdentity: ObjectIdentifier? { rare.map(ObjectIdentifier.init) }

    /// The box, made unique (copied if shared, made if absent) for a change.
    private mutating func uniqueRare() -> RareInstanceState {
        if rare == nil {
            rare = RareInstanceState()
        } else if !isKnownUniquelyReferenced(&rare) {
            rare = rare?.copy()
        }
        return rare!
    }

    /// Drops the box when nothing is left in it.
    private mutating func dropRareIfEmpty() {
        if rare?.isEmpty == true { rare = nil }
    }

    /// Sets one optional rare value; no box is made to hold a `nil`, and
    /// the box goes when nothing is left in it.
    private mutating func setRare<Value>(_ field: ReferenceWritableKeyPath<RareInstanceState, Value?>, _ value: Value?)
    {
        guard value != nil || rare?[keyPath: field] != nil else { return }
        uniqueRare()[keyPath: field] = value
        dropRareIfEmpty()
    }

    var pushLedger: RollingLedger {
        get { rare?.pushLedger ?? RollingLedger() }
        _modify {
            let box = uniqueRare()
            yield &box.pushLedger
            dropRareIfEmpty()
        }
    }
    var request: PendingRequest? {
        get { rare?.request }
        set { setRare(\.request, newValue) }
    }
    var locationChangeAt: Double? {
        get { rare?.locationChangeAt }
        set { setRare(\.locationChangeAt, newValue) }
    }
    var backoffUntil: Double? {
        get { rare?.backoffUntil }
        set { setRare(\.backoffUntil, newValue) }
    }
    var lastFailure: FailureRecord? {
        get { rare?.lastFailure }
        set { setRare(\.lastFailure, newValue) }
    }
}

/// The values of an ``InstanceState`` that most instances never have, boxed
/// so that they cost one reference when absent. Mutated only through
/// `InstanceState`, and only when uniquely referenced (copy on write): a
/// shared box is never changed, which is why it may be `Sendable`.
final class RareInstanceState: @unchecked Sendable {
    var request: PendingRequest?
    var locationChangeAt: Double?
    var backoffUntil: Double?
    var lastFailure: FailureRecord?
    var pushLedger = RollingLedger()

    init() {}

    func copy() -> RareInstanceState {
        let copy = RareInstanceState()
        copy.request = request
        copy.locationChangeAt = locationChangeAt
        copy.backoffUntil = backoffUntil
        copy.lastFailure = lastFailure
        copy.pushLedger = pushLedger
        return copy
    }

    var isEmpty: Bool {
        request == nil && locationChangeAt == nil && backoffUntil == nil && lastFailure == nil
            && pushLedger.isEmpty
    }
}

/// An ``InFlightReload`` as an instance keeps it: the decision's values
/// without the instance's id, plugin and kind, which the instance holds
/// (``names`` keeps them only when they differ: the instance was changed
/// while the reload was in flight, or a stored record says so).
struct InFlightRecord: Sendable, Hashable {
    /// The decision's names, when they are not the instance's.
    struct Names: Sendable, Hashable {
        var instanceID: String
        var plugin: String
        var kind: String
    }

    /// The serial number of its issue (``ReloadTicket/serial``); 0 for a
    /// record made from an ``InFlightReload`` (a stored state), which no
    /// ticket names.
    var serial: UInt64 = 0
    var time: Double
    var dueSince: Double
    var trigger: ReloadTrigger
    var charge: ReloadCharge
    var attempt: Int
    var deferral: Deferral?
    var wouldHaveBeenDeferred: Deferral?
    var allowance: Int?
    var countedInWindow: Int?
    var names: Names?

    init(
        time: Double, dueSince: Double, trigger: ReloadTrigger, charge: ReloadCharge, attempt: Int,
        deferral: Deferral?, wouldHaveBeenDeferred: Deferral?, allowance: Int?, countedInWindow: Int?
    ) {
        self.time = time
        self.dueSince = dueSince
        self.trigger = trigger
        self.charge = charge
        self.attempt = attempt
        self.deferral = deferral
        self.wouldHaveBeenDeferred = wouldHaveBeenDeferred
        self.allowance = allowance
        self.countedInWindow = countedInWindow
    }

    /// The record of `flight`, an in-flight reload of `instance`.
    init(_ flight: InFlightReload, of instance: WidgetInstance) {
        let d = flight.decision
        self.init(
            time: d.time, dueSince: flight.dueSince, trigger: d.trigger, charge: d.charge, attempt: d.attempt,
            deferral: d.deferral, wouldHaveBeenDeferred: d.wouldHaveBeenDeferred, allowance: d.allowance,
            countedInWindow: d.countedInWindow)
        if d.instanceID != instance.id || d.plugin != instance.plugin || d.kind != instance.kind {
            names = Names(instanceID: d.instanceID, plugin: d.plugin, kind: d.kind)
        }
    }

    /// The decision it records, with the names of `instance` unless it keeps its own.
    func decision(of instance: WidgetInstance) -> ReloadDecision {
        ReloadDecision(
            instanceID: names?.instanceID ?? instance.id, plugin: names?.plugin ?? instance.plugin,
            kind: names?.kind ?? instance.kind, time: time, trigger: trigger, charge: charge, attempt: attempt,
            deferral: deferral, wouldHaveBeenDeferred: wouldHaveBeenDeferred, allowance: allowance,
            countedInWindow: countedInWindow)
    }

    /// The in-flight reload it records, of `instance`.
    func reload(of instance: WidgetInstance) -> InFlightReload {
        InFlightReload(decision: decision(of: instance), dueSince: dueSince)
    }
}

/// The foreground and session state of an app.
public struct AppState: Sendable, Hashable, Codable {
    public var foreground = false
    public var sessions: Set<SessionKind> = []
    public init() {}
}

/// The whole scheduler state, Codable for persistence.
public struct SchedulerState: Sendable, Hashable, Codable {
    /// Instances in insertion order (decisions come out in this order).
    public var instances: [InstanceState] = []
    public var apps: [String: AppState] = [:]
    /// Host-wide ledger of capped free reloads.
    public var freeLedger = RollingLedger()
    /// The latest time the scheduler was told about.
    public var now: Double?
    public init() {}
}

/// A reload the scheduler intends, with every constraint applied.
public struct PlannedReload: Sendable, Hashable, Codable {
    /// The earliest time the reload may happen.
    public var time: Double
    /// The coalescing deadline: the reload may be batched up to this time.
    public var latest: Double
    public var trigger: ReloadTrigger
    public var charge: ReloadCharge
    public var attempt: Int
    public var deferral: Deferral?
    public var wouldHaveBeenDeferred: Deferral?

    public init(
        time: Double, latest: Double, trigger: ReloadTrigger, charge: ReloadCharge, attempt: Int,
        deferral: Deferral?, wouldHaveBeenDeferred: Deferral?
    ) {
        self.time = time
        self.latest = latest
        self.trigger = trigger
        self.charge = charge
        self.attempt = attempt
        self.deferral = deferral
        self.wouldHaveBeenDeferred = wouldHaveBeenDeferred
    }
}

/// Why an instance is (not) being reloaded, for the daemon's `explain`.
public struct ReloadExplanation: Sendable, Hashable, Codable, CustomStringConvertible {
    public var instanceID: String
    public var time: Double
    public var isVisible: Bool
    public var tier: ViewTier
    public var allowance: Int
    public var countedInWindow: Int
    /// When one more counted reload fits the budget (== `time` if it fits now).
    public var budgetAvailableAt: Double
    /// When the spacing rule next allows a counted reload.
    public var spacingAvailableAt: Double?
    public var policy: ReloadPolicy?
    public var policyDue: Double?
    public var waitingForVisibility: Bool
    public var pendingRequest: PendingRequest?
    public var inFlight: ReloadDecision?
    public var backoffUntil: Double?
    public var lastFailure: FailureRecord?
    public var next: PlannedReload?
    /// Push reloads allowed in 24 h, and those in the window ending at `time`.
    public var pushAllowance: Int
    public var pushesInWindow: Int
    /// When one more push reload fits the push budget (== `time` if it fits now).
    public var pushAvailableAt: Double

    public init(
        instanceID: String, time: Double, isVisible: Bool, tier: ViewTier, allowance: Int, countedInWindow: Int,
        budgetAvailableAt: Double, spacingAvailableAt: Double?, policy: ReloadPolicy?, policyDue: Double?,
        waitingForVisibility: Bool, pendingRequest: PendingRequest?, inFlight: ReloadDecision?,
        backoffUntil: Double?, lastFailure: FailureRecord?, next: PlannedReload?, pushAllowance: Int = 0,
        pushesInWindow: Int = 0, pushAvailableAt: Double? = nil
    ) {
        self.instanceID = instanceID
        self.time = time
        self.isVisible = isVisible
        self.tier = tier
        self.allowance = allowance
        self.countedInWindow = countedInWindow
        self.budgetAvailableAt = budgetAvailableAt
        self.spacingAvailableAt = spacingAvailableAt
        self.policy = policy
        self.policyDue = policyDue
        self.waitingForVisibility = waitingForVisibility
        self.pendingRequest = pendingRequest
        self.inFlight = inFlight
        self.backoffUntil = backoffUntil
        self.lastFailure = lastFailure
        self.next = next
        self.pushAllowance = pushAllowance
        self.pushesInWindow = pushesInWindow
        self.pushAvailableAt = pushAvailableAt ?? time
    }

    public var description: String {
        func at(_ t: Double) -> String { "\(Timestamp.iso8601(t)) (\(Timestamp.relative(t, to: time)))" }
        var lines = ["instance \(instanceID) at \(Timestamp.iso8601(time))"]
        lines.append("  visible: \(isVisible), tier: \(tier.rawValue), budget: \(countedInWindow)/\(allowance) in 24h")
        if budgetAvailableAt > time { lines.append("  budget spent: next counted reload at \(at(budgetAvailableAt))") }
        lines.append("  push budget: \(pushesInWindow)/\(pushAllowance) in 24h")
        if pushAvailableAt > time { lines.append("  push budget spent: next push reload at \(at(pushAvailableAt))") }
        if let spacingAvailableAt, spacingAvailableAt > time {
            lines.append("  spacing: next counted reload not before \(at(spacingAvailableAt))")
        }
        lines.append("  policy: \(policy.map { "\($0)" } ?? "none yet")" + (policyDue.map { ", due \(at($0))" } ?? ""))
        if waitingForVisibility { lines.append("  hidden: the due reload waits until the instance is shown") }
        if let pendingRequest {
            lines.append(
                "  pending request: \(pendingRequest.trigger) \(pendingRequest.charge) since \(at(pendingRequest.requestedAt))"
            )
        }
        if let inFlight { lines.append("  in flight: \(inFlight)") }
        if let lastFailure {
            lines.append(
                "  last failure: \(lastFailure.reason) at \(at(lastFailure.time)), \(lastFailure.consecutiveFailures) in a row, retry at \(at(lastFailure.retryAt))"
            )
        }
        if let next {
            var line = "  next reload: \(at(next.time)) \(next.trigger) \(next.charge)"
            if let deferral = next.deferral { line += ", deferred (\(deferral))" }
            lines.append(line)
        } else if inFlight == nil {
            lines.append("  next reload: none scheduled")
        }
        return lines.joined(separator: "\n")
    }
}
