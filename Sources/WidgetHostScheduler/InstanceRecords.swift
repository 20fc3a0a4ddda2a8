import WidgetHostModel

/// The scheduler's instances, by position, as two arrays: their lines (what
/// a reload reads and writes, 128 bytes each: the hot record, the cold one
/// and the position's numbers, ``InstanceLine``) and their names; their
/// ledgers, in an arena (``LedgerArena``); and the records of their reloads
/// in flight: in the line when it can rebuild them (``LineFlight``: the
/// steady state's counted policy reloads), the others in a table of their
/// own (``InFlightTable``) at the slot the cold record names, the serial
/// number of each in its line. An ``InstanceState`` is made on demand; the
/// hot paths read and write the records in place.
///
/// Not copyable: its arrays are owned (``OwnedArray``), written with no
/// check of a shared buffer; ``clone()`` copies them.
struct InstanceRecords: ~Copyable, Sendable {
    private(set) var lines = OwnedArray<InstanceLine>()
    /// The instances' names, which a reload handed out and completed by
    /// ticket does not read (a completion by id finds its position by them).
    private(set) var names = OwnedArray<WidgetInstance>()
    /// The reloads in flight.
    private var flights = InFlightTable()
    /// The ledgers of counted reloads.
    private(set) var ledgers = LedgerArena()

    init() {}

    private init(
        lines: borrowing OwnedArray<InstanceLine>, names: borrowing OwnedArray<WidgetInstance>,
        flights: borrowing InFlightTable, ledgers: borrowing LedgerArena
    ) {
        self.lines = lines.clone()
        self.names = names.clone()
        self.flights = flights.clone()
        self.ledgers = ledgers.clone()
    }

    /// A copy of the records, in memory of its own.
    func clone() -> InstanceRecords { InstanceRecords(lines: lines, names: names, flights: flights, ledgers: ledgers) }

    /// The records of `states`, whose reloads in flight no ticket names
    /// (their serial 0: a state taken in from outside holds another
    /// scheduler's serials, or this one's from before it was replaced).
    init(_ states: [InstanceState]) {
        lines.reserveCapacity(states.count)
        names.reserveCapacity(states.count)
        for var s in states {
            s.inFlightRecord?.serial = 0
            append(s)
        }
    }

    /// Every instance's state, in position order.
    var states: [InstanceState] { indices.map { self[$0] } }

    var count: Int { lines.count }
    var indices: Range<Int> { 0..<lines.count }

    /// The state of the instance at `p`, its ledger a value of its own
    /// (``LedgerArena/ledger(at:)``). Changed in place, its cold record and
    /// names are moved out of the arrays while it changes (not copied), so
    /// that their boxes stay uniquely referenced and change without a copy;
    /// its ledger is written back only when it changed.
    subscript(p: Int) -> InstanceState {
        get {
            InstanceState(
                hot: lines[p].hot, cold: lines[p].cold, names: names[p], flight: flight(at: p),
                ledger: ledgers.ledger(at: p))
        }
        set {
            var cold = newValue.cold
            settle(newValue.inFlightRecord, slot: lines[p].cold.flightSlot, hot: newValue.hot, into: &cold)
            lines[p].hot = newValue.hot
            lines[p].cold = cold
            names[p] = newValue.names
            ledgers.replace(at: p, with: newValue.ledger)
        }
        _modify {
            var taken = ColdRecord.placeholder
            swap(&taken, &lines[p].cold)
            var takenNames = Self.placeholderNames
            swap(&takenNames, &names[p])
            let slot = taken.flightSlot
            let hot = lines[p].hot
            let flight = flight(slot: slot, hot: hot, cold: taken)
            let ledger = ledgers.ledger(at: p)
            var s = InstanceState(
                hot: hot, cold: consume taken, names: consume takenNames, flight: flight, ledger: ledger)
            defer {
                settle(s.inFlightRecord, slot: slot, hot: s.hot, into: &s.cold)
                lines[p].hot = s.hot
                swap(&s.cold, &lines[p].cold)
                swap(&s.names, &names[p])
                // (Equal at once when unchanged: the same ring.)
                if s.ledger != ledger { ledgers.replace(at: p, with: s.ledger) }
            }
            yield &s
        }
    }

