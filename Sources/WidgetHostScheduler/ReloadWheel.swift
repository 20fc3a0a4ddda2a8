/// The instance positions queued by the time their next reload is due: a
/// timing wheel of one-second buckets (a calendar queue), each an array
/// of positions, with a 4-ary heap (``DueQueue``) for the times past its
/// horizon.
///
/// The reload queue sees every reload twice (taken out when issued, queued
/// again when it completes), almost always within the next hour. In a heap
/// each of those moves sifts through the levels and writes, at each level,
/// the new slot of the position it passed (a random cache line per level at
/// 100,000 instances); here a reload issued leaves with its whole bucket,
/// and one completed is appended to its bucket's array: a write or two,
/// none of them per level, and none in another position's record.
///
/// - **Buckets.** A key `t` belongs to bucket `⌊t⌋`; the ring holds the
///   8,192 buckets from `base` on (2 h 16 min). A bucket is an array of
///   positions kept in chunks of ``chunkSize`` from one pool (its newest
///   chunk first, each chunk linked to the one before it), so that a walk
///   reads a bucket's positions in order, each chunk's at once, and the
///   nodes behind them independently of each other, where a list threaded
///   through the nodes waited for each node to find the next. A chunk a
///   bucket no longer needs goes back to the pool, which keeps its room:
///   a steady state allocates nothing. Each position's node (``Node``: the
///   key, what is read of the plan beside it, and where its entry is: 24
///   bytes) says where in its bucket it is, so that a move takes it out
///   at once: the bucket's last position takes its place. A bitmap marks
///   the buckets that are not empty. Keys from `base + 8192` on wait in
///   `far`, and come into the ring as `base` moves up to them; a key
///   before `base` moves `base` down, and whatever then falls past the
///   ring's end goes to `far`.
/// - **The earliest.** `minimumKey` and `minimumPosition` are kept as the
///   queue changes, so reading them costs nothing: a key below the earliest
///   becomes the earliest; when the earliest moves later or leaves, the
///   first bucket that is not empty (found in the bitmap) is read through,
///   and `base` moves up to it. A bucket read through a second time (its
///   earliest left and others stayed: a batch issued a wakeup at a time)
///   is sorted, so that each next earliest is the end of that order, not
///   another read of the bucket (k²/2 reads for a bucket of k).
/// - **Walks.** ``collect(upTo:_:)`` visits the buckets up to the bound's,
///   skipping empty ones by the bitmap, then `far` if the bound is past the
///   ring: every position it finds is due, and it finds them in no
///   particular order (the scheduler sorts what it issues). The bucket kept
///   in order is read from the end of its order, its keys up to the bound
///   alone. ``removeAll(_:upTo:)`` takes out what a walk found: the whole
///   buckets' chunks back to the pool at once, the bound's bucket and
///   `far` a position at a time.
///
/// ```swift
/// var wheel = ReloadWheel()
/// wheel.set(3, to: 1_800_000_600)
/// wheel.set(5, to: 1_800_000_030.5)
/// wheel.minimumKey  // 1_800_000_030.5
/// wheel.collect(upTo: 1_800_000_600, into: &buffer)  // [5, 3] (any order)
/// ```
struct ReloadWheel: ~Copyable, Sendable {
    /// A position's queued key, what is read of its plan beside it (the
    /// coalescing deadline, whether it is under the free-reload cap,
    /// whether it is a plain policy reload), and where its entry is: 24
    /// bytes, so that a walk reads one place per position, not a second
    /// record of it.
    struct Node: Sendable {
        /// `.infinity`: not queued.
        var key: Double = .infinity
        /// The coalescing deadline of the queued plan.
        var latest: Double = .infinity
        /// The entry's index in the pool plus 2 (0: in `far`; 1: not
        /// queued) in the low 29 bits (entries below 2^29 - 2), and the
        /// plan's three flags in the top three.
        private var link: UInt32 = 1

        private static let cappedBit: UInt32 = 0x8000_0000
        private static let plainBit: UInt32 = 0x4000_0000
        private static let heldBit: UInt32 = 0x2000_0000
        private static let flagBits: UInt32 = 0xE000_0000

