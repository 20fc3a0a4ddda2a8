/// The instance positions queued by the time their next reload is due: a
/// timing wheel of one-second buckets (a calendar queue), with a 4-ary heap
/// (``DueQueue``) for the times past its horizon.
///
/// The reload queue sees every reload twice (taken out when issued, queued
/// again when it completes), almost always within the next hour. In a heap
/// each of those moves sifts through the levels and writes, at each level,
/// the new slot of the position it passed (a random cache line per level at
/// 100,000 instances); here a move unlinks the position from one bucket's
/// list and links it into another: a few writes, none of them per level.
///
/// - **Buckets.** A key `t` belongs to bucket `⌊t⌋`; the ring holds the
///   8,192 buckets from `base` on (2 h 16 min), each a doubly linked list
///   threaded through the per-position nodes (``Node``: the key, what is
///   read of the plan beside it, next, previous: 24 bytes per position),
///   with a bitmap of the buckets that are not empty. Keys
///   from `base + 8192` on wait in `far`, and come into the ring as `base`
///   moves up to them; a key before `base` moves `base` down, and whatever
///   then falls past the ring's end goes to `far`.
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
///   alone. ``removeAll(_:upTo:)`` takes out what a walk found, the whole
///   buckets by the positions found, not by their lists.
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
    /// whether it is a plain policy reload), and its neighbours in its
    /// bucket's list: 24 bytes, so that a walk reads one place per
    /// position, not a second record of it.
    struct Node: Sendable {
        /// `.infinity`: not queued.
        var key: Double = .infinity
        /// The coalescing deadline of the queued plan.
        var latest: Double = .infinity
        /// The next position in the bucket, or -1.
        var next: Int32 = -1
        /// The previous position plus 2 (0: in `far`; 1: the first of its
        /// bucket) in the low 29 bits (positions below 2^29 - 2), and the
        /// plan's three flags in the top three.
        private var link: UInt32 = 1

        private static let cappedBit: UInt32 = 0x8000_0000
        private static let plainBit: UInt32 = 0x4000_0000
        private static let heldBit: UInt32 = 0x2000_0000
        private static let flagBits: UInt32 = 0xE000_0000

        init() {}

        init(key: Double, latest: Double, next: Int32, previous: Int32, flags: Flags) {
            self.key = key
            self.latest = latest
            self.next = next
            // (Wrapping: a position is below 2^29 - 2, checked as the nodes grow.)
            self.link = UInt32(truncatingIfNeeded: previous &+ 2) | flags.bits
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

        /// The previous position in the bucket, -1 for the first, or
        /// ``ReloadWheel/inFar`` when the key waits in `far`.
        var previous: Int32 {
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

    /// The ring's size, in buckets of one second.
    static let ringSize = 8192
    private static let mask = Int64(ringSize - 1)
    /// `Node.previous` of a position whose key is in `far`.
    static let inFar: Int32 = -2
    /// A bucket number for keys too large for an `Int64` of seconds (far past
    /// any ring): they stay in `far`.
    private static let farBucket = Int64(1) << 60

    private var nodes = OwnedArray<Node>()
    /// Per ring slot: the first position of its bucket, or -1.
    private var heads = OwnedArray<Int32>(repeating: -1, count: ringSize)
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
    /// key differs) and are dropped from the end; a position linked into
    /// the bucket makes the whole order stale (`orderBucket` none).
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
        copy.heads = heads.clone()
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
        precondition(position < 1 << 29 - 2, "a position past the wheel's 29-bit links")
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
    /// the earliest one kept in order, the queue not empty) it is linked
    /// at its bucket's head here, inlined where a completion calls it;
    /// otherwise ``set(_:to:latest:flags:)`` does it.
    @inline(__always)
    mutating func insert(_ position: Int, at key: Double, latest: Double, flags: Node.Flags) {
        if position < nodes.count, count > 0, key < .infinity, nodes[position].key == .infinity {
            let b = Self.bucket(key)
            // (Wrapping arithmetic: `base` is within ±2^60, a position below
            // 2^29 - 2, and the count below the positions.)
            if b >= base, b < base &+ Int64(Self.ringSize), b != orderBucket {
                linkAtHead(position, slot: Self.slot(b), key, latest: latest, flags: flags)
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
    /// emptied whole, their nodes reset by position from `due`, each a
    /// write whose place is known, where following the buckets' lists
    /// waited for each node's line to find the next (at 100,000 instances
    /// a wakeup's thousands of nodes, one miss after another: a tenth of
    /// the time of a reload); `bound`'s own bucket and `far` a position at
    /// a time, their neighbours mended. Every position whose key is `≤
    /// bound` must be in `due` (checked in debug builds), in any order.
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
            var p = heads[Self.slot(last)]
            while p >= 0 {
                let node = nodes[Int(p)]
                if node.key <= bound {
                    unlink(Int(p))
                    nodes[Int(p)] = Node()
                    removed += 1
                }
                p = node.next
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
                nodesInBuckets(from: base, through: wholeEnd - 1) == due.count - removed,
                "a position due by the bound is missing from `due`")
            nodes.withUnsafeMutableBufferPointer { nodes in
                for p in due where nodes[p].key < .infinity {
                    assert(nodes[p].key <= bound, "a position in `due` is queued after the bound")
                    nodes[p] = Node()
                    removed += 1
                }
            }
            heads.withUnsafeMutableBufferPointer { heads in
                occupied.withUnsafeMutableBufferPointer { occupied in
                    // (Each word's bits are read before its slots are
                    // visited: clearing them on the way is safe.)
                    Self.forEachOccupied(in: UnsafeBufferPointer(occupied), from: base, through: wholeEnd - 1) {
                        slot in
                        heads[slot] = -1
                        occupied[slot >> 6] &= ~(1 << UInt64(slot & 63))
                    }
                }
            }
        }
        count -= removed
        findMinimum()
        return removed
    }

    /// How many positions the ring's buckets `from ... through` hold (the
    /// debug builds' check of ``removeAll(_:upTo:)``).
    private func nodesInBuckets(from: Int64, through: Int64) -> Int {
        var found = 0
        forEachOccupied(from: from, through: through) { slot in
            var p = heads[slot]
            while p >= 0 {
                found += 1
                p = nodes[Int(p)].next
            }
        }
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
        nodes.withUnsafeBufferPointer { nodes in
            heads.withUnsafeBufferPointer { heads in
                // The bucket kept in order, when walked (the earliest,
                // mostly, a wakeup at a time): its keys up to `bound` from
                // the end of its order, not its whole list.
                let orderSlot =
                    orderBucket >= max(base, first) && orderBucket <= end ? Self.slot(orderBucket) : -1
                // Several buckets' lists at once, a node of each in turn: each
                // node of a list is found through the one before it, so one
                // list at a time waits for each miss in turn (at 100,000
                // instances, a wakeup's walk over its thousands of nodes);
                // the lists' loads do not wait on each other.
                withUnsafeTemporaryAllocation(of: Int32.self, capacity: Self.listsWalkedTogether) { lists in
                    var open = 0
                    forEachOccupied(from: max(base, first), through: end) { slot in
                        if slot == orderSlot {
                            for entry in order.reversed() {
                                guard !(entry.key > bound) else { break }
                                let node = nodes[Int(entry.position)]
                                if node.key == entry.key { body(Int(entry.position), node) }  // else stale
                            }
                            return
                        }
                        lists[open] = heads[slot]
                        open += 1
                        if open == lists.count {
                            Self.walk(lists, open, nodes, bound, body)
                            open = 0
                        }
                    }
                    Self.walk(lists, open, nodes, bound, body)
                }
            }
        }
        if last >= base + Int64(Self.ringSize) {
            far.collect(upTo: bound) { position, _ in body(position, nodes[position]) }
        }
    }

    /// How many buckets' lists a walk follows together.
    static let listsWalkedTogether = 16

    /// Calls `body` with every node whose key is `≤ bound` of the lists
    /// that start at `lists[..<open]` (not empty), a node of each in turn.
    @inline(__always)
    private static func walk(
        _ lists: UnsafeMutableBufferPointer<Int32>, _ open: Int, _ nodes: UnsafeBufferPointer<Node>,
        _ bound: Double, _ body: (Int, Node) -> Void
    ) {
        var open = open
        while open > 0 {
            var i = 0
            while i < open {
                let p = Int(lists[i])
                let node = nodes[p]
                if node.key <= bound { body(p, node) }
                if node.next >= 0 {
                    lists[i] = node.next
                    i += 1
                } else {
                    // This list ends: the last open one takes its place.
                    open -= 1
                    lists[i] = lists[open]
                }
            }
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
            var p = heads[s]
            while p >= 0 {
                buffer.append(Int(p))
                p = nodes[Int(p)].next
            }
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
        func renumbered(_ q: Int32) -> Int32 { q > p ? q - 1 : q }
        for i in nodes.indices {
            nodes[i].next = renumbered(nodes[i].next)
            if nodes[i].previous >= 0 { nodes[i].previous = renumbered(nodes[i].previous) }
        }
        for i in heads.indices { heads[i] = renumbered(heads[i]) }
        minimum = renumbered(minimum)
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

    /// Puts `position` (not queued) at `key`: in its bucket's list when in
    /// the ring, in `far` past it; a key before `base` moves `base` down first.
    private mutating func link(_ position: Int, _ key: Double, latest: Double, flags: Node.Flags) {
        let b = Self.bucket(key)
        if b < base { moveBase(down: b) }
        guard b < base + Int64(Self.ringSize) else {
            nodes[position] = Node(key: key, latest: latest, next: -1, previous: Self.inFar, flags: flags)
            far.set(position, to: key)
            return
        }
        if b == orderBucket { orderBucket = Self.noBucket }
        linkAtHead(position, slot: Self.slot(b), key, latest: latest, flags: flags)
    }

    /// Puts `position` first in the list of ring slot `s`, at `key`.
    @inline(__always)
    private mutating func linkAtHead(_ position: Int, slot s: Int, _ key: Double, latest: Double, flags: Node.Flags) {
        let head = heads[s]
        let p = Int32(truncatingIfNeeded: position)  // below 2^29 - 2
        // One pass over the nodes for both writes.
        nodes.withUnsafeMutableBufferPointer { nodes in
            nodes[position] = Node(key: key, latest: latest, next: head, previous: -1, flags: flags)
            if head >= 0 { nodes[Int(head)].previous = p }
        }
        if head < 0 { occupied[s >> 6] |= 1 << UInt64(s & 63) }
        heads[s] = p
    }

    /// Takes `position` (queued) out of its bucket's list or `far`; its
    /// node's key is left for the caller to set.
    private mutating func unlink(_ position: Int) {
        let node = nodes[position]
        if node.previous == Self.inFar {
            far.set(position, to: .infinity)
            return
        }
        if node.previous >= 0 {
            nodes.withUnsafeMutableBufferPointer { nodes in
                if node.next >= 0 { nodes[Int(node.next)].previous = node.previous }
                nodes[Int(node.previous)].next = node.next
            }
        } else {
            if node.next >= 0 { nodes[Int(node.next)].previous = node.previous }
            let s = Self.slot(Self.bucket(node.key))
            heads[s] = node.next
            if node.next < 0 { occupied[s >> 6] &= ~(1 << UInt64(s & 63)) }
        }
    }

    /// Moves `base` down to `b`: the buckets that no longer fit the ring
    /// (from `b + ringSize` on) go to `far`.
    private mutating func moveBase(down b: Int64) {
        let ringEnd = base + Int64(Self.ringSize)
        let keepEnd = b + Int64(Self.ringSize)
        if keepEnd < ringEnd {
            var evicted: [Int32] = []
            heads.withUnsafeBufferPointer { heads in
                forEachOccupied(from: max(keepEnd, base), through: ringEnd - 1) { slot in
                    var p = heads[slot]
                    while p >= 0 {
                        evicted.append(p)
                        p = nodes[Int(p)].next
                    }
                }
            }
            for p in evicted {
                unlink(Int(p))
                nodes[Int(p)].next = -1
                nodes[Int(p)].previous = Self.inFar
                far.set(Int(p), to: nodes[Int(p)].key)
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
            let key = far.minimumKey
            far.set(p, to: .infinity)
            let s = Self.slot(Self.bucket(key))
            let head = heads[s]
            nodes[p].next = head
            nodes[p].previous = -1
            if head >= 0 {
                nodes[Int(head)].previous = Int32(p)
            } else {
                occupied[s >> 6] |= 1 << UInt64(s & 63)
            }
            heads[s] = Int32(p)
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
        var p = heads[Self.slot(base)]
        while p >= 0 {
            let node = nodes[Int(p)]
            if node.key < minimumKey {
                minimumKey = node.key
                minimum = p
            }
            if again { order.append(KeyedPosition(key: node.key, position: p)) }
            p = node.next
        }
        if again {
            order.withUnsafeMutableBufferPointer { $0.sortLatestFirst() }
            orderBucket = base
        }
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