    /// Names that stand in the array while an instance's own are moved out.
    private static let placeholderNames = WidgetInstance(id: "", plugin: "", kind: "", app: "", isVisible: false)

    /// The record of the reload in flight at `p`, if any.
    @inline(__always)
    func flight(at p: Int) -> InFlightRecord? {
        lines.withUnsafeBufferPointer { lines in
            let line = lines.baseAddress.unsafelyUnwrapped + p
            let cold = InstanceLine.cold(line)
            return flight(slot: cold.pointee.flightSlot, hot: InstanceLine.hot(line).pointee, cold: cold.pointee)
        }
    }

    /// The record of a reload in flight at `slot` (a slot of the table,
    /// ``ColdRecord/keptInLine`` or -1: none) of an instance whose records
    /// are `hot` and `cold`.
    private func flight(slot: Int32, hot: borrowing HotRecord, cold: borrowing ColdRecord) -> InFlightRecord? {
        if slot >= 0 { return flights.record(at: slot, serial: cold.flightSerial) }
        // (A line's ``LineFlight`` bytes are read only here: left behind
        // when its record went to the table or ended, they mean nothing.)
        guard slot == ColdRecord.keptInLine else { return nil }
        return cold.lineFlight.record(hot: hot, lastReloadAt: cold.storedLastReloadAt, serial: cold.flightSerial)
    }

    /// The serial number of the reload in flight at `p`
    /// (``ReloadTicket/serial``), 0 when there is none: read from the
    /// instance's line, not from the table.
    @inline(__always)
    func inFlightSerial(at p: Int) -> UInt64 {
        lines.withUnsafeBufferPointer { InstanceLine.cold($0.baseAddress.unsafelyUnwrapped + p).pointee.flightSerial }
    }

    /// Keeps `flight` for an instance whose records are now `hot` and
    /// `cold`, its record at `slot` before (a slot of the table,
    /// ``ColdRecord/keptInLine`` or -1: none): in the line when it can
    /// rebuild the record (``LineFlight``), otherwise in the table
    /// (``settleInTable(_:slot:)``); the slot and serial number written to
    /// `cold`. Where each record is kept is decided by ``LineFlight``'s
    /// initializers: here for a state written back, and in the issues
    /// (``setInFlight(_:_:issuedAt:)``, and the steady path's
    /// ``setInFlight(_:line:serial:issuedAt:)`` with a form it made).
    private mutating func settle(
        _ flight: InFlightRecord?, slot: Int32, hot: borrowing HotRecord, into cold: inout ColdRecord
    ) {
        cold.flightSerial = flight?.serial ?? 0
        if let flight, let line = LineFlight(flight, hot: hot, lastReloadAt: cold.storedLastReloadAt) {
            if slot >= 0 { flights.remove(slot) }
            cold.lineFlight = line
            cold.flightSlot = ColdRecord.keptInLine
        } else {
            cold.lineFlight = LineFlight()
            cold.flightSlot = settleInTable(flight, slot: slot)
        }
    }

    /// The slot of the table that holds `flight` now, its record at `slot`
    /// before (negative: none in the table): the same slot written, a new
    /// one taken, or the old one given back.
    private mutating func settleInTable(_ flight: InFlightRecord?, slot: Int32) -> Int32 {
        switch (flight, slot >= 0) {
        case (nil, false): return -1
        case (nil, true):
            flights.remove(slot)
            return -1
        case (let flight?, true):
            flights.set(slot, flight)
            return slot
        case (let flight?, false): return flights.insert(flight)
        }
    }

    /// How many reloads in flight the table has room for.
    var flightCapacity: Int { flights.capacity }

    /// How many reloads in flight the table holds (the others are kept in
    /// their instances' lines, ``LineFlight``).
    var flightsInTable: Int { flights.live }

    /// Lets the table of reloads in flight go when none is in it and it
    /// holds room for more than `keeping` (``InFlightTable/letGo(keeping:)``).
    mutating func letGoOfFlights(keeping: Int) { flights.letGo(keeping: keeping) }

    // Read with `get`, not a `_read` coroutine: Swift 6.3.1 freed the
    // coroutine's frame before the caller was done with the value it
    // yielded (AddressSanitizer: a heap use after free in `reconfigure`,
    // 2026-11-27).