        init() {}

        init(key: Double, latest: Double, entry: Int32, flags: Flags) {
            self.key = key
            self.latest = latest
            // (Wrapping: an entry is below 2^29 - 2, checked as the pool grows.)
            self.link = UInt32(truncatingIfNeeded: entry &+ 2) | flags.bits
        }

        /// The plan's flags, as ``ReloadWheel/set(_:to:latest:flags:)`` takes them.
        struct Flags: Sendable, Equatable {
            /// The plan has a candidate under the host-wide free-reload cap:
            /// its queued time may be earlier than the truth.
            var underFreeCap = false
            /// The plan is a counted policy reload on time (no deferral,
            /// nothing lifted in developer mode), so that issuing it needs no
            /// planning again.
            var plainPolicy = false
            /// The plan is a counted policy reload held by the budget alone,
            /// of an instance shown all day past its learning period
            /// (``SteadyRules/heldPlan(_:appCharge:at:)``): its time is the
            /// budget's return, which stays the same until an event plans the
            /// instance again, so that issuing it needs no planning again either.
            var heldPolicy = false

            fileprivate var bits: UInt32 {
                (underFreeCap ? Node.cappedBit : 0) | (plainPolicy ? Node.plainBit : 0)
                    | (heldPolicy ? Node.heldBit : 0)
            }
        }

        /// The index of the position's entry in the pool, ``ReloadWheel/inFar``
        /// when the key waits in `far`, -1 when not queued.
        var entry: Int32 {
            get { Int32(bitPattern: link & ~Self.flagBits) &- 2 }
            set { link = (link & Self.flagBits) | UInt32(truncatingIfNeeded: newValue &+ 2) }
        }

        /// Whether the queued plan has a candidate under the host-wide
        /// free-reload cap (its queued time may be earlier than the truth).
        var underFreeCap: Bool { link & Self.cappedBit != 0 }

        /// Whether the queued plan is a counted policy reload on time.
        var plainPolicy: Bool { link & Self.plainBit != 0 }

        /// Whether the queued plan is a counted policy reload held by the
        /// budget alone (``Flags/heldPolicy``).
        var heldPolicy: Bool { link & Self.heldBit != 0 }

        /// Sets what is read of the queued plan.
        mutating func setPlan(latest: Double, flags: Flags) {
            self.latest = latest
            link = (link & ~Self.flagBits) | flags.bits
        }
    }

    /// A ring slot's bucket: its newest chunk (-1: empty) and how many
    /// positions it holds.
    struct Bucket: Sendable {
        var newest: Int32 = -1
        var count: Int32 = 0
    }

    /// The ring's size, in buckets of one second.
    static let ringSize = 8192
    private static let mask = Int64(ringSize - 1)
    /// Positions per chunk of a bucket (a power of two): 32 bytes, so that
    /// a bucket of a few (at 10,000 instances most hold two to five) wastes
    /// little, and one of many (at 100,000, dozens) is read a line at a time.
    static let chunkSize = 8
    /// `Node.entry` of a position whose key is in `far`.
    static let inFar: Int32 = -2
    /// A bucket number for keys too large for an `Int64` of seconds (far past
    /// any ring): they stay in `far`.
    private static let farBucket = Int64(1) << 60

