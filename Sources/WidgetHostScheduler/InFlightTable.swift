/// The records of the reloads in flight (``InFlightRecord``) that their
/// instances' lines cannot rebuild (``LineFlight``), as plain values in one
/// dense array, each at a slot that its instance's cold record names
/// (``ColdRecord/flightSlot``).
///
/// Few instances have a reload in flight at a time (a wakeup's batch), so a
/// record per instance would waste its size on every other one; a box per
/// reload (a class instance, as before) cost a reference count, a uniqueness
/// check and a spare list on every issue and completion, and its lines lay
/// wherever the allocator had put it. Here the slots are handed out in order
/// from the first whenever none is in use (a batch's completions end
/// there), so a batch's records are written and then read as one stream,
/// and a slot given back is taken again first.
///
/// A reload is kept as plain numbers (``Stored``), written and read
/// without a reference count, unless its record holds strings or a second
/// deferral: a WidgetCenter trigger (with its kind and app), names changed
/// in flight, a deferral a developer would have had. Those few are kept
/// whole beside it, in a dictionary by slot. (The steady state's reloads
/// are counted policy reloads, kept in their lines, not here; a start's
/// burst is every instance's first reload: plain.)
///
/// The serial numbers are not here: each is in its instance's line
/// (``ColdRecord/flightSerial``), which a completion reads anyway, so that
/// checking a ticket and giving a plain record's slot back read nothing of
/// the table (a record of 64 bytes, one line, written at the issue).
///
/// Not copyable, as the scheduler's core that holds it: its arrays are
/// owned (``OwnedArray``), written with no check of a shared buffer; a
/// copy of the scheduler keeps its own records (``clone()``).
struct InFlightTable: ~Copyable, Sendable {
    /// A record as the table keeps it: plain numbers, without the serial
    /// (64 bytes). The record itself when ``isWhole`` is false; a mark only
    /// (the record in `whole`) when it is true.
    struct Stored: Sendable {
        var time: Double = 0
        var dueSince: Double = 0
        var attempt = 0
        var allowance = 0
        var countedInWindow = 0
        var deferralFrom: Double = 0
        var deferralUntil: Double = 0
        /// 0: no deferral; otherwise the cause's ``code(of:)``.
        var deferralCause: UInt8 = 0
        /// The trigger's ``code(of:)-(ReloadTrigger)`` (0: the policy).
        var trigger: UInt8 = 0
        /// 0: counted; otherwise 1 + the free reason's place in
        /// `FreeReason.allCases`.
        var charge: UInt8 = 0
        var hasDeferralUntil = false
        var hasAllowance = false
        var hasCountedInWindow = false
        /// Whether the record is kept whole in `whole`.
        var isWhole = false

        /// `record` as plain numbers, when its trigger holds no strings
        /// and it has no would-be deferral and no names of its own; nil
        /// otherwise.
        init?(_ record: borrowing InFlightRecord) {
            guard let trigger = Self.code(of: record.trigger), record.wouldHaveBeenDeferred == nil,
                record.names == nil
            else { return nil }
            self.trigger = trigger
            if case .free(let reason) = record.charge {
                charge = UInt8(FreeReason.allCases.firstIndex(of: reason).unsafelyUnwrapped + 1)
            }
            time = record.time
            dueSince = record.dueSince
            attempt = record.attempt
            if let allowance = record.allowance {
                self.allowance = allowance
                hasAllowance = true
            }
            if let counted = record.countedInWindow {
                countedInWindow = counted
                hasCountedInWindow = true
            }
            deferral = record.deferral
        }

        /// The record's deferral.
        var deferral: Deferral? {
            get {
                deferralCause == 0
                    ? nil
                    : Deferral(
                        from: deferralFrom, until: hasDeferralUntil ? deferralUntil : nil,
                        cause: Self.cause(of: deferralCause))
            }
            set {
                guard let deferral = newValue else {
                    deferralCause = 0
                    return
                }
                deferralFrom = deferral.from
                deferralUntil = deferral.until ?? 0
                hasDeferralUntil = deferral.until != nil
                deferralCause = Self.code(of: deferral.cause)
            }
        }

        /// A slot never used.
        init() {}

        /// The mark of a record kept whole.
        static let wholeMark: Stored = {
            var stored = Stored()
            stored.isWhole = true
            return stored
        }()

        /// The record these numbers are (``isWhole`` false), with the
        /// serial number `serial`.
        func record(serial: UInt64) -> InFlightRecord {
            var record = InFlightRecord(
                time: time, dueSince: dueSince, trigger: Self.trigger(of: trigger),
                charge: charge == 0 ? .counted : .free(FreeReason.allCases[Int(charge) - 1]), attempt: attempt,
                deferral: deferral, wouldHaveBeenDeferred: nil, allowance: hasAllowance ? allowance : nil,
                countedInWindow: hasCountedInWindow ? countedInWindow : nil)
            record.serial = serial
            return record
        }

