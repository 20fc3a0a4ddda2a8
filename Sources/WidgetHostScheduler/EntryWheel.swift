/// The instance positions queued by the time of their next entry change,
/// each with a `Payload` (the scheduler's ``EntryCursor``): a timing wheel
/// of one-second buckets whose earliest bucket is kept in order, so that
/// the earliest position is known at once and taken in order of key.
///
/// The entry queue sees every entry change twice (the earliest taken, the
/// same position queued again at its next entry): about 80 changes a
/// second of virtual time at 100,000 instances. In a 4-ary heap each of
/// those moves sifted through every level and wrote, at each level, the
/// new slot of the position it passed, with its payload: a sixth of a day
/// of widgets' work. Here the earliest is the last of a sorted array, and
/// a position queued again for a later second is linked into its bucket's
/// list: a few writes.
///
/// - **The current bucket.** Every key in bucket `base` or before (a key
///   in the past comes here too) is in one of two places. `sorted` holds
///   the bucket as it came in, sorted by key from the latest to the
///   earliest, so that taking the earliest is taking the last. A position
///   that leaves it is not looked for: its entry goes stale (its position
///   is no longer marked ``inSorted``) and is dropped when it reaches the
///   end. A key that comes into the bucket later (a key in the past, an
///   entry less than a second after the last) goes to `late`, a small
///   ``DueQueue``. The earliest is the earlier of the two. Every move is
///   O(1) or O(log k) for k keys in the second, also when k is every
///   instance (all placed at one start, with the same entry dates): a
///   sorted array that took insertions and removals in place moved its
///   tail each time, quadratic in k (`simulate` of 100,000 instances took
///   four times as long).
/// - **The ring.** The 8,191 buckets after `base` (2 h 16 min), each a
///   doubly linked list threaded through the per-position links, with a
///   bitmap of the buckets that are not empty. Keys from `base + 8192` on
///   wait in `far` (a ``DueQueue``) and come in as `base` moves up.
/// - **Per position, struct of arrays.** The key, the payload and the two
///   links, each in its own array. Sorting a bucket into `sorted` walks its
///   list through `next` alone (4 bytes per position: 400 KB at 100,000
///   instances, in the cache where 32-byte nodes were not, and a list walk
///   is one miss after another), reads the keys together, then reads the
///   payloads ahead (``WheelPayload/readAheadBlock``), so that the entry
///   changes of the coming second find them in the cache.
///
/// Whenever both `sorted` (its live entries) and `late` are empty and the
/// wheel is not, the next bucket that is not empty comes into `sorted`.
/// Equal keys are taken in no particular order.
///
/// ```swift
/// var wheel = EntryWheel<EntryCursor>()
/// wheel.set(3, to: 1_800_000_600, payload: EntryCursor(entries: entries3, index: 0))
/// wheel.set(5, to: 1_800_000_030.5, payload: EntryCursor(entries: entries5, index: 0))
/// wheel.minimumKey  // 1_800_000_030.5
/// wheel.moveMinimum { cursor in cursor.index += 1; return 1_800_000_900 }  // 5 moved on
/// wheel.minimumPosition  // 3
/// ```
struct EntryWheel<Payload: WheelPayload>: ~Copyable, Sendable {
    /// `previous` of a position in `sorted`.
    static var inSorted: Int32 { -2 }
    /// `previous` of a position in `late`.
    static var inLate: Int32 { -3 }
    /// `previous` of a position in `far`.
    static var inFar: Int32 { -4 }
    /// `previous` of a position not queued.
    static var notQueued: Int32 { -5 }

    /// The ring's size, in buckets of one second (`base`'s slot included).
    static var ringSize: Int { 8192 }
    private static var mask: Int64 { Int64(ringSize - 1) }
    /// A bucket number for keys too large for an `Int64` of seconds.
    private static var farBucket: Int64 { Int64(1) << 60 }
    /// The most entries `sorted` keeps room for between buckets.
    private static var sortedKept: Int { 1024 }