    private var nodes = OwnedArray<Node>()
    /// The buckets' positions, ``chunkSize`` per chunk: entry `i` is in
    /// chunk `i / chunkSize`.
    private var entries = OwnedArray<Int32>()
    /// Per chunk: the chunk before it in its bucket (older), or the next
    /// free one; -1 for none.
    private var chunkLinks = OwnedArray<Int32>()
    /// The first free chunk, -1 for none.
    private var freeChunk: Int32 = -1
    /// Per ring slot: its bucket.
    private var buckets = OwnedArray<Bucket>(repeating: Bucket(), count: ringSize)
    /// One bit per ring slot: whether its bucket has a position.
    private var occupied = OwnedArray<UInt64>(repeating: 0, count: ringSize / 64)
    /// The bucket of the ring's first slot; every key in the ring is in
    /// `base ..< base + ringSize`, every key in `far` past it.
    private var base: Int64 = 0
    /// Keys past the ring.
    private var far = DueQueue()
    /// The number of queued positions.
    private(set) var count = 0
    /// How many times the queue changed (a key, deadline or flag set, a
    /// position taken out): a walk's findings hold while it is the same.
    private(set) var changes: UInt64 = 0
    /// The smallest key, `.infinity` when empty.
    private(set) var minimumKey = Double.infinity
    private var minimum: Int32 = -1
    /// The positions of bucket `orderBucket` (the earliest, walked a second
    /// time) by key, the latest first: each time its earliest leaves, the
    /// next is the last entry still queued at its key, not a walk of the
    /// bucket. Entries whose position left or moved go stale (the node's
    /// key differs) and are dropped from the end; a position put in the
    /// bucket makes the whole order stale (`orderBucket` none).
    private var order: [KeyedPosition] = []
    private var orderBucket = Self.noBucket
    /// The bucket ``findMinimum()`` last walked.
    private var walkedBucket = Self.noBucket
    private static var noBucket: Int64 { .min }
    /// The most entries `order` keeps room for between buckets.
    private static var orderKept: Int { 1024 }

    init() {}

    /// A copy of the wheel, in memory of its own.
    func clone() -> ReloadWheel {
        var copy = ReloadWheel()
        copy.nodes = nodes.clone()
        copy.entries = entries.clone()
        copy.chunkLinks = chunkLinks.clone()
        copy.freeChunk = freeChunk
        copy.buckets = buckets.clone()
        copy.occupied = occupied.clone()
        copy.base = base
        copy.far = far
        copy.count = count
        copy.changes = changes
        copy.minimumKey = minimumKey
        copy.minimum = minimum
        copy.order = order
        copy.orderBucket = orderBucket
        copy.walkedBucket = walkedBucket
        return copy
    }

    /// The position with the smallest key.
    var minimumPosition: Int? { minimum >= 0 ? Int(minimum) : nil }

    /// How many chunks the pool holds, in buckets or free: it grows only
    /// when no free chunk is left, so a steady state keeps it the same.
    var chunksInPool: Int { chunkLinks.count }

    /// The key of `position`, `.infinity` if not queued.
    func key(of position: Int) -> Double {
        position < nodes.count ? nodes[position].key : .infinity
    }

    /// The node of `position` (key, deadline, flags); a node with
    /// an infinite key if not queued.
    func node(of position: Int) -> Node {
        position < nodes.count ? nodes[position] : Node()
    }

    /// Every queued position whose plan is under the free-reload cap.
    var positionsUnderFreeCap: [Int] {
        nodes.indices.filter { p in nodes[p].key < .infinity && nodes[p].underFreeCap }
    }

    /// Makes room for positions up to `count - 1` (new positions are not queued).
    mutating func reserve(positions count: Int) {
        if nodes.count < count { addPositions(count) }
    }

    /// Unqueued nodes up to `count` positions (`reserve(positions:)` when it grows).
    @inline(never)
    private mutating func addPositions(_ count: Int) {
        nodes.append(repeating: Node(), count: count - nodes.count)
    }

    /// Queues `position` at `key`, with its plan's coalescing deadline
    /// `latest` and flags, moves it, or (for an infinite or NaN key) takes
    /// it out.
    mutating func set(_ position: Int, to key: Double, latest: Double = .infinity, flags: Node.Flags = .init()) {
        precondition(position < 1 << 29 - 2, "a position past the wheel's 29-bit entries")
        reserve(positions: position + 1)
        changes &+= 1
        let key = key < .infinity ? key : .infinity
        let old = nodes[position].key
        guard key != old else {
            if key < .infinity { nodes[position].setPlan(latest: latest, flags: flags) }
            return
        }
        if old < .infinity {
            unlink(position)
            count -= 1
        }
        if key < .infinity {
            if count == 0 { base = Self.bucket(key) }
            link(position, key, latest: latest, flags: flags)
            count += 1
        } else {
            nodes[position] = Node()
        }
        if key < minimumKey {
            minimumKey = key
            minimum = Int32(position)
        } else if Int32(position) == minimum {
            findMinimum()
        }
    }