    /// The hot record at `p`, to read. (Changed through the
    /// ``InstanceState``, `self[p]`, or the methods below: a record in
    /// flight kept in the line is rebuilt from its fields.)
    subscript(hot p: Int) -> HotRecord { lines[p].hot }

    /// The cold record at `p`, to read. (Changed through the
    /// ``InstanceState``, `self[p]`, which keeps the hot record's flags in
    /// step and settles the record in flight, or the methods below.)
    subscript(cold p: Int) -> ColdRecord { lines[p].cold }

    /// The numbers of position `p` (its group, app and jitter fraction),
    /// which the scheduler's core gives when it enters the instance.
    subscript(info p: Int) -> PositionInfo {
        get { lines[p].info }
        _modify { yield &lines[p].info }
    }

    /// The names of the instance at `p`.
    subscript(names p: Int) -> WidgetInstance { names[p] }

    /// Whether every hot record's flags say what its cold record holds
    /// (``InstanceState`` keeps them in step; the tests check).
    var flagsAreInStep: Bool {
        indices.allSatisfy { self[$0].flagsAreInStep }
            && flights.live == lines.withUnsafeBufferPointer { $0.count(where: { $0.cold.flightSlot >= 0 }) }
            && lines.withUnsafeBufferPointer { lines in
                lines.allSatisfy {
                    $0.hot.isInFlight == ($0.cold.flightSlot != -1) && ($0.hot.isInFlight || $0.cold.flightSerial == 0)
                }
            }
    }

    // The changes a reload makes, on the records in place, each keeping the
    // hot record's copy of what it changes in the cold one.

    /// Sets the in-flight record of the instance at `p`, issued at `time`:
    /// in its line (``LineFlight``), or in its slot or a slot of the table
    /// taken for it; its last reload's time in the same access to the cold
    /// record.
    mutating func setInFlight(_ p: Int, _ record: consuming InFlightRecord, issuedAt time: Double) {
        let serial = record.serial
        if let line = LineFlight(record, hot: lines[p].hot, lastReloadAt: time) {
            setInFlight(p, line: line, serial: serial, issuedAt: time)
            return
        }
        let slot = lines[p].cold.flightSlot
        if slot >= 0 {
            flights.set(slot, record)
            markInFlight(p, slot: slot, serial: serial, issuedAt: time)
        } else {
            markInFlight(p, slot: flights.insert(record), serial: serial, issuedAt: time)
        }
    }

    /// ``setInFlight(_:_:issuedAt:)`` for a reload the line keeps, with the
    /// serial number `serial`: `line` must have been made by ``LineFlight``'s
    /// initializers against this line's hot record as it is and `time`
    /// (the issue loop's steady path, which makes no ``InFlightRecord``).
    @inline(__always)
    mutating func setInFlight(_ p: Int, line: LineFlight, serial: UInt64, issuedAt time: Double) {
        let slot = lines[p].cold.flightSlot
        if slot >= 0 { flights.remove(slot) }
        lines.withUnsafeMutableBufferPointer { $0[p].cold.lineFlight = line }
        markInFlight(p, slot: ColdRecord.keptInLine, serial: serial, issuedAt: time)
    }

    /// The instance at `p` in flight since `time`, its record at `slot`
    /// and its serial number `serial`.
    @inline(__always)
    private mutating func markInFlight(_ p: Int, slot: Int32, serial: UInt64, issuedAt time: Double) {
        lines.withUnsafeMutableBufferPointer { lines in
            lines[p].cold.flightSlot = slot
            lines[p].cold.flightSerial = serial
            lines[p].cold.lastReloadAt = time
            lines[p].hot.isInFlight = true
        }
    }