    /// Per position: its key, `.infinity` when not queued.
    private var keys = OwnedArray<Double>()
    /// Per position: its payload, nil when not queued.
    private var payloads = OwnedArray<Payload?>()
    /// Per position: the next position in its ring bucket, or -1.
    private var next = OwnedArray<Int32>()
    /// Per position: the previous position in its ring bucket, -1 for its
    /// first, or one of ``inSorted``, ``inLate``, ``inFar``, ``notQueued``.
    private var previous = OwnedArray<Int32>()
    /// The current bucket as it came in, from the latest key to the
    /// earliest; its last entry is always live (the ones after it were
    /// dropped as they went stale).
    private var sorted: [KeyedPosition] = []
    /// The keys that came into the current bucket after it was sorted.
    private var late = DueQueue()
    /// Per ring slot: the first position of its bucket, or -1.
    private var heads = OwnedArray<Int32>(repeating: -1, count: ringSize)
    /// One bit per ring slot: whether its bucket has a position.
    private var occupied = OwnedArray<UInt64>(repeating: 0, count: ringSize / 64)
    /// The current bucket: keys in `sorted` and `late` are in it or
    /// before, keys in the ring in `base + 1 ..< base + ringSize`, keys in
    /// `far` after.
    private var base: Int64 = 0
    /// Keys past the ring.
    private var far = DueQueue()
    /// The number of queued positions.
    private(set) var count = 0

    init() {}

    /// A copy of the wheel, in memory of its own.
    func clone() -> EntryWheel {
        var copy = EntryWheel()
        copy.keys = keys.clone()
        copy.payloads = payloads.clone()
        copy.next = next.clone()
        copy.previous = previous.clone()
        copy.sorted = sorted
        copy.late = late
        copy.heads = heads.clone()
        copy.occupied = occupied.clone()
        copy.base = base
        copy.far = far
        copy.count = count
        copy.readFrom = readFrom
        return copy
    }

    /// The smallest key, `.infinity` when empty.
    var minimumKey: Double { min(sorted.last?.key ?? .infinity, late.minimumKey) }

    /// The position with the smallest key.
    var minimumPosition: Int? { Self.minimumPosition(sorted, late) }

    /// The position with the smallest key, from the current bucket's two
    /// parts (a static function, so that a mutating caller lends it the two
    /// fields: through the property, the optimizer copied the whole wheel,
    /// 136 bytes, to lend it).
    @inline(__always)
    private static func minimumPosition(_ sorted: [KeyedPosition], _ late: DueQueue) -> Int? {
        if let last = sorted.last, !(late.minimumKey < last.key) { return Int(last.position) }
        return late.minimumPosition
    }

    /// The key of `position`, `.infinity` if not queued.
    func key(of position: Int) -> Double {
        position < keys.count ? keys[position] : .infinity
    }

    /// Whether `position` is queued.
    @inline(__always)
    func isQueued(_ position: Int) -> Bool { position < keys.count && keys[position] < .infinity }

    /// The payload of `position`, nil if not queued.
    func payload(of position: Int) -> Payload? {
        position < payloads.count ? payloads[position] : nil
    }

    /// Queues `position` at `key` with `payload`, moves it and replaces its
    /// payload, or (for an infinite or NaN key) takes it out.
    mutating func set(_ position: Int, to key: Double, payload: Payload) {
        precondition(position >= 0 && position < Int(Int32.max), "a position past the wheel's 32-bit links")
        if keys.count <= position {
            let more = position + 1 - keys.count
            keys.append(repeating: .infinity, count: more)
            payloads.append(repeating: nil, count: more)
            next.append(repeating: -1, count: more)
            previous.append(repeating: Self.notQueued, count: more)
        }
        if keys[position] < .infinity { detach(position) }
        payloads[position] = payload
        requeue(position, at: key)
    }

    /// Moves the position with the smallest key on (the wheel must not be
    /// empty): `body` updates its payload in place and returns its next
    /// key, infinite or NaN to take it out.
    mutating func moveMinimum(_ body: (inout Payload) -> Double) {
        guard let p = Self.minimumPosition(sorted, late) else { preconditionFailure("the wheel is empty") }
        detach(p)
        let key = payloads.withUnsafeMutableBufferPointer { payloads in
            body(&payloads[p]!)
        }
        requeue(p, at: key)
    }

    /// Queues `position` (detached, its payload set) at `key`, or (for an
    /// infinite or NaN key) lets its payload go; then settles.
    @inline(__always)
    private mutating func requeue(_ position: Int, at key: Double) {
        if key < .infinity {
            keys[position] = key
            place(position, key)
        } else {
            keys[position] = .infinity
            payloads[position] = nil
        }
        settle()
    }

    /// Forgets `position` and renumbers every later position one down (an
    /// instance removed from the middle of the scheduler's array). O(N).
    mutating func removePosition(_ position: Int) {
        guard position < keys.count else { return }
        if keys[position] < .infinity { detach(position) }
        _ = keys.remove(at: position)
        _ = payloads.remove(at: position)
        _ = next.remove(at: position)
        _ = previous.remove(at: position)
        let p = Int32(position)
        func renumbered(_ q: Int32) -> Int32 { q > p ? q - 1 : q }
        for i in next.indices {
            next[i] = renumbered(next[i])
            if previous[i] >= 0 { previous[i] = renumbered(previous[i]) }
        }
        for i in heads.indices { heads[i] = renumbered(heads[i]) }
        // Its stale entries go (renumbered, they would name another position).
        sorted.removeAll { $0.position == p }
        for i in sorted.indices { sorted[i].position = renumbered(sorted[i].position) }
        late.removePosition(position)
        far.removePosition(position)
        settle()
    }