    /// ``set(_:to:latest:flags:)`` for a position not queued now (one whose
    /// reload was just issued, being planned again as it completes): in
    /// the usual case (a finite key in the ring, in a bucket that is not
    /// the earliest one kept in order, the queue not empty) it is appended
    /// to its bucket here, inlined where a completion calls it; otherwise
    /// ``set(_:to:latest:flags:)`` does it.
    @inline(__always)
    mutating func insert(_ position: Int, at key: Double, latest: Double, flags: Node.Flags) {
        if position < nodes.count, count > 0, key < .infinity, nodes[position].key == .infinity {
            let b = Self.bucket(key)
            // (Wrapping arithmetic: `base` is within ±2^60, a position below
            // 2^29 - 2, and the count below the positions.)
            if b >= base, b < base &+ Int64(Self.ringSize), b != orderBucket {
                let entry = append(Int32(truncatingIfNeeded: position), slot: Self.slot(b))
                nodes[position] = Node(key: key, latest: latest, entry: entry, flags: flags)
                count &+= 1
                changes &+= 1
                let p = Int32(truncatingIfNeeded: position)
                if key < minimumKey {
                    minimumKey = key
                    minimum = p
                } else if p == minimum {
                    findMinimum()
                }
                return
            }
        }
        set(position, to: key, latest: latest, flags: flags)
    }

    /// Takes out `due`, every position whose key is `≤ bound` (a wakeup's
    /// due reloads as a walk up to `bound` found them, each of them
    /// issued), as `set(_:to:)` to `.infinity` would one at a time; returns
    /// how many it took out. The ring's buckets before `bound`'s are
    /// emptied whole, their chunks given back to the pool at once and
    /// their nodes reset by position from `due`, each a write whose place
    /// is known; `bound`'s own bucket and `far` a position at a time.
    /// Every position whose key is `≤ bound` must be in `due` (checked in
    /// debug builds), in any order.
    @discardableResult
    mutating func removeAll(_ due: UnsafeBufferPointer<Int>, upTo bound: Double) -> Int {
        guard minimumKey <= bound else { return 0 }
        changes &+= 1
        var removed = 0
        let last = Self.bucket(bound)
        let ringEnd = base + Int64(Self.ringSize)
        // `bound`'s bucket, when in the ring: the keys up to `bound`, from
        // the end of its order when it has one.
        if last == orderBucket && last >= base {
            while let entry = order.last, !(entry.key > bound) {
                order.removeLast()
                let p = Int(entry.position)
                guard nodes[p].key == entry.key else { continue }  // stale
                unlink(p)
                nodes[p] = Node()
                removed += 1
            }
        } else if last >= base && last < ringEnd {
            let slot = Self.slot(last)
            removed += withUnsafeTemporaryAllocation(of: Int32.self, capacity: Int(buckets[slot].count)) { taken in
                var found = 0
                let nodes = nodes.unsafeBaseAddress
                let entries = entries.unsafeBaseAddress
                forEachEntry(inSlot: slot) { i in
                    let p = entries[i]
                    if nodes[Int(p)].key <= bound {
                        taken[found] = p
                        found += 1
                    }
                }
                for p in taken[..<found] {
                    unlink(Int(p))
                    self.nodes[Int(p)] = Node()
                }
                return found
            }
        }
        while let p = far.minimumPosition, far.minimumKey <= bound {
            far.set(p, to: .infinity)
            nodes[p] = Node()
            removed += 1
        }
        // Whole buckets, `base ..< min(last, ringEnd)`: what is still
        // queued of `due` is theirs.
        let wholeEnd = min(last, ringEnd)
        if wholeEnd > base {
            assert(
                positionsInBuckets(from: base, through: wholeEnd - 1) == due.count - removed,
                "a position due by the bound is missing from `due`")
            let nodes = nodes.unsafeBaseAddress
            for p in due where nodes[p].key < .infinity {
                assert(nodes[p].key <= bound, "a position in `due` is queued after the bound")
                nodes[p] = Node()
                removed += 1
            }
            let buckets = buckets.unsafeBaseAddress
            let links = chunkLinks.unsafeBaseAddress
            let occupied = occupied.unsafeBaseAddress
            var free = freeChunk
            // (Each word's bits are read before its slots are visited:
            // clearing them on the way is safe.)
            Self.forEachOccupied(
                in: UnsafeBufferPointer(start: occupied, count: Self.ringSize / 64), from: base, through: wholeEnd - 1
            ) { slot in
                var chunk = buckets[slot].newest
                while chunk >= 0 {
                    let older = links[Int(chunk)]
                    links[Int(chunk)] = free
                    free = chunk
                    chunk = older
                }
                buckets[slot] = Bucket()
                occupied[slot >> 6] &= ~(1 << UInt64(slot & 63))
            }
            freeChunk = free
        }
        count -= removed
        findMinimum()
        return removed
    }