    /// Records a reload of the instance at `p` that ended with `timeline`
    /// at `time`, making it due at `policyDue`: its in-flight record
    /// cleared, the timeline kept, its failures reset.
    mutating func recordSuccess(_ p: Int, timeline: consuming TimelineRecord, at time: Double, policyDue: Double?) {
        // Moved in (a closure's capture of `timeline` itself would copy
        // it); the one it replaces comes out, to be released here.
        var moved: TimelineRecord? = consume timeline
        let slot = lines.withUnsafeMutableBufferPointer { lines in
            let slot = lines[p].cold.flightSlot
            lines[p].cold.flightSlot = -1
            lines[p].cold.flightSerial = 0
            swap(&lines[p].cold.timeline, &moved)
            lines[p].hot.isInFlight = false
            lines[p].hot.timelineReceivedAt = time
            lines[p].hot.policyDue = policyDue
            lines[p].hot.consecutiveFailures = 0
            return slot
        }
        if slot >= 0 { flights.remove(slot) }
    }

    /// Records a counted reload at `time` in the ledger of the instance at
    /// `p`. Returns the reloads counted in the window ending at `time`.
    @inline(__always)
    mutating func recordCounted(_ p: Int, at time: Double, window: Double) -> Int {
        let (counted, count, last) = ledgers.record(at: p, time, window: window)
        lines.withUnsafeMutableBufferPointer { $0[p].hot.noteLedger(last: last, count: count) }
        return counted
    }

    /// Reads the line of the instance at `p` ahead of the work on it: both
    /// its cache lines, the hot record and the cold one with the position's
    /// numbers (and, `forIssue`, its ledger's slot, which only issuing
    /// reads). At 100,000 instances the records are not in the
    /// cache; asked for together over a chunk of positions (the first pass
    /// of ``SchedulerCore``'s read-ahead), their lines come together, where
    /// the work on one instance after another waited on each of its misses
    /// in turn. Each later pass reads what an earlier one asked for, to
    /// find the blocks it points to.
    @inline(__always)
    func readAheadRecord(_ p: Int, forIssue: Bool) {
        lines.withUnsafeBufferPointer { InstanceLine.readAhead($0.baseAddress.unsafelyUnwrapped + p) }
        if forIssue { ledgers.readAheadSlot(p) }
    }

    /// The second pass of the read-ahead of an issue (after
    /// ``readAheadRecord(_:forIssue:)``), over positions that are not negative: the
    /// lines of the ledgers' oldest, second oldest and newest times, found
    /// from their slots, and the timelines' entries (which the reload's new
    /// timeline lets go of), found from the cold records. (An instance
    /// being issued has no record in flight; a completion reads its
    /// ticket's serial number in the line, and nothing of its record.)
    func readAheadReferenced(_ positions: UnsafeBufferPointer<Int>) {
        ledgers.readAheadTimes(positions)
        let base = lines.unsafeBaseAddress
        for p in positions {
            // (A timeline with entries is retained and released
            // around its prefetches, which the compiler cannot see
            // into; found in a loop of their own, the blocks cost
            // more than that in every issue of an entry-less one.)
            if let block = InstanceLine.timeline(base + p).pointee?.entriesBlock {
                ReadAhead.lines(block.start, bytes: block.bytes)
            }
        }
    }

    /// Appends the instance of `s`, its position's numbers to be given
    /// (``subscript(info:)``).
    mutating func append(_ s: InstanceState) {
        var cold = s.cold
        settle(s.inFlightRecord, slot: -1, hot: s.hot, into: &cold)
        lines.append(InstanceLine(hot: s.hot, cold: cold))
        names.append(s.names)
        ledgers.append(s.ledger)
    }

    mutating func remove(at p: Int) -> InstanceState {
        let flight = flight(at: p)
        _ = settleInTable(nil, slot: lines[p].cold.flightSlot)
        let ledger = ledgers.ledger(at: p)
        ledgers.remove(at: p)
        let line = lines.remove(at: p)
        return InstanceState(hot: line.hot, cold: line.cold, names: names.remove(at: p), flight: flight, ledger: ledger)
    }

    /// Calls `body` with a view of the instance at `p`, read in place (no
    /// copy of its records; valid inside `body` only). `body` must not
    /// capture the scheduler (a closure that does makes the caller copy the
    /// whole scheduler): pass it what it needs.
    @inline(__always)
    func withView<R>(_ p: Int, _ body: (InstanceView) -> R) -> R {
        lines.withUnsafeBufferPointer { lines in
            body(InstanceView(line: lines.baseAddress.unsafelyUnwrapped + p, ledger: ledgers.view(at: p)))
        }
    }
}
