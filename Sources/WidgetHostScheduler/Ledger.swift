/// A rolling-count ledger: the times of counted events, oldest first, with the
/// exact time the owner is back under a count limit (Android's
/// `CountQuotaTracker`: "oldest in window + window").
///
/// A ring of times in one heap block (``LedgerStorage``): recording a time
/// writes one slot and forgets the times that left the window by moving the
/// ring's start, where an array moved every time it kept down one place (a
/// full 24 h ledger is 40-70 times, and every counted reload forgot one).
/// Copied on write; its equality, hash and Codable form are those of
/// ``times``.
public struct RollingLedger: Sendable, Hashable, Codable {
    /// The ring; nil while no time was ever recorded.
    private var storage: LedgerStorage? {
        get { ring.storage }
        _modify { yield &ring.storage }
        set { ring.storage = newValue }
    }
    private var ring = Ring()

    /// The ring's reference, `Sendable` as ``LedgerStorage``'s base class
    /// cannot be: a shared ring is never changed (copy on write).
    private struct Ring: @unchecked Sendable {
        var storage: LedgerStorage?
    }

    /// Event times, ascending. Times that can no longer fall in any future
    /// window are pruned on `record`. (A new array: off the hot paths.)
    public var times: [Double] {
        guard let storage else { return [] }
        return (0..<count).map { storage[$0] }
    }

    public init(times: [Double] = []) {
        guard !times.isEmpty else { return }
        let sorted = times.sorted()
        let storage = LedgerStorage.make(capacity: sorted.count)
        for time in sorted { storage.append(time) }
        self.storage = storage
    }

    /// The number of times held.
    public var count: Int { storage?.count ?? 0 }

    /// Whether no time is held.
    public var isEmpty: Bool { count == 0 }

    /// Reads the ring's first line ahead of the work: its reference count
    /// (which the uniqueness check before a time is recorded reads) and its
    /// header. See ``InstanceRecords/readAheadReferenced(_:)``.
    func readAheadHeader() {
        // From the reference's bits: no reference held over the prefetch,
        // which the compiler cannot see into (holding one was a retain and
        // a release per ledger).
        if let address = UnsafeRawPointer(bitPattern: unsafeBitCast(storage, to: Int.self)) {
            ReadAhead.line(address)
        }
    }

    /// Reads the lines of the oldest and newest times of the ledger at
    /// `ledger` ahead of the work (what a count and a recording read
    /// first), from the ring's header, read ahead before by
    /// ``readAheadHeader()``.
    ///
    /// Through the ledger's address, not on a ledger: the ring is reached
    /// from the reference's bits, unretained, and the addresses are found
    /// before the prefetches. A ledger loaded as a value held its ring
    /// over the prefetches, which the compiler cannot see into: a retain
    /// and a release per ledger. Returns the two addresses (nil when the
    /// ledger holds no time), for the tests.
    @discardableResult
    static func readAheadTimes(at ledger: UnsafeRawPointer) -> (oldest: UnsafeRawPointer, newest: UnsafeRawPointer)? {
        assert(MemoryLayout<RollingLedger>.size == MemoryLayout<Int>.size, "a ledger is one reference")
        guard let address = UnsafeMutableRawPointer(bitPattern: ledger.load(as: Int.self)),
            let times = Unmanaged<LedgerStorage>.fromOpaque(address)._withUnsafeGuaranteedRef({
                $0.timesToReadAhead
            })
        else { return nil }
        ReadAhead.line(times.oldest)
        ReadAhead.line(times.newest)
        return times
    }

    /// The times the ring holds room for (what it costs, for the profiles).
    var capacity: Int { storage?.room ?? 0 }

    /// Index of the first time inside the window ending at `time`: times `t`
    /// with `t > time - window` count.
    @inline(__always)
    func firstIndex(inWindowEndingAt time: Double, window: Double) -> Int {
        storage?.firstIndex(after: time - window) ?? 0
    }

    /// Events counted in the window `(time - window, time]`.
    public func count(at time: Double, window: Double) -> Int {
        guard let storage else { return 0 }
        let first = firstIndex(inWindowEndingAt: time, window: window)
        var end = storage.count
        while end > first, storage[end - 1] > time { end -= 1 }
        return end - first
    }

    /// The earliest time `≥ time` at which one more event keeps the count in
    /// the window below or at `limit`: `time` itself when there is room, else
    /// the moment enough old events leave the window. `.infinity` if `limit ≤ 0`.
    public func nextAllowed(from time: Double, limit: Int, window: Double) -> Double {
        guard limit > 0 else { return .infinity }
        guard let storage else { return time }
        let first = firstIndex(inWindowEndingAt: time, window: window)
        let inWindow = storage.count - first
        if inWindow < limit { return time }
        // Drop the oldest (inWindow - limit + 1) events: back in quota when the
        // last of them leaves, at its time + window.
        return max(time, storage[first + inWindow - limit] + window)
    }

