/// A ring of times, oldest first, in memory its owner keeps: the one
/// implementation of a rolling ledger's searches and changes, over the block
/// of a ``RollingLedger`` (``LedgerStorage``) or over an instance's block in
/// the scheduler's ``LedgerArena``.
///
/// The `count` times from `start` on, wrapping at `capacity`, ascending. A
/// value: a change moves `start` and `count` here, and its owner writes
/// them back.
///
/// ```swift
/// var ring = LedgerRing(times: block, start: 0, count: 0, capacity: 8)
/// ring.append(100)
/// ring.append(400)
/// ring.nextAllowed(from: 500, limit: 2, window: 86_400)  // 86_500: 100 leaves the window then
/// ```
struct LedgerRing {
    /// The block of `capacity` slots.
    let times: UnsafeMutablePointer<Double>
    /// The slot of the oldest time.
    var start: Int
    /// The number of times held.
    var count: Int
    /// The slots in the block.
    let capacity: Int

    /// The slot of the `i`-th time (`0 ≤ i < capacity`).
    @inline(__always)
    func slot(_ i: Int) -> Int {
        let slot = start + i
        return slot < capacity ? slot : slot - capacity
    }

    /// The `i`-th time, oldest first (`0 ≤ i < count`).
    @inline(__always)
    subscript(i: Int) -> Double { times[slot(i)] }

    /// The newest time, nil when none is held.
    var last: Double? { count > 0 ? self[count - 1] : nil }

    /// The addresses of the oldest, second oldest (the oldest again when
    /// it is alone) and newest times, nil when none is held: what a search
    /// of the ring reads first, what recording compares with and writes
    /// beside, and what it reads after forgetting the oldest (a line of
    /// its own when the oldest ends one). For prefetching only.
    var endAddresses: (oldest: UnsafeRawPointer, secondOldest: UnsafeRawPointer, newest: UnsafeRawPointer)? {
        guard count > 0 else { return nil }
        return (
            UnsafeRawPointer(times + start), UnsafeRawPointer(times + slot(min(1, count - 1))),
            UnsafeRawPointer(times + slot(count - 1))
        )
    }

    /// The index of the first time `> bound` (`count` if none). Galloping
    /// from the oldest: the times that left a window are few and at the
    /// front (recording forgets the rest), so this reads one or two times
    /// where a binary search read six; far bounds cost O(log count).
    func firstIndex(after bound: Double) -> Int {
        // self[low - 1] <= bound (or low == 0); self[high] > bound (or high == count).
        var low = 0
        var step = 1
        var high = 0
        while high < count && self[high] <= bound {
            low = high + 1
            high += step
            step *= 2
        }
        high = min(high, count)
        while low < high {
            let mid = (low + high) / 2
            if self[mid] > bound { high = mid } else { low = mid + 1 }
        }
        return low
    }

    /// Times counted in the window `(time - window, time]`.
    func count(at time: Double, window: Double) -> Int {
        let first = firstIndex(after: time - window)
        var end = count
        while end > first, self[end - 1] > time { end -= 1 }
        return end - first
    }

    /// The earliest time `≥ time` at which one more time keeps the count in
    /// the window below or at `limit`: `time` itself when there is room, else
    /// the moment enough old times leave the window. `.infinity` if `limit ≤ 0`.
    func nextAllowed(from time: Double, limit: Int, window: Double) -> Double {
        guard limit > 0 else { return .infinity }
        let first = firstIndex(after: time - window)
        let inWindow = count - first
        if inWindow < limit { return time }
        // Drop the oldest (inWindow - limit + 1) times: back in quota when the
        // last of them leaves, at its time + window.
        return max(time, self[first + inWindow - limit] + window)
    }

    /// Adds `time` after the newest (`count < capacity`).
    mutating func append(_ time: Double) {
        precondition(count < capacity, "a full ring is grown before it is appended to")
        times[slot(count)] = time
        count += 1
    }

    /// Adds `time` after the newest when it is not older and there is
    /// room, and forgets the times `≤ bound` (`bound < time`), in one pass
    /// over the ring: returns the number of times held then, or nil (and
    /// changes nothing) when the ring is empty or full or `time` is older
    /// than the newest. The times forgotten are few and the oldest (one or
    /// two at a recording, in the steady state), so they are stepped over
    /// one by one; past a few, the rest are found by ``firstIndex(after:)``.
    @inline(__always)
    mutating func append(inOrder time: Double, forgettingThrough bound: Double) -> Int? {
        guard count > 0, count < capacity, time >= times[slot(count - 1)] else { return nil }
        times[slot(count)] = time
        count += 1
        var steps = 0
        while count > 0, times[start] <= bound {
            start = start + 1 < capacity ? start + 1 : 0
            count -= 1
            steps += 1
            if steps == 4 {
                forget(through: bound)
                break
            }
        }
        return count
    }

    /// Forgets the times `≤ bound` (the oldest ones).
    mutating func forget(through bound: Double) {
        let n = firstIndex(after: bound)
        guard n > 0 else { return }
        let moved = start + n
        start = moved < capacity ? moved : moved - capacity
        count -= n
    }

    /// Copies the times, oldest first, to `target` (room for `count`).
    func copy(to target: UnsafeMutablePointer<Double>) {
        let firstPart = min(count, capacity - start)
        target.initialize(from: times + start, count: firstPart)
        (target + firstPart).initialize(from: times, count: count - firstPart)
    }
}
