/// An instance's two records as the rules read them (``ReloadRules``):
/// pointers into the scheduler's arrays, or into one ``InstanceState``,
/// valid for one call. What is read on every plan comes from the hot
/// record; the cold one is read only when its flags say it holds something
/// (the rare values), or for a counted charge (the ledger).
struct InstanceView {
    let hot: UnsafePointer<HotRecord>
    let cold: UnsafePointer<ColdRecord>
    /// Where the ledger's ring is: its slot in the scheduler's
    /// ``LedgerArena`` and the arena's times (or, for an ``InstanceState``,
    /// a slot made for its own ring).
    let ledger: Ledger

    /// A ring's slot and the times its offset counts from.
    typealias Ledger = (slot: UnsafePointer<LedgerArena.Slot>, times: UnsafeMutablePointer<Double>)

    init(hot: UnsafePointer<HotRecord>, cold: UnsafePointer<ColdRecord>, ledger: Ledger) {
        self.hot = hot
        self.cold = cold
        self.ledger = ledger
    }

    /// A view of the records in the scheduler's `line`.
    @inline(__always)
    init(line: UnsafePointer<InstanceLine>, ledger: Ledger) {
        self.init(hot: InstanceLine.hot(line), cold: InstanceLine.cold(line), ledger: ledger)
    }

    /// Calls `body` with a view of `state`.
    static func of<R>(_ state: InstanceState, _ body: (InstanceView) -> R) -> R {
        withUnsafePointer(to: state.hot) { hot in
            withUnsafePointer(to: state.cold) { cold in
                state.storedLedger.reading { ring in
                    // (An empty ring's times are never read: an address
                    // that is not null, as an empty array's.)
                    let none = UnsafeMutablePointer<Double>(bitPattern: MemoryLayout<Double>.alignment)
                    let ring = ring ?? LedgerRing(times: none.unsafelyUnwrapped, start: 0, count: 0, capacity: 0)
                    let slot = LedgerArena.Slot(
                        offset: 0, capacity: UInt32(ring.capacity), start: UInt32(ring.start), count: UInt32(ring.count)
                    )
                    return withUnsafePointer(to: slot) { slot in
                        body(InstanceView(hot: hot, cold: cold, ledger: (slot, ring.times)))
                    }
                }
            }
        }
    }

    /// The ledger's ``RollingLedger/nextAllowed(from:limit:window:)``.
    func ledgerNextAllowed(from time: Double, limit: Int, window: Double) -> Double {
        LedgerArena.ring(ledger.slot.pointee, in: ledger.times).nextAllowed(from: time, limit: limit, window: window)
    }

    var isInFlight: Bool { hot.pointee.isInFlight }
    var isVisible: Bool { hot.pointee.isVisible }
    var addedAt: Double { hot.pointee.addedAt }
    var policyDue: Double? { hot.pointee.policyDue }
    var timelineReceivedAt: Double? { hot.pointee.timelineReceivedAt }
    var visibleSince: Double? { hot.pointee.visibleSince }
    /// The last counted reload's time (the ledger's last), from the hot record.
    var ledgerLast: Double? { hot.pointee.ledgerLast }
    var views: ViewHistory { hot.pointee.views }
    var consecutiveFailures: Int { hot.pointee.consecutiveFailures }
    var request: PendingRequest? { hot.pointee.hasRare ? cold.pointee.request : nil }
    var locationChangeAt: Double? { hot.pointee.hasRare ? cold.pointee.locationChangeAt : nil }
    var backoffUntil: Double? { hot.pointee.hasRare ? cold.pointee.backoffUntil : nil }
}