    /// Reads, for each position of `positions` for which `isWanted` is
    /// true, its key and links, ahead of the moves (the
    /// second pass of ``SchedulerCore``'s read-ahead: `isWanted` reads what
    /// its first pass asked for).
    func readAheadLinks(_ positions: UnsafeBufferPointer<Int>, where isWanted: (Int) -> Bool) {
        keys.withUnsafeBufferPointer { keys in
            next.withUnsafeBufferPointer { next in
                previous.withUnsafeBufferPointer { previous in
                    for p in positions {
                        guard p < keys.count, isWanted(p) else { continue }
                        ReadAhead.line(keys.baseAddress.unsafelyUnwrapped + p)
                        ReadAhead.line(next.baseAddress.unsafelyUnwrapped + p)
                        ReadAhead.line(previous.baseAddress.unsafelyUnwrapped + p)
                    }
                }
            }
        }
    }

    /// The third pass (after ``readAheadLinks(_:where:)``): the links of
    /// each wanted position's neighbours, which taking it out of its bucket
    /// writes.
    func readAheadNeighbours(_ positions: UnsafeBufferPointer<Int>, where isWanted: (Int) -> Bool) {
        next.withUnsafeBufferPointer { next in
            previous.withUnsafeBufferPointer { previous in
                for p in positions {
                    guard p < next.count, isWanted(p) else { continue }
                    if next[p] >= 0 { ReadAhead.line(previous.baseAddress.unsafelyUnwrapped + Int(next[p])) }
                    if previous[p] >= 0 { ReadAhead.line(next.baseAddress.unsafelyUnwrapped + Int(previous[p])) }
                }
            }
        }
    }

    // MARK: - Buckets

    /// The bucket of a key: its second, ±`farBucket` past ±2^60 seconds.
    @inline(__always)
    private static func bucket(_ key: Double) -> Int64 { roundedDown(key, within: farBucket) }

    @inline(__always)
    private static func slot(_ bucket: Int64) -> Int { Int(bucket & mask) }

    /// Puts `position` (its key set to `key`, in no list) where its key
    /// belongs: `late` (the current bucket, already sorted), a ring
    /// bucket, or `far`.
    private mutating func place(_ position: Int, _ key: Double) {
        let b = Self.bucket(key)
        if count == 0 { base = b }
        count += 1
        if b <= base {
            previous[position] = Self.inLate
            late.set(position, to: key)
        } else if b - base < Int64(Self.ringSize) {
            link(position, Self.slot(b))
        } else {
            previous[position] = Self.inFar
            far.set(position, to: key)
        }
    }

    /// Links `position` first into the list of ring slot `s`.
    @inline(__always)
    private mutating func link(_ position: Int, _ s: Int) {
        let head = heads[s]
        next[position] = head
        previous.withUnsafeMutableBufferPointer { previous in
            previous[position] = -1
            if head >= 0 { previous[Int(head)] = Int32(position) }
        }
        if head < 0 { occupied[s >> 6] |= 1 << UInt64(s & 63) }
        heads[s] = Int32(position)
    }

    /// Takes `position` (queued) out of `sorted` (its entry left there,
    /// stale), `late`, its ring bucket or `far`; its key and payload are
    /// left for the caller to set. The caller then calls `settle()`.
    private mutating func detach(_ position: Int) {
        let before = previous[position]
        let after = next[position]
        count -= 1
        switch before {
        case Self.inSorted:
            break
        case Self.inLate:
            late.set(position, to: .infinity)
        case Self.inFar:
            far.set(position, to: .infinity)
        default:
            if after >= 0 { previous[Int(after)] = before }
            if before >= 0 {
                next[Int(before)] = after
            } else {
                let s = Self.slot(Self.bucket(keys[position]))
                heads[s] = after
                if after < 0 { occupied[s >> 6] &= ~(1 << UInt64(s & 63)) }
            }
        }
        next[position] = -1
        previous[position] = Self.notQueued
    }

    /// Drops the stale entries at the end of `sorted`, and brings the next
    /// bucket in when the current one is empty and the wheel is not: after
    /// it, the earliest queued key is `sorted`'s last or `late`'s first.
    @inline(__always)
    private mutating func settle() {
        while let last = sorted.last, previous[Int(last.position)] != Self.inSorted {
            sorted.removeLast()
        }
        if sorted.isEmpty && late.count == 0 && count > 0 { refill() } else { readAheadSorted() }
    }