    /// How many positions the ring's buckets `from ... through` hold (the
    /// debug builds' check of ``removeAll(_:upTo:)``).
    private func positionsInBuckets(from: Int64, through: Int64) -> Int {
        var found = 0
        forEachOccupied(from: from, through: through) { slot in found += Int(buckets[slot].count) }
        return found
    }

    /// Calls `body` with every position whose key is `≤ bound`, and its key,
    /// in no particular order.
    func collect(upTo bound: Double, _ body: (Int, Double) -> Void) {
        collectNodes(upTo: bound) { position, node in body(position, node.key) }
    }

    /// Calls `body` with every position whose key is `≤ bound`, and its
    /// node, in no particular order.
    func collectNodes(upTo bound: Double, _ body: (Int, Node) -> Void) {
        collectNodes(fromBucket: base, upTo: bound, body)
    }

    /// Calls `body` with every position whose key is in `(lower, bound]`,
    /// and its node, in no particular order: ``collectNodes(upTo:_:)``
    /// without reading the buckets before `lower`'s.
    func collectNodes(after lower: Double, upTo bound: Double, _ body: (Int, Node) -> Void) {
        guard lower < bound else { return }
        collectNodes(fromBucket: Self.bucket(lower), upTo: bound) { position, node in
            if node.key > lower { body(position, node) }
        }
    }

    /// Calls `body` with every position whose key is `≤ bound`, in the
    /// buckets from `first` (and `base`) on and in `far`.
    @inline(__always)
    private func collectNodes(fromBucket first: Int64, upTo bound: Double, _ body: (Int, Node) -> Void) {
        guard minimumKey <= bound else { return }
        let last = Self.bucket(bound)
        let end = min(last, base + Int64(Self.ringSize) - 1)
        let nodes = nodes.unsafeBaseAddress
        // The bucket kept in order, when walked (the earliest, mostly, a
        // wakeup at a time): its keys up to `bound` from the end of its
        // order, not its whole list.
        let orderSlot = orderBucket >= max(base, first) && orderBucket <= end ? Self.slot(orderBucket) : -1
        forEachOccupied(from: max(base, first), through: end) { slot in
            if slot == orderSlot {
                for entry in order.reversed() {
                    guard !(entry.key > bound) else { break }
                    let node = nodes[Int(entry.position)]
                    if node.key == entry.key { body(Int(entry.position), node) }  // else stale
                }
                return
            }
            // The bucket's positions are read in order, and the nodes
            // behind them do not wait on each other.
            forEachPosition(inSlot: slot) { p in
                let node = nodes[p]
                if node.key <= bound { body(p, node) }
            }
        }
        if last >= base + Int64(Self.ringSize) {
            far.collect(upTo: bound) { position, _ in body(position, nodes[position]) }
        }
    }

