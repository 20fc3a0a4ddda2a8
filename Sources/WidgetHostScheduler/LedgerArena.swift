/// The scheduler's ledgers of counted reloads, one per instance position:
/// each a ring of times (a ``LedgerRing``) in a block of one array of times,
/// found by a 16-byte ``Slot`` per position that says where its block is,
/// how large, and where the ring starts and how many times it holds.
///
/// A ledger of its own (``RollingLedger``) is a heap block with its ring's
/// header in it, reached through a reference the cold record held: a
/// reload waited for the record, then for the header, then for the times,
/// and asked whether the reference was shared before it recorded. Here a
/// position's slot says where its times are, so that they are read ahead as
/// soon as the slot is, and recording asks nothing of a reference: the arena
/// belongs to the scheduler's core, which is not copyable, and an
/// ``InstanceState`` gets a ``RollingLedger`` of its own (``ledger(at:)``).
///
/// Blocks are a whole number of cache lines (``blockStep`` times), and
/// every block starts on a line (the array's own block does). A ring that
/// fills moves to a block a line larger; the block it left is garbage,
/// listed by size to be taken by the next ring that needs one of that size
/// (rings grow at different rates, so a block one ring outgrew is the next
/// one another grows into), until the array is compacted, all rings moved
/// down in position order, when the garbage passes an eighth of what is
/// held (``compactIfWasteful()``).
///
/// ```swift
/// var arena = LedgerArena()
/// arena.append(RollingLedger(times: [100]))
/// arena.record(at: 0, 400, window: 86_400)  // (counted: 2, held: 2, last: 400)
/// arena.ledger(at: 0).times                 // [100, 400]
/// ```
struct LedgerArena: ~Copyable, Sendable {
    /// Where the ring of a position is: its block (`offset`, `capacity`, in
    /// times) and the ring in it.
    struct Slot: Sendable, Equatable {
        var offset: UInt32 = 0
        var capacity: UInt32 = 0
        var start: UInt32 = 0
        var count: UInt32 = 0
    }

    /// The slots, by position.
    private var slots = OwnedArray<Slot>()
    /// The blocks, one after another.
    private var times = OwnedArray<Double>()
    /// The times in blocks no position holds.
    private(set) var garbage = 0
    /// The offsets of the garbage blocks of each size up to
    /// ``listedSizes`` lines (index: lines - 1), to be taken again.
    private var free: [[UInt32]] = []

    /// The largest blocks listed to be taken again, in lines.
    static let listedSizes = 32

    /// The garbage below which the array is never compacted, in times.
    let minimumGarbage: Int

    /// A block's size is a multiple of this many times: a cache line.
    static let blockStep = ReadAhead.lineSize / MemoryLayout<Double>.stride

    /// The most times the array holds (offsets are 32 bits).
    static let maximumTimes = Int(UInt32.max)

    /// An empty arena, compacted only past `minimumGarbage` times of
    /// garbage (64 lines; the tests make it compact sooner).
    init(minimumGarbage: Int = 64 * blockStep) {
        self.minimumGarbage = minimumGarbage
    }

    private init(copying other: borrowing LedgerArena) {
        slots = other.slots.clone()
        times = other.times.clone()
        garbage = other.garbage
        free = other.free
        minimumGarbage = other.minimumGarbage
    }

    /// A copy, in memory of its own.
    func clone() -> LedgerArena { LedgerArena(copying: self) }

    /// The number of positions.
    var count: Int { slots.count }

    /// The times the blocks take, garbage included (for the tests and profiles).
    var timesHeld: Int { times.count }

    /// The slot of the ledger at `p` (for the tests).
    func slot(at p: Int) -> Slot { slots[p] }

    // MARK: Reading

    /// Calls `body` with the ring at `p`, to read.
    @inline(__always)
    func reading<R>(at p: Int, _ body: (LedgerRing) -> R) -> R {
        let slot = slots[p]
        return times.withUnsafeBufferPointer { times in
            body(Self.ring(slot, in: UnsafeMutablePointer(mutating: times.baseAddress.unsafelyUnwrapped)))
        }
    }

    /// The ring `slot` names in the blocks at `times`.
    @inline(__always)
    static func ring(_ slot: Slot, in times: UnsafeMutablePointer<Double>) -> LedgerRing {
        LedgerRing(
            times: times + Int(slot.offset), start: Int(slot.start), count: Int(slot.count),
            capacity: Int(slot.capacity))
    }

    /// Where the ring at `p` is, for the rules' view of an instance
    /// (``InstanceView``): valid until the arena changes, for a view made
    /// and dropped within one call.
    @inline(__always)
    func view(at p: Int) -> InstanceView.Ledger {
        let (slots, times) = unsafeAddresses
        return (slots + p, times)
    }

    /// The slots' and the blocks' addresses (``view(at:)`` is the ring at
    /// a position), with the same validity.
    @inline(__always)
    var unsafeAddresses: (slots: UnsafePointer<Slot>, times: UnsafeMutablePointer<Double>) {
        (UnsafePointer(slots.unsafeBaseAddress), times.unsafeBaseAddress)
    }

