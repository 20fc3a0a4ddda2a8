/// The records of the reloads in flight (``InFlightRecord``), as plain
/// values in one dense array, each at a slot that its instance's cold record
/// names (``ColdRecord/flightSlot``).
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
/// A value (copy on write, as the scheduler's other arrays): a copy of the
/// scheduler keeps its own records.
struct InFlightTable: Sendable {
    /// The records by slot. A slot not in use keeps its last record until
    /// it is taken again (its values are never read).
    private var records: [InFlightRecord] = []
    /// Slots below ``unused`` given back, taken again last in, first out.
    private var free: [Int32] = []
    /// Slots from here on (to the end of ``records``) were not taken since
    /// the table was last empty.
    private var unused = 0
    /// Slots in use.
    private(set) var live = 0

    init() {}

    /// How many records the table holds room for (in use or not).
    var capacity: Int { records.count }

    /// Puts `record` in a slot and returns the slot.
    mutating func insert(_ record: consuming InFlightRecord) -> Int32 {
        live += 1
        if let slot = free.popLast() {
            records[Int(slot)] = record
            return slot
        }
        if unused < records.count {
            records[unused] = record
        } else {
            records.append(record)
        }
        unused += 1
        return Int32(unused - 1)
    }

    /// The record at `slot`, which is in use.
    subscript(slot: Int32) -> InFlightRecord {
        get { records[Int(slot)] }
        _modify { yield &records[Int(slot)] }
    }

    /// Gives `slot` back. When no slot is in use any more, the next ones are
    /// handed out from the first again.
    mutating func remove(_ slot: Int32) {
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
        records = []
        free = []
        unused = 0
    }

    /// Reads the first line of the record at `slot` ahead of the work (see
    /// ``InstanceRecords/readAhead(_:)``). Returns a number made from it.
    func readAhead(_ slot: Int32) -> UInt64 {
        guard slot >= 0 else { return 0 }
        return records.withUnsafeBufferPointer {
            ReadAhead.lines($0.baseAddress.unsafelyUnwrapped + Int(slot), bytes: 1)
        }
    }
}