        /// A trigger without strings as a number (nil for the others).
        static func code(of trigger: ReloadTrigger) -> UInt8? {
            switch trigger {
            case .policy: 0
            case .added: 1
            case .appIntent: 2
            case .significantLocationChange: 3
            case .push: 4
            case .systemChange(.locale): 5
            case .systemChange(.accessibility): 6
            case .systemChange(.timeZone): 7
            case .reloadTimelines, .reloadAllTimelines: nil
            }
        }

        static func trigger(of code: UInt8) -> ReloadTrigger {
            switch code {
            case 1: .added
            case 2: .appIntent
            case 3: .significantLocationChange
            case 4: .push
            case 5: .systemChange(.locale)
            case 6: .systemChange(.accessibility)
            case 7: .systemChange(.timeZone)
            default: .policy
            }
        }

        static func code(of cause: DeferralCause) -> UInt8 {
            switch cause {
            case .budget: 1
            case .spacing: 2
            case .backoff: 3
            case .hidden: 4
            case .freeRateCap: 5
            case .pushBudget: 6
            case .coalescing: 7
            case .late: 8
            }
        }

        static func cause(of code: UInt8) -> DeferralCause {
            switch code {
            case 1: .budget
            case 2: .spacing
            case 3: .backoff
            case 4: .hidden
            case 5: .freeRateCap
            case 6: .pushBudget
            case 7: .coalescing
            default: .late
            }
        }
    }

    /// The records by slot. A slot not in use keeps its last record until
    /// it is taken again (its values are never read).
    private var records = OwnedArray<Stored>()
    /// The records kept whole, by slot.
    private var whole: [Int32: InFlightRecord] = [:]
    /// Slots below ``unused`` given back, taken again last in, first out.
    private var free = OwnedArray<Int32>()
    /// Slots from here on (to the end of ``records``) were not taken since
    /// the table was last empty.
    private var unused = 0
    /// Slots in use.
    private(set) var live = 0

    init() {}

    /// A copy of the table, in memory of its own.
    func clone() -> InFlightTable {
        var copy = InFlightTable()
        copy.records = records.clone()
        copy.whole = whole
        copy.free = free.clone()
        copy.unused = unused
        copy.live = live
        return copy
    }

    /// How many records in use are kept whole.
    var recordsKeptWhole: Int { whole.count }

    /// How many records the table holds room for (in use or not).
    var capacity: Int { records.count }

    /// Puts `record` in a slot and returns the slot.
    mutating func insert(_ record: consuming InFlightRecord) -> Int32 {
        let slot = take()
        set(slot, record)
        return slot
    }

    /// Replaces the record at `slot` (in use) with the plain numbers
    /// `stored`.
    mutating func set(_ slot: Int32, plain stored: Stored) {
        if !whole.isEmpty, records[Int(slot)].isWhole { whole[slot] = nil }
        records[Int(slot)] = stored
    }

    /// A slot not in use, now in use (its record not yet written; a slot
    /// given back is never whole).
    private mutating func take() -> Int32 {
        live += 1
        if !free.isEmpty { return free.removeLast() }
        if unused == records.count { records.append(Stored()) }
        unused += 1
        return Int32(unused - 1)
    }

    /// The record at `slot`, which is in use, with the serial number
    /// `serial` (kept by its instance, ``ColdRecord/flightSerial``).
    func record(at slot: Int32, serial: UInt64) -> InFlightRecord {
        let stored = records[Int(slot)]
        guard stored.isWhole else { return stored.record(serial: serial) }
        var record = whole[slot].unsafelyUnwrapped
        record.serial = serial
        return record
    }

    /// Replaces the record at `slot` (in use) with `record` (its serial
    /// not kept here).
    mutating func set(_ slot: Int32, _ record: consuming InFlightRecord) {
        if let stored = Stored(record) {
            set(slot, plain: stored)
        } else {
            records[Int(slot)] = .wholeMark
            whole[slot] = record
        }
    }

    /// Gives `slot` back. When no slot is in use any more, the next ones are
    /// handed out from the first again. The record's line is read only
    /// when some record is kept whole (a completion of a plain reload
    /// reads nothing of the table).
    @inline(__always)
    mutating func remove(_ slot: Int32) {
        if !whole.isEmpty, records[Int(slot)].isWhole {
            whole[slot] = nil
            records[Int(slot)].isWhole = false
        }
        live -= 1
        if live == 0 {
            free.removeAll(keepingCapacity: true)
            unused = 0
        } else {
            free.append(slot)
        }
    }

    /// Lets the records' memory go when no slot is in use and the table is
    /// larger than `keeping` (after a burst: every instance's first reload
    /// at the start).
    mutating func letGo(keeping: Int) {
        guard live == 0, records.count > keeping else { return }
        records.removeAll()
        whole = [:]
        free.removeAll()
        unused = 0
    }
}
