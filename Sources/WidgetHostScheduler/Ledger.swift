/// A rolling-count ledger: the times of counted events, oldest first, with the
/// exact time the owner is back under a count limit (Android's
/// `CountQuotaTracker`: "oldest in window + window").
public struct RollingLedger: Sendable, Hashable, Codable {
    /// Event times, ascending. Times that can no longer fall in any future
    /// window are pruned on `record`.
    public private(set) var times: [Double] = []

    public init(times: [Double] = []) { self.times = times.sorted() }

    /// Index of the first time inside the window ending at `time`: times `t`
    /// with `t > time - window` count.
    @inlinable
    func firstIndex(inWindowEndingAt time: Double, window: Double) -> Int {
        let start = time - window
        var low = 0
        var high = times.count
        while low < high {
            let mid = (low + high) / 2
            if times[mid] > start { high = mid } else { low = mid + 1 }
        }
        return low
    }

    /// Events counted in the window `(time - window, time]`.
    public func count(at time: Double, window: Double) -> Int {
        let first = firstIndex(inWindowEndingAt: time, window: window)
        var end = times.count
        while end > first, times[end - 1] > time { end -= 1 }
        return end - first
    }

    /// The earliest time `≥ time` at which one more event keeps the count in
    /// the window below or at `limit`: `time` itself when there is room, else
    /// the moment enough old events leave the window. `.infinity` if `limit ≤ 0`.
    public func nextAllowed(from time: Double, limit: Int, window: Double) -> Double {
        guard limit > 0 else { return .infinity }
        let first = firstIndex(inWindowEndingAt: time, window: window)
        let inWindow = times.count - first
        if inWindow < limit { return time }
        // Drop the oldest (inWindow - limit + 1) events: back in quota when the
        // last of them leaves, at its time + window.
        return max(time, times[first + inWindow - limit] + window)
    }

    /// The newest recorded time.
    public var last: Double? { times.last }

    /// Records an event at `time` and forgets events that no window ending at
    /// or after `time` can contain.
    public mutating func record(_ time: Double, window: Double) {
        if times.count == times.capacity {
            // Grow by 4 times, not twice: a full 24 h ledger keeps its size,
            // so doubling would leave up to half of every ledger unused (by
            // an eighth: 3 unused times on average at 43, and 6 B per
            // instance more resident at 100,000).
            times.reserveCapacity(times.count + 4)
        }
        if let last = times.last, time < last {
            let index = times.firstIndex(where: { $0 > time }) ?? times.count
            times.insert(time, at: index)
        } else {
            times.append(time)
        }
        let first = firstIndex(inWindowEndingAt: times.last ?? time, window: window)
        if first > 0 { times.removeFirst(first) }
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
        guard let index = times.lastIndex(of: time) else { return false }
        times.remove(at: index)
        return true
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

    static func hourIndex(_ time: Double) -> Int64 {
        guard time.isFinite else { return 0 }
        return Int64((time / 3600).rounded(.down))
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
        var h = max(first, last - 23)
        while h <= last {
            let bit = hour - h
            if bit >= 0 && bit < 32 { mask |= 1 << UInt32(bit) }
            h += 1
        }
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
