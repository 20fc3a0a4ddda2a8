import WidgetHostModel

/// The scheduler's instances, by position, as two arrays: the hot records
/// (what the rules read on every plan, 64 bytes each) and the cold ones
/// (names, timeline, the box of rare values); their ledgers, in an arena
/// (``LedgerArena``); and the records of their reloads in flight, in a
/// table of their own (``InFlightTable``), each at the slot its cold record
/// names. An ``InstanceState`` is made on demand; the hot paths read and
/// write the records in place.
///
/// Not copyable: its arrays are owned (``OwnedArray``), written with no
/// check of a shared buffer; ``clone()`` copies them.
struct InstanceRecords: ~Copyable, Sendable {
    private(set) var hot = OwnedArray<HotRecord>()
    private(set) var cold = OwnedArray<ColdRecord>()
    /// The reloads in flight.
    private var flights = InFlightTable()
    /// The ledgers of counted reloads.
    private(set) var ledgers = LedgerArena()

    init() {}

    private init(
        hot: borrowing OwnedArray<HotRecord>, cold: borrowing OwnedArray<ColdRecord>, flights: borrowing InFlightTable,
        ledgers: borrowing LedgerArena
    ) {
        self.hot = hot.clone()
        self.cold = cold.clone()
        self.flights = flights.clone()
        self.ledgers = ledgers.clone()
    }

    /// A copy of the records, in memory of its own.
    func clone() -> InstanceRecords { InstanceRecords(hot: hot, cold: cold, flights: flights, ledgers: ledgers) }

    /// The records of `states`, whose reloads in flight no ticket names
    /// (their serial 0: a state taken in from outside holds another
    /// scheduler's serials, or this one's from before it was replaced).
    init(_ states: [InstanceState]) {
        hot.reserveCapacity(states.count)
        cold.reserveCapacity(states.count)
        for var s in states {
            s.inFlightRecord?.serial = 0
            append(s)
        }
    }

    /// Every instance's state, in position order.
    var states: [InstanceState] { indices.map { self[$0] } }

    var count: Int { hot.count }
    var indices: Range<Int> { 0..<hot.count }

    /// The state of the instance at `p`, its ledger a value of its own
    /// (``LedgerArena/ledger(at:)``). Changed in place, its cold record is
    /// moved out of the array while it changes (not copied), so that its
    /// boxes stay uniquely referenced and change without a copy; its ledger
    /// is written back only when it changed.
    subscript(p: Int) -> InstanceState {
        get { InstanceState(hot: hot[p], cold: cold[p], flight: flight(at: p), ledger: ledgers.ledger(at: p)) }
        set {
            let slot = settle(newValue.inFlightRecord, slot: cold[p].flightSlot)
            hot[p] = newValue.hot
            cold[p] = newValue.cold
            cold[p].flightSlot = slot
            ledgers.replace(at: p, with: newValue.ledger)
        }
        _modify {
            var taken = ColdRecord.placeholder
            swap(&taken, &cold[p])
            let slot = taken.flightSlot
            let ledger = ledgers.ledger(at: p)
            var s = InstanceState(
                hot: hot[p], cold: consume taken, flight: slot >= 0 ? flights[slot] : nil, ledger: ledger)
            defer {
                s.cold.flightSlot = settle(s.inFlightRecord, slot: slot)
                hot[p] = s.hot
                swap(&s.cold, &cold[p])
                // (Equal at once when unchanged: the same ring.)
                if s.ledger != ledger { ledgers.replace(at: p, with: s.ledger) }
            }
            yield &s
        }
    }

    /// The record of the reload in flight at `p`, if any.
    @inline(__always)
    func flight(at p: Int) -> InFlightRecord? {
        let slot = cold[p].flightSlot
        return slot >= 0 ? flights[slot] : nil
    }

    /// The serial number of the reload in flight at `p`
    /// (``ReloadTicket/serial``), 0 when there is none.
    @inline(__always)
    func inFlightSerial(at p: Int) -> UInt64 {
        let slot = cold.withUnsafeBufferPointer { $0[p].flightSlot }
        return slot >= 0 ? flights.serial(at: slot) : 0
    }

    /// The slot that holds `flight` now, its record at `slot` before (-1:
    /// none): the same slot written, a new one taken, or the old one given
    /// back.
    private mutating func settle(_ flight: InFlightRecord?, slot: Int32) -> Int32 {
        switch (flight, slot >= 0) {
        case (nil, false): return -1
        case (nil, true):
            flights.remove(slot)
            return -1
        case (let flight?, true):
            flights[slot] = flight
            return slot
        case (let flight?, false): return flights.insert(flight)
        }
    }

