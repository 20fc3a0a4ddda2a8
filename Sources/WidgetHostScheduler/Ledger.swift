/// A rolling-count ledger: the times of counted events, oldest first, with the
/// exact time the owner is back under a count limit (Android's
/// `CountQuotaTracker`: "oldest in window + window").
///
/// A ring of times in one heap block (``LedgerStorage``, searched and
/// changed as a ``LedgerRing``): recording a time writes one slot and
/// forgets the times that left the window by moving the ring's start, where
/// an array moved every time it kept down one place (a full 24 h ledger is
/// 40-70 times, and every counted reload forgot one). Copied on write; its
/// equality, hash and Codable form are those of ``times``. (The scheduler
/// keeps its instances' ledgers in a ``LedgerArena``, and makes one of
/// these when asked for an instance's state.)
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
        return storage.reading { ring in (0..<ring.count).map { ring[$0] } }
    }

    public init(times: [Double] = []) {
        guard !times.isEmpty else { return }
        let sorted = times.sorted()
        let storage = LedgerStorage.make(capacity: sorted.count)
        for time in sorted { storage.append(time) }
        self.storage = storage
    }

    /// The times of `ring`, oldest first, in a ring of their own.
    init(copying ring: LedgerRing) {
        guard ring.count > 0 else { return }
        let storage = LedgerStorage.make(capacity: ring.count)
        storage.changing { copy in
            ring.copy(to: copy.times)
            copy.count = ring.count
        }
        self.storage = storage
    }

    /// The number of times held.
    public var count: Int { storage?.count ?? 0 }

    /// Whether no time is held.
    public var isEmpty: Bool { count == 0 }

    /// Calls `body` with the ring, read only (nil while no time was ever
    /// recorded).
    @inline(__always)
    func reading<R>(_ body: (LedgerRing?) -> R) -> R {
        guard let storage else { return body(nil) }
        return storage.reading { body($0) }
    }

    /// The times the ring holds room for (what it costs, for the profiles).
    var capacity: Int { storage?.room ?? 0 }

    /// Index of the first time inside the window ending at `time`: times `t`
    /// with `t > time - window` count.
    @inline(__always)
    func firstIndex(inWindowEndingAt time: Double, window: Double) -> Int {
        storage?.reading { $0.firstIndex(after: time - window) } ?? 0
    }

    /// Events counted in the window `(time - window, time]`.
    public func count(at time: Double, window: Double) -> Int {
        storage?.reading { $0.count(at: time, window: window) } ?? 0
    }

    /// The earliest time `≥ time` at which one more event keeps the count in
    /// the window below or at `limit`: `time` itself when there is room, else
    /// the moment enough old events leave the window. `.infinity` if `limit ≤ 0`.
    public func nextAllowed(from time: Double, limit: Int, window: Double) -> Double {
        guard limit > 0 else { return .infinity }
        return storage?.reading { $0.nextAllowed(from: time, limit: limit, window: window) } ?? time
    }

    /// The newest recorded time.
    public var last: Double? { storage?.reading { $0.last } }

    /// Records an event at `time` and forgets events that no window ending at
    /// or after `time` can contain. Returns the events counted in the window
    /// ending at `time` (``count(at:window:)``), the new one included.
    @discardableResult
    public mutating func record(_ time: Double, window: Double) -> Int {
        // The usual case, in one pass over the ring: in order, with room.
        // What is left then is every time in `(time - window, time]`.
        if isKnownUniquelyReferenced(&ring.storage), let storage = ring.storage,
            let count = storage.changing({ $0.append(inOrder: time, forgettingThrough: time - window) })
        {
            return count
        }
        return recordOutOfTheWay(time, window: window)
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
        let bound = (last ?? time) - window
        storage!.changing { $0.forget(through: bound) }
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
        if let storage {
            storage.reading { ring in
                grown.changing { copy in
                    ring.copy(to: copy.times)
                    copy.count = ring.count
                }
            }
        }
        storage = grown
        return grown
    }

    public static func == (a: RollingLedger, b: RollingLedger) -> Bool {
        guard a.count == b.count else { return false }
        guard let x = a.storage, let y = b.storage, x !== y else { return true }
        return x.reading { a in y.reading { b in (0..<a.count).allSatisfy { a[$0] == b[$0] } } }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        reading { ring in
            guard let ring else { return }
            for i in 0..<ring.count { hasher.combine(ring[i]) }
        }
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
/// count and capacity are). Read and changed as a ``LedgerRing``; changed
/// only through `RollingLedger`, and only when uniquely referenced (copy on
/// write). Read through its pointers, not `header`: a class's stored
/// property is checked for exclusive access at run time, which cost more
/// than the ring saved.
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

    /// The times there is room for.
    var room: Int { withUnsafeMutablePointerToHeader { Int($0.pointee.capacity) } }

    /// Calls `body` with the ring, to read.
    @inline(__always)
    func reading<R>(_ body: (LedgerRing) -> R) -> R {
        withUnsafeMutablePointers { header, times in
            body(
                LedgerRing(
                    times: times, start: Int(header.pointee.start), count: Int(header.pointee.count),
                    capacity: Int(header.pointee.capacity)))
        }
    }

    /// Calls `body` with the ring, to change; its start and count are
    /// written back after.
    @inline(__always)
    func changing<R>(_ body: (inout LedgerRing) -> R) -> R {
        withUnsafeMutablePointers { header, times in
            var ring = LedgerRing(
                times: times, start: Int(header.pointee.start), count: Int(header.pointee.count),
                capacity: Int(header.pointee.capacity))
            defer {
                header.pointee.start = Int32(truncatingIfNeeded: ring.start)
                header.pointee.count = Int32(truncatingIfNeeded: ring.count)
            }
            return body(&ring)
        }
    }

    /// Adds `time` after the newest (`count < capacity`).
    func append(_ time: Double) { changing { $0.append(time) } }
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