    /// The ledger at `p` as a value of its own.
    func ledger(at p: Int) -> RollingLedger {
        reading(at: p) { RollingLedger(copying: $0) }
    }

    /// The first overlap of two blocks, or of a block and the array's
    /// end, among the positions' blocks and those listed to be taken again,
    /// described; nil when there is none (for the tests).
    func overlap() -> String? {
        var blocks: [(offset: Int, end: Int, owner: String)] = []
        for p in 0..<slots.count where slots[p].capacity > 0 {
            blocks.append((Int(slots[p].offset), Int(slots[p].offset + slots[p].capacity), "position \(p)"))
        }
        for (index, offsets) in free.enumerated() {
            for offset in offsets {
                let end = Int(offset) + (index + 1) * Self.blockStep
                blocks.append((Int(offset), end, "a listed block of \(index + 1) lines"))
            }
        }
        blocks.sort { $0.offset < $1.offset }
        for (a, b) in zip(blocks, blocks.dropFirst()) where a.end > b.offset {
            return "\(a.owner) (\(a.offset)..<\(a.end)) overlaps \(b.owner) (\(b.offset)..<\(b.end))"
        }
        if let last = blocks.last, last.end > times.count {
            return "\(last.owner) ends at \(last.end), past the \(times.count) times held"
        }
        return nil
    }

    // MARK: Reading ahead

    /// Asks for the line of the slot at `p` (the first pass of a read-ahead).
    @inline(__always)
    func readAheadSlot(_ p: Int) {
        slots.withUnsafeBufferPointer { ReadAhead.line($0.baseAddress.unsafelyUnwrapped + p) }
    }

    /// Asks for the lines of the oldest, second oldest and newest times of
    /// the rings at `positions` (what a recording compares with, writes
    /// beside and forgets, and reads next once it forgot the oldest: one
    /// recording in eight found it in the next line, a miss that was a
    /// tenth of issuing at 100,000 instances), from their slots, read
    /// ahead before by ``readAheadSlot(_:)``. Returns the last addresses
    /// asked for (nil when that ring is empty), for the tests.
    @discardableResult
    func readAheadTimes(
        _ positions: UnsafeBufferPointer<Int>
    ) -> (oldest: UnsafeRawPointer, secondOldest: UnsafeRawPointer, newest: UnsafeRawPointer)? {
        var last: (oldest: UnsafeRawPointer, secondOldest: UnsafeRawPointer, newest: UnsafeRawPointer)?
        let (slots, times) = (slots.unsafeBaseAddress, times.unsafeBaseAddress)
        for p in positions {
            last = Self.ring(slots[p], in: times).endAddresses
            if let (oldest, secondOldest, newest) = last {
                ReadAhead.line(oldest)
                ReadAhead.line(secondOldest)
                ReadAhead.line(newest)
            }
        }
        return last
    }

    // MARK: Changing

    /// Records a counted reload at `time` in the ledger at `p`, forgetting
    /// the times no window ending at or after it can hold
    /// (``RollingLedger/record(_:window:)``). Returns the times counted in
    /// the window ending at `time`, the times held then and the newest.
    @inline(__always)
    mutating func record(at p: Int, _ time: Double, window: Double) -> (counted: Int, held: Int, last: Double?) {
        // The usual case, in one pass over the ring: in order, with room.
        // What is left then is every time in `(time - window, time]`.
        let held: Int? = slots.withUnsafeMutableBufferPointer { slots in
            times.withUnsafeMutableBufferPointer { times in
                var ring = Self.ring(slots[p], in: times.baseAddress.unsafelyUnwrapped)
                guard let held = ring.append(inOrder: time, forgettingThrough: time - window) else { return nil }
                slots[p].start = UInt32(truncatingIfNeeded: ring.start)
                slots[p].count = UInt32(truncatingIfNeeded: held)
                return held
            }
        }
        if let held { return (held, held, time) }
        return recordOutOfTheWay(at: p, time, window: window)
    }

    /// ``record(at:_:window:)`` into an empty or full ring (moved to a
    /// block a line larger first), or out of order (as a ledger of its
    /// own records it, stored back).
    @inline(never)
    private mutating func recordOutOfTheWay(at p: Int, _ time: Double, window: Double) -> (
        counted: Int, held: Int, last: Double?
    ) {
        let slot = slots[p]
        if slot.count == 0 && slot.capacity > 0 {
            // An empty ring with a block: the time is its first.
            times[Int(slot.offset)] = time
            slots[p].start = 0
            slots[p].count = 1
            return (1, 1, time)
        }
        let newest = reading(at: p) { $0.last }
        if slot.count == slot.capacity, time >= newest ?? time {
            // In order, into a full (or absent) block: the ring moved to a
            // block a line larger, then recorded in as usual.
            let capacity = (Int(slot.count) / Self.blockStep + 1) * Self.blockStep
            let offset = allocate(capacity)
            // Where the ring is now (a compaction on the way moved it).
            let moved = slots[p]
            times.withUnsafeMutableBufferPointer { times in
                let base = times.baseAddress.unsafelyUnwrapped
                Self.ring(moved, in: base).copy(to: base + Int(offset))
            }
            release(moved)
            slots[p] = Slot(offset: offset, capacity: UInt32(capacity), start: 0, count: moved.count)
            if moved.count == 0 {
                times[Int(offset)] = time
                slots[p].count = 1
                return (1, 1, time)
            }
            return record(at: p, time, window: window)
        }
        var ledger = ledger(at: p)
        let counted = ledger.record(time, window: window)
        replace(at: p, with: ledger)
        return (counted, ledger.count, ledger.last)
    }