    /// How many reloads in flight the table has room for.
    var flightCapacity: Int { flights.capacity }

    /// Lets the table of reloads in flight go when none is in flight and it
    /// holds room for more than `keeping` (``InFlightTable/letGo(keeping:)``).
    mutating func letGoOfFlights(keeping: Int) { flights.letGo(keeping: keeping) }

    // Read with `get`, not a `_read` coroutine: Swift 6.3.1 freed the
    // coroutine's frame before the caller was done with the value it
    // yielded (AddressSanitizer: a heap use after free in `reconfigure`,
    // 2026-11-27).

    /// The hot record at `p`, to read or change in place.
    subscript(hot p: Int) -> HotRecord {
        get { hot[p] }
        _modify { yield &hot[p] }
    }

    /// The cold record at `p`, to read or change in place. A change that
    /// adds or drops a box must keep the hot record's flags in step: change
    /// those through the ``InstanceState`` (`self[p]`) instead.
    subscript(cold p: Int) -> ColdRecord {
        get { cold[p] }
        _modify { yield &cold[p] }
    }

    /// Whether every hot record's flags say what its cold record holds
    /// (``InstanceState`` keeps them in step; the tests check).
    var flagsAreInStep: Bool {
        indices.allSatisfy { self[$0].flagsAreInStep }
            && flights.live == cold.withUnsafeBufferPointer { $0.count(where: { $0.flightSlot >= 0 }) }
    }

    // The changes a reload makes, on the records in place, each keeping the
    // hot record's copy of what it changes in the cold one.

    /// Sets the in-flight record of the instance at `p`, issued at `time`:
    /// in its slot, or in a slot of the table taken for it; its last
    /// reload's time in the same access to the cold record.
    mutating func setInFlight(_ p: Int, _ record: consuming InFlightRecord, issuedAt time: Double) {
        let slot = cold[p].flightSlot
        if slot >= 0 {
            flights[slot] = record
            markInFlight(p, slot: slot, issuedAt: time)
        } else {
            markInFlight(p, slot: flights.insert(record), issuedAt: time)
        }
    }

    /// ``setInFlight(_:_:issuedAt:)`` for a reload as the table keeps it,
    /// in plain numbers (no record made to be taken apart).
    @inline(__always)
    mutating func setInFlight(_ p: Int, plain stored: InFlightTable.Stored, issuedAt time: Double) {
        let slot = cold[p].flightSlot
        if slot >= 0 {
            flights.set(slot, plain: stored)
            markInFlight(p, slot: slot, issuedAt: time)
        } else {
            markInFlight(p, slot: flights.insert(plain: stored), issuedAt: time)
        }
    }

    /// The instance at `p` in flight since `time`, its record at `slot`:
    /// one access to each record array.
    @inline(__always)
    private mutating func markInFlight(_ p: Int, slot: Int32, issuedAt time: Double) {
        cold.withUnsafeMutableBufferPointer { cold in
            cold[p].flightSlot = slot
            cold[p].lastReloadAt = time
        }
        hot[p].isInFlight = true
    }

    /// Records a reload of the instance at `p` that ended with `timeline`
    /// at `time`, making it due at `policyDue`: its in-flight record
    /// cleared, the timeline kept, its failures reset. Each array is
    /// written through one access (a write of a field at a time checked
    /// the array's uniqueness at each).
    mutating func recordSuccess(_ p: Int, timeline: consuming TimelineRecord, at time: Double, policyDue: Double?) {
        // Moved in (a closure's capture of `timeline` itself would copy
        // it); the one it replaces comes out, to be released here.
        var moved: TimelineRecord? = consume timeline
        let slot = cold.withUnsafeMutableBufferPointer { cold in
            let slot = cold[p].flightSlot
            cold[p].flightSlot = -1
            swap(&cold[p].timeline, &moved)
            return slot
        }
        if slot >= 0 { flights.remove(slot) }
        hot.withUnsafeMutableBufferPointer { hot in
            hot[p].isInFlight = false
            hot[p].timelineReceivedAt = time
            hot[p].policyDue = policyDue
            hot[p].consecutiveFailures = 0
        }
    }