    /// Appends the positions of the ring's buckets from `key`'s (or the
    /// earliest, if later) on, whole buckets, until `buffer` holds at least
    /// `count` or the ring ends; returns the key from which the buckets
    /// were not read (the ring's end when it was read to its end).
    func collectComing(from key: Double, atLeast count: Int, into buffer: inout [Int]) -> Double {
        guard minimumKey < .infinity else { return .infinity }
        let first = Self.slot(base)
        let start = Self.bucket(key) - base
        guard start < Int64(Self.ringSize) else { return max(key, Double(base + Int64(Self.ringSize))) }
        var walked = max(0, start)  // buckets from `base` looked at
        while buffer.count < count {
            guard walked < Int64(Self.ringSize),
                let s = occupied.firstSetBit(circularlyFrom: Self.slot(base + walked)),
                Int64((s - first) & Int(Self.mask)) >= walked
            else {
                walked = Int64(Self.ringSize)
                break
            }
            forEachPosition(inSlot: s) { p in buffer.append(p) }
            walked = Int64((s - first) & Int(Self.mask)) + 1
        }
        return Double(base + walked)
    }

    /// Appends every position whose key is `≤ bound` to `buffer`, in no
    /// particular order.
    func collect(upTo bound: Double, into buffer: inout [Int]) {
        collect(upTo: bound) { position, _ in buffer.append(position) }
    }

    /// Forgets `position` and renumbers every later position one down (an
    /// instance removed from the middle of the scheduler's array). O(N).
    mutating func removePosition(_ position: Int) {
        guard position < nodes.count else { return }
        set(position, to: .infinity)  // (which counts the change)
        _ = nodes.remove(at: position)
        let p = Int32(position)
        let entries = entries.unsafeBaseAddress
        forEachOccupied(from: base, through: base + Int64(Self.ringSize) - 1) { slot in
            forEachEntry(inSlot: slot) { i in
                if entries[i] > p { entries[i] -= 1 }
            }
        }
        if minimum > p { minimum -= 1 }
        far.removePosition(position)
        orderBucket = Self.noBucket
        walkedBucket = Self.noBucket
    }

    /// Reads the node of `position` ahead of its move (in the first pass
    /// of ``SchedulerCore``'s read-ahead).
    @inline(__always)
    func readAheadNode(_ position: Int) {
        nodes.withUnsafeBufferPointer { ReadAhead.line($0.baseAddress.unsafelyUnwrapped + position) }
    }

    // MARK: - Buckets

    /// The bucket of a key: its second, ±`farBucket` past ±2^60 seconds.
    @inline(__always)
    private static func bucket(_ key: Double) -> Int64 { roundedDown(key, within: farBucket) }

    @inline(__always)
    private static func slot(_ bucket: Int64) -> Int { Int(bucket & mask) }

    /// Calls `body` with the index of every entry of ring slot `s`'s
    /// bucket, its newest chunk first.
    @inline(__always)
    private func forEachEntry(inSlot s: Int, _ body: (Int) -> Void) {
        Self.forEachEntry(of: buckets[s], links: chunkLinks.unsafeBaseAddress, body)
    }

    /// Calls `body` with the index of every entry of `bucket`, its newest
    /// chunk first, the chunks linked by `links`.
    @inline(__always)
    private static func forEachEntry(of bucket: Bucket, links: UnsafePointer<Int32>, _ body: (Int) -> Void) {
        var chunk = Int(bucket.newest)
        // The newest chunk holds the last `count - 1 mod chunkSize + 1`.
        var filled = (Int(bucket.count) &- 1) & (chunkSize - 1) &+ 1
        while chunk >= 0 {
            let first = chunk &* chunkSize
            for i in first..<first &+ filled { body(i) }
            chunk = Int(links[chunk])
            filled = chunkSize
        }
    }

    /// Calls `body` with every position in ring slot `s`'s bucket.
    @inline(__always)
    private func forEachPosition(inSlot s: Int, _ body: (Int) -> Void) {
        let entries = entries.unsafeBaseAddress
        forEachEntry(inSlot: s) { i in body(Int(entries[i])) }
    }

    /// Appends `position` to ring slot `s`'s bucket; returns its entry's index.
    @inline(__always)
    private mutating func append(_ position: Int32, slot s: Int) -> Int32 {
        var bucket = buckets[s]
        let within = Int(bucket.count) & (Self.chunkSize - 1)
        if within == 0 {
            let chunk = takeChunk()
            chunkLinks[Int(chunk)] = bucket.newest
            if bucket.newest < 0 { occupied[s >> 6] |= 1 << UInt64(s & 63) }
            bucket.newest = chunk
        }
        let entry = Int(bucket.newest) &* Self.chunkSize &+ within
        entries[entry] = position
        bucket.count &+= 1
        buckets[s] = bucket
        return Int32(truncatingIfNeeded: entry)
    }