    /// Adds a position at the end, holding `ledger`'s times.
    mutating func append(_ ledger: RollingLedger) {
        slots.append(Slot())
        replace(at: slots.count - 1, with: ledger)
    }

    /// The ledger at `p` made `ledger`: its times written in its block when
    /// they fit with room for one more, else in a new block a line larger
    /// than they need.
    mutating func replace(at p: Int, with ledger: RollingLedger) {
        let needed = ledger.count
        var slot = slots[p]
        if needed == 0 {
            // An empty ledger keeps its block, to record in.
            slot.start = 0
            slot.count = 0
            slots[p] = slot
            return
        }
        if needed >= Int(slot.capacity) {
            let capacity = (needed / Self.blockStep + 1) * Self.blockStep
            let offset = allocate(capacity)
            // Garbage once the new block is taken, where it is now: a
            // compaction on the way moved it too.
            release(slots[p])
            slot = Slot(offset: offset, capacity: UInt32(capacity), start: 0, count: 0)
        }
        let offset = Int(slot.offset)
        times.withUnsafeMutableBufferPointer { times in
            ledger.reading { ring in
                if let ring { ring.copy(to: times.baseAddress.unsafelyUnwrapped + offset) }
            }
        }
        slot.start = 0
        slot.count = UInt32(needed)
        slots[p] = slot
    }

    /// Removes the position at `p` (the later ones move down one place);
    /// its block is garbage.
    mutating func remove(at p: Int) {
        release(slots.remove(at: p))
        compactIfWasteful()
    }

    /// The block of `slot` made garbage, listed to be taken again.
    private mutating func release(_ slot: Slot) {
        let lines = Int(slot.capacity) / Self.blockStep
        guard lines > 0 else { return }
        garbage += Int(slot.capacity)
        guard lines <= Self.listedSizes else { return }
        if free.count < lines { free.append(contentsOf: repeatElement([], count: lines - free.count)) }
        free[lines - 1].append(slot.offset)
    }

    /// The offset of a block of `capacity` times (whole lines): a garbage
    /// block of that size, or a new one at the end of the array (compacted
    /// first when that pays).
    private mutating func allocate(_ capacity: Int) -> UInt32 {
        let lines = capacity / Self.blockStep
        if lines <= free.count, let offset = free[lines - 1].popLast() {
            garbage -= capacity
            return offset
        }
        compactIfWasteful()
        let offset = times.count
        precondition(
            offset + capacity <= Self.maximumTimes, "the ledgers' times exceed \(Self.maximumTimes) (2^32 - 1)")
        times.append(repeating: .nan, count: capacity)
        return UInt32(offset)
    }

    /// Moves every block down, in position order, when the garbage passes
    /// an eighth of the times held (and ``minimumGarbage``): the array then
    /// holds what the rings' blocks take, in a new block with room for as
    /// much again, so that the blocks rings move to as they grow fit
    /// without moving the array (its room costs nothing until it is
    /// written; with room for a quarter more, a day of growing rings at
    /// 100,000 instances moved the array again and again, its new pages
    /// faulted in: 7 % of that day). From 128 KB, an array's blocks are
    /// mapped and unmapped, not taken from the heap (``OwnedArray``).
    /// Compacted in place instead, the blocks had to be sorted by offset:
    /// 5 % of the day's instructions.
    private mutating func compactIfWasteful() {
        let live = times.count - garbage
        guard garbage > live / 8, garbage >= minimumGarbage else { return }
        var compacted = OwnedArray<Double>()
        compacted.reserveCapacity(2 * live)
        slots.withUnsafeMutableBufferPointer { slots in
            times.withUnsafeBufferPointer { times in
                for p in slots.indices {
                    let slot = slots[p]
                    let offset = compacted.count
                    compacted.append(repeating: .nan, count: Int(slot.capacity))
                    compacted.withUnsafeMutableBufferPointer { target in
                        let ring = Self.ring(
                            slot, in: UnsafeMutablePointer(mutating: times.baseAddress.unsafelyUnwrapped))
                        ring.copy(to: target.baseAddress.unsafelyUnwrapped + offset)
                    }
                    slots[p] = Slot(offset: UInt32(offset), capacity: slot.capacity, start: 0, count: slot.count)
                }
            }
        }
        times = compacted
        garbage = 0
        free = []
    }
}