    /// Records a counted reload at `time` in the ledger of the instance at
    /// `p`. Returns the reloads counted in the window ending at `time`.
    @inline(__always)
    mutating func recordCounted(_ p: Int, at time: Double, window: Double) -> Int {
        let (counted, count, last) = ledgers.record(at: p, time, window: window)
        hot.withUnsafeMutableBufferPointer { $0[p].noteLedger(last: last, count: count) }
        return counted
    }

    /// Reads the record of the instance at `p` ahead of the work on it:
    /// the line of the hot record and those of the cold one that a reload
    /// reads and writes (and, `forIssue`, its ledger's slot, which only
    /// issuing reads). At 100,000 instances the records are not in the
    /// cache; asked for together over a chunk of positions (the first pass
    /// of ``SchedulerCore``'s read-ahead), their lines come together, where
    /// the work on one instance after another waited on each of its misses
    /// in turn. Each later pass reads what an earlier one asked for, to
    /// find the blocks it points to.
    @inline(__always)
    func readAheadRecord(_ p: Int, forIssue: Bool) {
        hot.withUnsafeBufferPointer { ReadAhead.lines(of: $0.baseAddress.unsafelyUnwrapped + p) }
        cold.withUnsafeBufferPointer {
            ReadAhead.lines($0.baseAddress.unsafelyUnwrapped + p, bytes: Self.coldBytesOfAReload)
        }
        if forIssue { ledgers.readAheadSlot(p) }
    }

    /// The second pass of the read-ahead of an issue (after
    /// ``readAheadRecord(_:forIssue:)``), over positions that are not negative: the
    /// lines of the ledgers' oldest, second oldest and newest times, found
    /// from their slots, and the timelines' entries (which the reload's new
    /// timeline lets go of), found from the cold records. (An instance
    /// being issued has no record in flight; a completion's is read ahead
    /// by ``readAheadFlights(_:)``.)
    func readAheadReferenced(_ positions: UnsafeBufferPointer<Int>) {
        ledgers.readAheadTimes(positions)
        cold.withUnsafeBufferPointer { cold in
            for p in positions {
                // (A timeline with entries is retained and released
                // around its prefetches, which the compiler cannot see
                // into; found in a loop of their own, the blocks cost
                // more than that in every issue of an entry-less one.)
                if let block = cold[p].timeline?.entriesBlock { ReadAhead.lines(block.start, bytes: block.bytes) }
            }
        }
    }

    /// The second pass of the read-ahead of a completion (after
    /// ``readAheadRecord(_:forIssue:)``): the records in flight, found
    /// from the cold records' slots, which a completion checks its ticket
    /// against and gives back.
    func readAheadFlights(_ positions: UnsafeBufferPointer<Int>) {
        cold.withUnsafeBufferPointer { cold in
            for p in positions {
                let slot = cold[p].flightSlot
                if slot >= 0 { flights.readAhead(slot) }
            }
        }
    }

    /// The bytes of a cold record that issuing and completing a reload read
    /// and write: the fields before the instance (whose id is hashed once,
    /// when it enters: ``PositionInfo/jitterFraction``).
    static var coldBytesOfAReload: Int { MemoryLayout<ColdRecord>.offset(of: \ColdRecord.instance) ?? 0 }

    mutating func append(_ s: InstanceState) {
        hot.append(s.hot)
        cold.append(s.cold)
        cold[cold.count - 1].flightSlot = settle(s.inFlightRecord, slot: -1)
        ledgers.append(s.ledger)
    }

    mutating func remove(at p: Int) -> InstanceState {
        let flight = flight(at: p)
        _ = settle(nil, slot: cold[p].flightSlot)
        let ledger = ledgers.ledger(at: p)
        ledgers.remove(at: p)
        return InstanceState(hot: hot.remove(at: p), cold: cold.remove(at: p), flight: flight, ledger: ledger)
    }

    /// Calls `body` with a view of the instance at `p`, read in place (no
    /// copy of its records; valid inside `body` only). `body` must not
    /// capture the scheduler (a closure that does makes the caller copy the
    /// whole scheduler): pass it what it needs.
    @inline(__always)
    func withView<R>(_ p: Int, _ body: (InstanceView) -> R) -> R {
        hot.withUnsafeBufferPointer { hot in
            cold.withUnsafeBufferPointer { cold in
                body(
                    InstanceView(
                        hot: hot.baseAddress.unsafelyUnwrapped + p, cold: cold.baseAddress.unsafelyUnwrapped + p,
                        ledger: ledgers.view(at: p)))
            }
        }
    }
}
