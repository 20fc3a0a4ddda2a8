/// The instance positions queued by the time of their next entry change,
/// each with a `Payload` (the scheduler's ``EntryCursor``): a timing wheel
/// of one-second buckets whose earliest bucket is kept sorted, so that the
/// earliest position is known at once and taken in order of key.
///
/// The entry queue sees every entry change twice (the earliest taken, the
/// same position queued again at its next entry): about 80 changes a
/// second of virtual time at 100,000 instances. In a 4-ary heap each of those moves
/// sifted through every level and wrote, at each level, the new slot of
/// the position it passed, with its payload: a sixth of a day of widgets'
/// work. Here the earliest is the last of a small sorted array, and a
/// position queued again is linked into its bucket's list: a few writes.
///
/// - **The current bucket.** Every key in bucket `base` or before (a key
///   in the past comes here too) is in `current`, sorted by key from the
///   latest to the earliest, so that the earliest is taken from the end.
///   Whenever `current` empties and the wheel does not, the next bucket
///   that is not empty is sorted into it: a queued key is always findable
///   as `current.last`.
/// - **The ring.** The 8,191 buckets after `base` (2 h 16 min), each a
///   doubly linked list threaded through the per-position links, with a
///   bitmap of the buckets that are not empty. Keys from `base + 8192` on
///   wait in `far` (a ``DueQueue``) and come in as `base` moves up.
/// - **Per position, struct of arrays.** The key, the payload and the two
///   links, each in its own array. Sorting a bucket into `current` walks
///   its list through `next` alone (4 bytes per position: 400 KB at
///   100,000 instances, in the cache where 32-byte nodes were not, and a
///   list walk is one miss after another), reads the keys together, then
///   reads the payloads ahead (``WheelPayload/readAhead()``), so that the
///   entry changes of the coming second find them in the cache.
///
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
struct EntryWheel<Payload: WheelPayload>: Sendable {
    /// `previous` of a position in `current`.
    static var inCurrent: Int32 { -2 }
    /// `previous` of a position in `far`.
    static var inFar: Int32 { -3 }
    /// `previous` of a position not queued.
    static var notQueued: Int32 { -4 }

    /// The ring's size, in buckets of one second (`base`'s slot included).
    static var ringSize: Int { 8192 }
    private static var mask: Int64 { Int64(ringSize - 1) }
    /// A bucket number for keys too large for an `Int64` of seconds.
    private static var farBucket: Int64 { Int64(1) << 60 }

    /// Per position: its key, `.infinity` when not queued.
    private var keys: [Double] = []
    /// Per position: its payload, nil when not queued.
    private var payloads: [Payload?] = []
    /// Per position: the next position in its ring bucket, or -1.
    private var next: [Int32] = []
    /// Per position: the previous position in its ring bucket, -1 for its
    /// first, or one of ``inCurrent``, ``inFar``, ``notQueued``.
    private var previous: [Int32] = []
    /// The keys of bucket `base` and before, from the latest to the earliest.
    private var current: [KeyedPosition] = []
    /// The most positions `current` keeps room for between buckets.
    private static var currentKept: Int { 1024 }
    /// Per ring slot: the first position of its bucket, or -1.
    private var heads = [Int32](repeating: -1, count: ringSize)
    /// One bit per ring slot: whether its bucket has a position.
    private var occupied = [UInt64](repeating: 0, count: ringSize / 64)
    /// The current bucket: keys in `current` are in it or before, keys in
    /// the ring in `base + 1 ..< base + ringSize`, keys in `far` after.
    private var base: Int64 = 0
    /// Keys past the ring.
    private var far = DueQueue()
    /// The number of queued positions.
    private(set) var count = 0

    init() {}

    /// The smallest key, `.infinity` when empty.
    var minimumKey: Double { current.last?.key ?? .infinity }