    /// The newest recorded time.
    public var last: Double? {
        guard let storage, storage.count > 0 else { return nil }
        return storage[storage.count - 1]
    }

    /// Records an event at `time` and forgets events that no window ending at
    /// or after `time` can contain. Returns the events counted in the window
    /// ending at `time` (``count(at:window:)``), the new one included.
    @discardableResult
    public mutating func record(_ time: Double, window: Double) -> Int {
        recordTelling(time, window: window).counted
    }

    /// ``record(_:window:)``, telling also what a scheduler keeps beside
    /// the ledger: the number of times held then and the newest. In the
    /// usual case (in order, with room) those are the count and `time`
    /// itself, known without reading the ring again.
    @inline(__always)
    mutating func recordTelling(_ time: Double, window: Double) -> (counted: Int, held: Int, last: Double?) {
        // The usual case, in one pass over the ring: in order, with room.
        // What is left then is every time in `(time - window, time]`.
        if isKnownUniquelyReferenced(&ring.storage), let storage = ring.storage,
            let count = storage.append(inOrder: time, forgettingThrough: time - window)
        {
            return (count, count, time)
        }
        let counted = recordOutOfTheWay(time, window: window)
        return (counted, count, last)
    }

    /// ``record(_:window:)`` out of order, into a shared ring or one with
    /// no room.
    @inline(never)
    private mutating func recordOutOfTheWay(_ time: Double, window: Double) -> Int {
        if let last, time < last {
            // Out of order (a restart's shifted times): rare, rebuilt sorted.
            var all = times
            all.insert(time, at: all.firstIndex(where: { $0 > time }) ?? all.count)
            self = RollingLedger(times: all)
        } else {
            uniqueStorage(room: 1).append(time)
        }
        storage!.forget(through: (last ?? time) - window)
        return count(at: time, window: window)
    }

    /// Takes back one event recorded at exactly `time` (a charge returned:
    /// the reload it paid for never ran to the end). Returns whether there
    /// was one.
    ///
    /// ```swift
    /// var ledger = RollingLedger(times: [100, 400])
    /// ledger.forget(400)  // true; ledger.times == [100]
    /// ```
    @discardableResult
    public mutating func forget(_ time: Double) -> Bool {
        var all = times
        guard let index = all.lastIndex(of: time) else { return false }
        all.remove(at: index)
        self = RollingLedger(times: all)
        return true
    }

    /// The ring, made unique (copied if shared) with room for `room` more
    /// times. It grows by 4 times, not twice: a full 24 h ledger keeps its
    /// size, so doubling would leave up to half of every ledger unused.
    private mutating func uniqueStorage(room: Int) -> LedgerStorage {
        let count = self.count
        if isKnownUniquelyReferenced(&storage), let storage, storage.room >= count + room { return storage }
        let capacity = storage.map { count + room > $0.room ? count + max(room, 4) : $0.room }
        let grown = LedgerStorage.make(capacity: capacity ?? max(room, 4))
        for i in 0..<count { grown.append(storage.unsafelyUnwrapped[i]) }
        storage = grown
        return grown
    }

    public static func == (a: RollingLedger, b: RollingLedger) -> Bool {
        guard a.count == b.count else { return false }
        if a.storage === b.storage { return true }
        for i in 0..<a.count where a.storage.unsafelyUnwrapped[i] != b.storage.unsafelyUnwrapped[i] { return false }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for i in 0..<count { hasher.combine(storage.unsafelyUnwrapped[i]) }
    }

    private enum CodingKeys: String, CodingKey { case times }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(times: try c.decode([Double].self, forKey: .times))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(times, forKey: .times)
    }
}

/// The ring of a ``RollingLedger``: where it starts, how many times it holds
/// and how many it has room for, then the times, in one block (as an array's
/// count and capacity are). Changed only through `RollingLedger`, and only
/// when uniquely referenced (copy on write). Read through its pointers, not
/// `header`: a class's stored property is checked for exclusive access at
/// run time, which cost more than the ring saved.
final class LedgerStorage: ManagedBuffer<LedgerStorage.Header, Double> {
    struct Header {
        var start: Int32
        var count: Int32
        var capacity: Int32
    }