    /// Fills the empty current bucket (`sorted` and `late` both empty)
    /// with the next bucket that is not empty (from the ring, or else from
    /// `far`), sorted, brings the keys of `far` that the ring now reaches
    /// into it, and reads the payloads of `sorted` ahead. The wheel is not
    /// empty.
    private mutating func refill() {
        // Its memory let go after a crowded second (every instance's
        // entries from the same start).
        if sorted.capacity > Self.sortedKept { sorted = [] }
        if let s = firstOccupiedAfterBase() {
            base += (Int64(s) - base) & Self.mask
            // The list first (through `next` alone), then the keys.
            var p = heads[s]
            next.withUnsafeMutableBufferPointer { next in
                while p >= 0 {
                    sorted.append(KeyedPosition(key: 0, position: p))
                    let q = next[Int(p)]
                    next[Int(p)] = -1
                    p = q
                }
            }
            keys.withUnsafeBufferPointer { keys in
                previous.withUnsafeMutableBufferPointer { previous in
                    sorted.withUnsafeMutableBufferPointer { sorted in
                        for i in sorted.indices {
                            let p = Int(sorted[i].position)
                            sorted[i].key = keys[p]
                            previous[p] = Self.inSorted
                        }
                    }
                }
            }
            heads[s] = -1
            occupied[s >> 6] &= ~(1 << UInt64(s & 63))
        } else {
            base = Self.bucket(far.minimumKey)
        }
        // Keys of `far` the ring now reaches come in (in order of key).
        while let p = far.minimumPosition, Self.bucket(far.minimumKey) - base < Int64(Self.ringSize) {
            let key = far.minimumKey
            far.set(p, to: .infinity)
            let b = Self.bucket(key)
            if b <= base {
                sorted.append(KeyedPosition(key: key, position: Int32(p)))
                previous[p] = Self.inSorted
            } else {
                link(p, Self.slot(b))
            }
        }
        sorted.withUnsafeMutableBufferPointer { $0.sortLatestFirst() }
        readFrom = sorted.count
        readAheadSorted()
    }

    /// Reads the payloads of `sorted` ahead, a chunk at a time as its end
    /// comes within a chunk of the ones read (two chunks at first): a
    /// crowded second (thousands of positions with the same entry date)
    /// read ahead all at once no longer fit in the cache when its moves
    /// reached them.
    @inline(__always)
    private mutating func readAheadSorted() {
        // (`removePosition` may have shortened `sorted`.)
        let readFrom = min(self.readFrom, sorted.count)
        guard readFrom > 0, sorted.count - readFrom < Self.readAheadChunk else { return }
        let start = max(0, readFrom - (readFrom == sorted.count ? 2 : 1) * Self.readAheadChunk)
        // The blocks found in one loop, asked for in a second: a payload read
        // out of its array is a copy (of a cursor's entries array), held over
        // a prefetch in the same loop, which the compiler cannot see into (a
        // retain and a release per payload).
        withUnsafeTemporaryAllocation(of: ReadAhead.Block.self, capacity: readFrom - start) { blocks in
            var found = 0
            payloads.withUnsafeBufferPointer { payloads in
                sorted.withUnsafeBufferPointer { sorted in
                    // The earliest first: its move comes first.
                    for entry in sorted[start..<readFrom].reversed() {
                        guard let block = payloads[Int(entry.position)]?.readAheadBlock else { continue }
                        (blocks.baseAddress.unsafelyUnwrapped + found).initialize(to: block)
                        found += 1
                    }
                }
            }
            for block in blocks[..<found] { ReadAhead.lines(block.start, bytes: block.bytes) }
        }
        self.readFrom = start
    }

    /// The index of `sorted` from which its payloads were read ahead.
    private var readFrom = 0
    /// How many of `sorted`'s payloads are read ahead at a time.
    static var readAheadChunk: Int { 32 }

    /// The ring slot of the first bucket after `base` that is not empty.
    private func firstOccupiedAfterBase() -> Int? {
        occupied.firstSetBit(circularlyFrom: Self.slot(base + 1))
    }
}

/// A payload of an ``EntryWheel``: what the wheel reads ahead of a move.
protocol WheelPayload: Sendable {
    /// Where what moving this payload on reads first is (nil: nothing to
    /// read), for the wheel to read it ahead of time (for the coming
    /// second's positions). For prefetching only: not to be read through.
    var readAheadBlock: ReadAhead.Block? { get }
}