    /// The position with the smallest key.
    var minimumPosition: Int? { current.last.map { Int($0.position) } }

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
            keys.append(contentsOf: repeatElement(.infinity, count: more))
            payloads.append(contentsOf: repeatElement(nil, count: more))
            next.append(contentsOf: repeatElement(-1, count: more))
            previous.append(contentsOf: repeatElement(Self.notQueued, count: more))
        }
        if keys[position] < .infinity { detach(position) }
        if key < .infinity {
            keys[position] = key
            payloads[position] = payload
            place(position, key)
        } else {
            keys[position] = .infinity
            payloads[position] = nil
        }
        if current.isEmpty && count > 0 { refill() }
    }

    /// Moves the position with the smallest key on (the wheel must not be
    /// empty): `body` updates its payload in place and returns its next
    /// key, infinite or NaN to take it out.
    mutating func moveMinimum(_ body: (inout Payload) -> Double) {
        precondition(!current.isEmpty, "the wheel is empty")
        let p = Int(current.removeLast().position)
        count -= 1
        let key = payloads.withUnsafeMutableBufferPointer { payloads in
            body(&payloads[p]!)
        }
        if key < .infinity {
            keys[p] = key
            place(p, key)
        } else {
            keys[p] = .infinity
            payloads[p] = nil
            previous[p] = Self.notQueued
        }
        if current.isEmpty && count > 0 { refill() }
    }

    /// Forgets `position` and renumbers every later position one down (an
    /// instance removed from the middle of the scheduler's array). O(N).
    mutating func removePosition(_ position: Int) {
        guard position < keys.count else { return }
        if keys[position] < .infinity { detach(position) }
        if current.isEmpty && count > 0 { refill() }
        keys.remove(at: position)
        payloads.remove(at: position)
        next.remove(at: position)
        previous.remove(at: position)
        let p = Int32(position)
        func renumbered(_ q: Int32) -> Int32 { q > p ? q - 1 : q }
        for i in next.indices {
            next[i] = renumbered(next[i])
            if previous[i] >= 0 { previous[i] = renumbered(previous[i]) }
        }
        for i in heads.indices { heads[i] = renumbered(heads[i]) }
        for i in current.indices { current[i].position = renumbered(current[i].position) }
        far.removePosition(position)
    }

    /// Reads, for each position of `positions` (`~p` for negative ones) for
    /// which `isWanted` is true, its key and links and its neighbours'
    /// (what taking it out of its bucket writes), ahead of the moves: see
    /// ``InstanceRecords/readAhead(_:ledgers:)``. Returns a number made
    /// from what was read.
    func readAhead(_ positions: UnsafeBufferPointer<Int>, where isWanted: (Int) -> Bool = { _ in true }) -> UInt64 {
        var sum: UInt64 = 0
        keys.withUnsafeBufferPointer { keys in
            next.withUnsafeBufferPointer { next in
                previous.withUnsafeBufferPointer { previous in
                    for p in positions {
                        let p = p < 0 ? ~p : p
                        guard p < keys.count, isWanted(p) else { continue }
                        sum &+= keys[p].bitPattern
                        if next[p] >= 0 { sum &+= UInt64(truncatingIfNeeded: previous[Int(next[p])]) }
                        if previous[p] >= 0 { sum &+= UInt64(truncatingIfNeeded: next[Int(previous[p])]) }
                    }
                }
            }
        }
        return sum
    }

    // MARK: - Buckets

    /// The bucket of a key: its second, ±`farBucket` past ±2^60 seconds.
    @inline(__always)
    private static func bucket(_ key: Double) -> Int64 { roundedDown(key, within: farBucket) }

    @inline(__always)
    private static func slot(_ bucket: Int64) -> Int { Int(bucket & mask) }

    /// Puts `position` (its key set to `key`, in no list) where its key
    /// belongs: `current`, a ring bucket, or `far`.
    private mutating func place(_ position: Int, _ key: Double) {
        let b = Self.bucket(key)
        if count == 0 { base = b }
        count += 1
        if b <= base {
            insertIntoCurrent(position, key)
        } else if b - base < Int64(Self.ringSize) {
            link(position, Self.slot(b))
        } else {
            previous[position] = Self.inFar
            far.set(position, to: key)
        }
    }

    /// Inserts `position` into `current`, in its place by key.
    private mutating func insertIntoCurrent(_ position: Int, _ key: Double) {
        previous[position] = Self.inCurrent
        // The first index whose key is at or below `key` (the array runs
        // from the latest key down): inserted there, after the later ones.
        var low = 0
        var high = current.count
        while low < high {
            let mid = (low + high) / 2
            if current[mid].key > key { low = mid + 1 } else { high = mid }
        }
        current.insert(KeyedPosition(key: key, position: Int32(position)), at: low)
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

    /// Takes `position` (queued) out of `current`, its ring bucket or
    /// `far`; its key and payload are left for the caller to set.
    /// `current` may be left empty (the caller refills it).
    private mutating func detach(_ position: Int) {
        let key = keys[position]
        let before = previous[position]
        let after = next[position]
        count -= 1
        switch before {
        case Self.inCurrent:
            // Among the entries with its key (found by halving), the one of `position`.
            var low = 0
            var high = current.count
            while low < high {
                let mid = (low + high) / 2
                if current[mid].key > key { low = mid + 1 } else { high = mid }
            }
            while current[low].position != Int32(position) { low += 1 }
            current.remove(at: low)
        case Self.inFar:
            far.set(position, to: .infinity)
        default:
            if after >= 0 { previous[Int(after)] = before }
            if before >= 0 {
                next[Int(before)] = after
            } else {
                let s = Self.slot(Self.bucket(key))
                heads[s] = after
                if after < 0 { occupied[s >> 6] &= ~(1 << UInt64(s & 63)) }
            }
        }
        next[position] = -1
        previous[position] = Self.notQueued
    }

    /// Fills the empty `current` with the next bucket that is not empty
    /// (from the ring, or else from `far`), sorted, brings the keys of
    /// `far` that the ring now reaches into it, and reads the payloads of
    /// `current` ahead. The wheel is not empty.
    private mutating func refill() {
        // Its memory let go after a crowded second (every instance's
        // entries from the same start).
        if current.capacity > Self.currentKept { current = [] }
        if let s = firstOccupiedAfterBase() {
            base += (Int64(s) - base) & Self.mask
            // The list first (through `next` alone), then the keys.
            var p = heads[s]
            next.withUnsafeMutableBufferPointer { next in
                while p >= 0 {
                    current.append(KeyedPosition(key: 0, position: p))
                    let q = next[Int(p)]
                    next[Int(p)] = -1
                    p = q
                }
            }
            keys.withUnsafeBufferPointer { keys in
                previous.withUnsafeMutableBufferPointer { previous in
                    current.withUnsafeMutableBufferPointer { current in
                        for i in current.indices {
                            let p = Int(current[i].position)
                            current[i].key = keys[p]
                            previous[p] = Self.inCurrent
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
                current.append(KeyedPosition(key: key, position: Int32(p)))
                previous[p] = Self.inCurrent
            } else {
                link(p, Self.slot(b))
            }
        }
        var sum: UInt64 = 0
        payloads.withUnsafeBufferPointer { payloads in
            current.withUnsafeMutableBufferPointer { current in
                current.sortLatestFirst()
                for entry in current { sum &+= payloads[Int(entry.position)]?.readAhead() ?? 0 }
            }
        }
        readAheadSum &+= sum
    }

    /// What the payloads read ahead added up to (kept, so that the reads
    /// are not optimized away).
    private var readAheadSum: UInt64 = 0

    /// The ring slot of the first bucket after `base` that is not empty.
    private func firstOccupiedAfterBase() -> Int? {
        occupied.firstSetBit(circularlyFrom: Self.slot(base + 1))
    }
}

/// A payload of an ``EntryWheel``: what the wheel reads ahead of a move.
protocol WheelPayload: Sendable {
    /// Reads what moving this payload on reads first, ahead of time (the
    /// wheel does it for the coming second's positions). Returns a number
    /// made from what was read.
    func readAhead() -> UInt64
}