    /// An empty ring with room for `capacity` times.
    static func make(capacity: Int) -> LedgerStorage {
        // The room the allocator gave (its size classes round up), as an
        // array takes it: a ring that used only what it asked for grew
        // sooner and left more freed blocks behind (9 B per instance at 100,000).
        let buffer = create(minimumCapacity: max(1, capacity)) {
            Header(start: 0, count: 0, capacity: Int32(clamping: $0.capacity))
        }
        return unsafeDowncast(buffer, to: LedgerStorage.self)
    }

    /// The number of times held.
    var count: Int { withUnsafeMutablePointerToHeader { Int($0.pointee.count) } }

    /// The addresses of the oldest and newest times, nil when none is
    /// held: what a search of the ring reads first, and what recording
    /// compares with and writes beside (see
    /// ``RollingLedger/readAheadTimes(at:)``). Only for prefetching: the
    /// addresses are not to be read through.
    var timesToReadAhead: (oldest: UnsafeRawPointer, newest: UnsafeRawPointer)? {
        withUnsafeMutablePointers { header, times in
            let count = header.pointee.count
            guard count > 0 else { return nil }
            let (start, capacity) = (Int(header.pointee.start), Int(header.pointee.capacity))
            let newest = start + Int(count) - 1
            return (
                UnsafeRawPointer(times + start),
                UnsafeRawPointer(times + (newest < capacity ? newest : newest - capacity))
            )
        }
    }

    /// The times there is room for.
    var room: Int { withUnsafeMutablePointerToHeader { Int($0.pointee.capacity) } }

    /// The `i`-th time, oldest first (`0 ≤ i < count`).
    subscript(i: Int) -> Double {
        withUnsafeMutablePointers { header, times in
            let slot = Int(header.pointee.start) + i
            let capacity = Int(header.pointee.capacity)
            return times[slot < capacity ? slot : slot - capacity]
        }
    }

    /// Adds `time` after the newest (`count < capacity`).
    func append(_ time: Double) {
        withUnsafeMutablePointers { header, times in
            precondition(
                header.pointee.count < header.pointee.capacity, "a full ring is grown before it is appended to")
            let slot = Int(header.pointee.start) + Int(header.pointee.count)
            let capacity = Int(header.pointee.capacity)
            times[slot < capacity ? slot : slot - capacity] = time
            header.pointee.count += 1
        }
    }

    /// The index of the first time `> bound` (`count` if none). Galloping
    /// from the oldest: the times that left a window are few and at the
    /// front (recording forgets the rest), so this reads one or two times
    /// where a binary search read six; far bounds cost O(log count).
    func firstIndex(after bound: Double) -> Int {
        withUnsafeMutablePointers { header, times in
            let start = Int(header.pointee.start)
            let capacity = Int(header.pointee.capacity)
            let count = Int(header.pointee.count)
            @inline(__always) func time(_ i: Int) -> Double {
                let slot = start + i
                return times[slot < capacity ? slot : slot - capacity]
            }
            // time(low - 1) <= bound (or low == 0); time(high) > bound (or high == count).
            var low = 0
            var step = 1
            var high = 0
            while high < count && time(high) <= bound {
                low = high + 1
                high += step
                step *= 2
            }
            high = min(high, count)
            while low < high {
                let mid = (low + high) / 2
                if time(mid) > bound { high = mid } else { low = mid + 1 }
            }
            return low
        }
    }

    /// Adds `time` after the newest when it is not older and there is
    /// room, and forgets the times `≤ bound` (`bound < time`), in one pass
    /// over the ring: returns the number of times held then, or nil (and
    /// changes nothing) when `time` is older than the newest or the ring is
    /// full. The times forgotten are few and the oldest (one or two at a
    /// recording, in the steady state), so they are stepped over one by
    /// one; past a few, the rest are found by ``firstIndex(after:)``.
    func append(inOrder time: Double, forgettingThrough bound: Double) -> Int? {
        withUnsafeMutablePointers { header, times in
            var count = Int(header.pointee.count)
            let capacity = Int(header.pointee.capacity)
            guard count > 0, count < capacity else { return nil }
            var start = Int(header.pointee.start)
            let newest = start + count - 1
            guard time >= times[newest < capacity ? newest : newest - capacity] else { return nil }
            let slot = start + count
            times[slot < capacity ? slot : slot - capacity] = time
            count += 1
            var steps = 0
            while count > 0, times[start] <= bound {
                start = start + 1 < capacity ? start + 1 : 0
                count -= 1
                steps += 1
                if steps == 4 { break }
            }
            header.pointee.start = Int32(start)
            header.pointee.count = Int32(count)
            if steps == 4 { forget(through: bound) }
            return Int(header.pointee.count)
        }
    }