    /// A free chunk, taken from the pool (grown when it has none).
    @inline(__always)
    private mutating func takeChunk() -> Int32 {
        let chunk = freeChunk
        if chunk >= 0 {
            freeChunk = chunkLinks[Int(chunk)]
            return chunk
        }
        return addChunk()
    }

    /// A new chunk at the pool's end.
    @inline(never)
    private mutating func addChunk() -> Int32 {
        let chunk = chunkLinks.count
        precondition((chunk + 1) * Self.chunkSize < 1 << 29 - 2, "a pool past the wheel's 29-bit entries")
        entries.append(repeating: -1, count: Self.chunkSize)
        chunkLinks.append(-1)
        return Int32(chunk)
    }

    /// Gives `chunk` back to the pool.
    @inline(__always)
    private mutating func freeChunk(_ chunk: Int32) {
        chunkLinks[Int(chunk)] = freeChunk
        freeChunk = chunk
    }

    /// Takes entry `entry` out of ring slot `s`'s bucket: the bucket's last
    /// entry takes its place (its node told where it went).
    private mutating func remove(entry: Int, slot s: Int) {
        var bucket = buckets[s]
        let lastWithin = (Int(bucket.count) &- 1) & (Self.chunkSize - 1)
        let last = Int(bucket.newest) &* Self.chunkSize &+ lastWithin
        if entry != last {
            let moved = entries[last]
            entries[entry] = moved
            nodes[Int(moved)].entry = Int32(truncatingIfNeeded: entry)
        }
        bucket.count &-= 1
        if lastWithin == 0 {
            let chunk = bucket.newest
            bucket.newest = chunkLinks[Int(chunk)]
            freeChunk(chunk)
        }
        if bucket.count == 0 { occupied[s >> 6] &= ~(1 << UInt64(s & 63)) }
        buckets[s] = bucket
    }

    /// Empties ring slot `s`'s bucket, its chunks back to the pool (its
    /// positions' nodes are the caller's).
    private mutating func empty(slot s: Int) {
        var chunk = buckets[s].newest
        while chunk >= 0 {
            let older = chunkLinks[Int(chunk)]
            freeChunk(chunk)
            chunk = older
        }
        buckets[s] = Bucket()
        occupied[s >> 6] &= ~(1 << UInt64(s & 63))
    }

    /// Puts `position` (not queued) at `key`: in its bucket when in the
    /// ring, in `far` past it; a key before `base` moves `base` down first.
    private mutating func link(_ position: Int, _ key: Double, latest: Double, flags: Node.Flags) {
        let b = Self.bucket(key)
        if b < base { moveBase(down: b) }
        guard b < base + Int64(Self.ringSize) else {
            nodes[position] = Node(key: key, latest: latest, entry: Self.inFar, flags: flags)
            far.set(position, to: key)
            return
        }
        if b == orderBucket { orderBucket = Self.noBucket }
        let entry = append(Int32(truncatingIfNeeded: position), slot: Self.slot(b))
        nodes[position] = Node(key: key, latest: latest, entry: entry, flags: flags)
    }

    /// Takes `position` (queued) out of its bucket or `far`; its node is
    /// left for the caller to set.
    private mutating func unlink(_ position: Int) {
        let node = nodes[position]
        if node.entry == Self.inFar {
            far.set(position, to: .infinity)
            return
        }
        remove(entry: Int(node.entry), slot: Self.slot(Self.bucket(node.key)))
    }

