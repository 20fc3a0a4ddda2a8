/// The scheduler's instances, by position, as two arrays: the hot records
/// (what the rules read on every plan, 64 bytes each) and the cold ones
/// (names, timeline, ledgers, boxes). An ``InstanceState`` is made on
/// demand; the hot paths read and write the records in place.
struct InstanceRecords: Sendable {
    private(set) var hot: [HotRecord] = []
    private(set) var cold: [ColdRecord] = []

    init() {}

    /// The records of `states`, whose reloads in flight no ticket names
    /// (``ColdRecord/forgetSerial()``).
    init(_ states: [InstanceState]) {
        hot.reserveCapacity(states.count)
        cold.reserveCapacity(states.count)
        for s in states {
            append(s)
            if s.hot.isInFlight { cold[cold.count - 1].forgetSerial() }
        }
    }

    /// Every instance's state, in position order.
    var states: [InstanceState] { indices.map { self[$0] } }

    var count: Int { hot.count }
    var indices: Range<Int> { 0..<hot.count }

    /// The state of the instance at `p`. Changed in place, its cold record
    /// is moved out of the array while it changes (not copied), so that its
    /// ledger and boxes stay uniquely referenced and change without a copy.
    subscript(p: Int) -> InstanceState {
        get { InstanceState(hot: hot[p], cold: cold[p]) }
        set {
            hot[p] = newValue.hot
            cold[p] = newValue.cold
        }
        _modify {
            var taken = ColdRecord.placeholder
            swap(&taken, &cold[p])
            var s = InstanceState(hot: hot[p], cold: consume taken)
            defer {
                hot[p] = s.hot
                swap(&s.cold, &cold[p])
            }
            yield &s
        }
    }

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
        indices.allSatisfy { InstanceState(hot: hot[$0], cold: cold[$0]).flagsAreInStep }
    }

    // The changes a reload makes, on the records in place, each keeping the
    // hot record's copy of what it changes in the cold one.

    /// Sets the in-flight record of the instance at `p`, in a box from
    /// `spares` when it has none (``ColdRecord/setInFlight(_:reusing:)``).
    mutating func setInFlight(_ p: Int, _ record: consuming InFlightRecord, reusing spares: inout [InFlightBox]) {
        cold[p].setInFlight(record, reusing: &spares)
        hot[p].isInFlight = true
    }

    /// Clears the in-flight record of the instance at `p`, its box handed
    /// to `spares` when given (and not shared).
    mutating func clearInFlight(_ p: Int, into spares: inout [InFlightBox]) {
        cold[p].clearInFlight(into: &spares)
        hot[p].isInFlight = false
    }

    /// Clears the in-flight record of the instance at `p`, its box let go.
    mutating func clearInFlight(_ p: Int) {
        cold[p].inFlight = nil
        hot[p].isInFlight = false
    }

    /// Records a counted reload at `time` in the ledger of the instance at `p`.
    mutating func recordCounted(_ p: Int, at time: Double, window: Double) {
        cold[p].ledger.record(time, window: window)
        hot[p].ledgerLast = cold[p].ledger.last
    }

    /// Reads the records of the instances at `positions` (each position
    /// `p` as `p`, or as `~p` when negative) ahead of the work on them, in
    /// two passes: every line of the records, then the blocks they point
    /// to (the ledger ring's first line, header, oldest and newest times;
    /// the in-flight box's first line). The loads of one pass do not wait on
    /// each other, so the processor has many cache misses in flight at
    /// once, where the work on one instance after another waits on each of
    /// its misses in turn (at 100,000 instances the records are not in the
    /// cache). Returns a number made from what was read, for the caller to
    /// keep, so the reads are made.
    func readAhead(_ positions: UnsafeBufferPointer<Int>) -> UInt64 {
        var sum: UInt64 = 0
        hot.withUnsafeBufferPointer { hot in
            cold.withUnsafeBufferPointer { cold in
                // Every line of both records: the cold record (152 bytes) spans
                // three or four, and issuing and completing read or write
                // fields on each.
                let (hotBase, coldBase) = (hot.baseAddress.unsafelyUnwrapped, cold.baseAddress.unsafelyUnwrapped)
                for p in positions {
                    let p = p < 0 ? ~p : p
                    sum &+= ReadAhead.lines(hotBase + p, bytes: MemoryLayout<HotRecord>.size)
                    sum &+= ReadAhead.lines(coldBase + p, bytes: MemoryLayout<ColdRecord>.size)
                }
                for p in positions {
                    let p = p < 0 ? ~p : p
                    sum &+= cold[p].ledger.readAhead() &+ cold[p].readAheadInFlight()
                }
            }
        }
        return sum
    }

    mutating func append(_ s: InstanceState) {
        hot.append(s.hot)
        cold.append(s.cold)
    }

    mutating func remove(at p: Int) -> InstanceState {
        InstanceState(hot: hot.remove(at: p), cold: cold.remove(at: p))
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
                        hot: hot.baseAddress.unsafelyUnwrapped + p, cold: cold.baseAddress.unsafelyUnwrapped + p))
            }
        }
    }
}