    /// Forgets the times `≤ bound` (the oldest ones).
    func forget(through bound: Double) {
        let n = firstIndex(after: bound)
        if n > 0 { dropFirst(n) }
    }

    /// Forgets the `n` oldest times (`n ≤ count`).
    private func dropFirst(_ n: Int) {
        withUnsafeMutablePointers { header, _ in
            let capacity = Int(header.pointee.capacity)
            let start = Int(header.pointee.start) + n
            header.pointee.start = Int32(start < capacity ? start : start - capacity)
            header.pointee.count -= Int32(n)
        }
    }
}

/// How often an instance is viewed, as the set of distinct hours (of the last
/// 24) in which it was visible at some moment. Compact (one word) and Codable.
public struct ViewHistory: Sendable, Hashable, Codable {
    /// The newest hour marked (hours since the epoch).
    public private(set) var hour: Int64 = .min
    /// Bit `i` set: visible during hour `hour - i`.
    public private(set) var mask: UInt32 = 0

    public init() {}

    /// A history as stored: its newest hour (`Int64.min` for none) and its mask.
    public init(hour: Int64, mask: UInt32) {
        self.hour = hour
        self.mask = mask
    }

    /// The hour `time` is in (hours since the epoch, rounded down); 0 for
    /// a time that is not finite, and clamped to ±2^52 hours (far past
    /// any clock), where converting to `Int64` would trap.
    static func hourIndex(_ time: Double) -> Int64 {
        guard time.isFinite else { return 0 }
        return roundedDown(time / 3600, within: 1 << 52)
    }

    /// Marks every hour from `from` to `to` (times) as visible.
    public mutating func markVisible(from: Double, to: Double) {
        let first = Self.hourIndex(from)
        let last = Self.hourIndex(max(from, to))
        if hour == .min || last > hour {
            let shift = hour == .min ? 64 : last - hour
            mask = shift >= 32 ? 0 : mask << UInt32(shift)
            hour = last
        }
        // The hours from `max(first, last - 23)` to `last` are bits
        // `hour - last` up to `hour - max(first, last - 23)`: one run of
        // bits, set at once (a loop over the hours was most of the cost of
        // a tier, asked at every plan of a visible instance).
        let low = hour - last
        let high = min(hour - max(first, last - 23), 31)
        guard low <= high else { return }
        let width = UInt64(high - low + 1)
        mask |= UInt32(truncatingIfNeeded: ((1 << width) - 1) << UInt64(low))
    }

    /// Distinct visible hours in the 24 hours ending with the hour of `time`.
    public func visibleHours(at time: Double) -> Int {
        guard hour != .min else { return 0 }
        let now = Self.hourIndex(time)
        let age = now - hour
        if age >= 24 { return 0 }
        if age < 0 { return (mask & 0x00FF_FFFF).nonzeroBitCount }
        let window: UInt32 = (1 << UInt32(24 - age)) - 1
        return (mask & window).nonzeroBitCount
    }
}

/// How often an instance is viewed, which sets its allowance.
public enum ViewTier: String, Sendable, Hashable, Codable, CaseIterable {
    /// The first days after the instance was added.
    case learning
    case frequent
    case occasional
    case rare
}

/// A stable per-instance offset: the same for the same id in every process
/// (Swift's `Hasher` is seeded per process, so it is not used).
public enum StableJitter {
    /// 64-bit FNV-1a of the UTF-8 bytes of `string`.
    public static func fnv1a64(_ string: String) -> UInt64 {
        func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
            return hash
        }
        // Over the contiguous bytes (the completion of every reload hashes
        // its instance's id): iterating the UTF-8 view took 3 times as long.
        if let value = string.utf8.withContiguousStorageIfAvailable(hash) { return value }
        var copy = string
        return copy.withUTF8(hash)
    }

    /// A fraction in [0, 1) from the id: FNV-1a, then the SplitMix64
    /// finalizer so that ids differing in the last byte spread evenly.
    public static func fraction(for id: String) -> Double {
        fraction(fromHash: fnv1a64(id))
    }

    /// ``fraction(for:)`` from the id's `fnv1a64` already computed.
    static func fraction(fromHash hash: UInt64) -> Double {
        var z = hash
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        z ^= z >> 31
        return Double(z >> 11) * 0x1p-53
    }

    /// The offset in [0, maximum) for `id`; 0 when `maximum ≤ 0`.
    public static func offset(for id: String, maximum: Double) -> Double {
        guard maximum > 0 else { return 0 }
        return fraction(for: id) * maximum
    }
}