    /// Moves `base` down to `b`: the buckets that no longer fit the ring
    /// (from `b + ringSize` on) go to `far`.
    private mutating func moveBase(down b: Int64) {
        let ringEnd = base + Int64(Self.ringSize)
        let keepEnd = b + Int64(Self.ringSize)
        if keepEnd < ringEnd {
            var evicted: [Int] = []
            forEachOccupied(from: max(keepEnd, base), through: ringEnd - 1) { slot in
                evicted.append(slot)
            }
            var positions: [Int] = []
            for slot in evicted {
                positions.removeAll(keepingCapacity: true)
                forEachPosition(inSlot: slot) { p in positions.append(p) }
                for p in positions {
                    nodes[p].entry = Self.inFar
                    far.set(p, to: nodes[p].key)
                }
                empty(slot: slot)
            }
        }
        base = b
        orderBucket = Self.noBucket
    }

    /// Finds the smallest key again (the earliest moved later or left):
    /// moves `base` up to the first bucket that is not empty (bringing the
    /// keys of `far` now within the ring in) and reads that bucket through.
    private mutating func findMinimum() {
        minimumKey = .infinity
        minimum = -1
        guard count > 0 else { return }
        if let slot = firstOccupied() {
            base += (Int64(slot) - base) & Self.mask
        } else {
            base = Self.bucket(far.minimumKey)
        }
        // Keys of `far` now within the ring come in (in order of key).
        let ringEnd = base + Int64(Self.ringSize)
        while let p = far.minimumPosition, Self.bucket(far.minimumKey) < ringEnd {
            let b = Self.bucket(far.minimumKey)
            far.set(p, to: .infinity)
            if b == orderBucket { orderBucket = Self.noBucket }
            nodes[p].entry = append(Int32(truncatingIfNeeded: p), slot: Self.slot(b))
        }
        if orderBucket == base {
            while let last = order.last, nodes[Int(last.position)].key != last.key { order.removeLast() }
            if let last = order.last {
                (minimumKey, minimum) = (last.key, last.position)
                return
            }
        }
        // A bucket walked a second time (its earliest left and others
        // stay: a batch's reloads issued one wakeup at a time) is put in
        // order: walked at every change, a bucket of k took k²/2 reads.
        let again = walkedBucket == base
        walkedBucket = base
        if again {
            if order.capacity > Self.orderKept { order = [] }
            order.removeAll(keepingCapacity: true)
        }
        let nodes = nodes.unsafeBaseAddress
        let entries = entries.unsafeBaseAddress
        var found = (key: Double.infinity, position: Int32(-1))
        var order = self.order
        self.order = []
        Self.forEachEntry(of: buckets[Self.slot(base)], links: chunkLinks.unsafeBaseAddress) { i in
            let p = entries[i]
            let key = nodes[Int(p)].key
            if key < found.key { found = (key, p) }
            if again { order.append(KeyedPosition(key: key, position: p)) }
        }
        (minimumKey, minimum) = found
        if again {
            order.withUnsafeMutableBufferPointer { $0.sortLatestFirst() }
            orderBucket = base
        }
        self.order = order
    }

    /// The ring slot of the first bucket from `base` on that is not empty.
    private func firstOccupied() -> Int? {
        occupied.firstSetBit(circularlyFrom: Self.slot(base))
    }

    /// Calls `body` with the ring slot of every bucket in `from ... through`
    /// (within the ring) that is not empty, in order of bucket.
    @inline(__always)
    private func forEachOccupied(from: Int64, through: Int64, _ body: (Int) -> Void) {
        occupied.withUnsafeBufferPointer { Self.forEachOccupied(in: $0, from: from, through: through, body) }
    }

    /// ``forEachOccupied(from:through:_:)`` over the bits `occupied`.
    @inline(__always)
    private static func forEachOccupied(
        in occupied: UnsafeBufferPointer<UInt64>, from: Int64, through: Int64, _ body: (Int) -> Void
    ) {
        guard through >= from else { return }
        let span = Int(min(through - from + 1, Int64(ringSize)))
        var s = slot(from)
        var left = span
        while left > 0 {
            let word = s >> 6
            let bit = s & 63
            let take = min(64 - bit, left)
            var bits = occupied[word] >> UInt64(bit)
            if take < 64 { bits &= (1 << UInt64(take)) - 1 }
            while bits != 0 {
                let i = bits.trailingZeroBitCount
                body(s + i)
                bits &= bits - 1
            }
            left -= take
            s = (s + take) & Int(mask)
        }
    }
}
