/// A 4-ary min-heap of instance positions keyed by a time, with a handle per
/// position, so that the scheduler finds its earliest instance in O(1) and
/// moves one instance in O(log N): the scheduler's rechecks, and the keys
/// past the horizon of its timing wheels (``ReloadWheel``, ``EntryWheel``).
///
/// Struct of arrays: the keys sit together (the sift loops read only them),
/// the positions beside them, and `slot` maps a position to its place in the
/// heap (-1: not queued). An infinite key means "not queued".
///
/// ```swift
/// var queue = DueQueue()
/// queue.set(3, to: 1_800_000_600)
/// queue.minimumKey  // 1_800_000_600
/// queue.collect(upTo: 1_800_000_660, into: &buffer)  // [3]
/// ```
struct DueQueue: Sendable, Hashable {
    private(set) var keys: [Double] = []
    private var positions: [Int32] = []
    /// For each instance position, its index in `keys`/`positions`, or -1.
    private var slot: [Int32] = []
    init() {}

    /// The number of queued positions.
    var count: Int { keys.count }

    /// The smallest key, `.infinity` when empty.
    var minimumKey: Double { keys.first ?? .infinity }

    /// The position with the smallest key.
    var minimumPosition: Int? { positions.first.map(Int.init) }

    /// The key of `position`, `.infinity` if not queued.
    func key(of position: Int) -> Double {
        guard position < slot.count, slot[position] >= 0 else { return .infinity }
        return keys[Int(slot[position])]
    }

    /// Whether `position` is queued.
    @inline(__always)
    func isQueued(_ position: Int) -> Bool { position < slot.count && slot[position] >= 0 }

    /// Makes room for positions up to `count - 1` (new positions are not queued).
    mutating func reserve(positions count: Int) {
        if slot.count < count { slot.append(contentsOf: repeatElement(-1, count: count - slot.count)) }
    }

    /// Queues `position` at `key`, moves it, or (for an infinite or NaN key) takes it out.
    mutating func set(_ position: Int, to key: Double) {
        reserve(positions: position + 1)
        let at = Int(slot[position])
        guard key < .infinity else {
            if at >= 0 { removeAt(at) }
            return
        }
        if at < 0 {
            keys.append(key)
            positions.append(Int32(position))
            slot[position] = Int32(keys.count - 1)
            siftUp(keys.count - 1)
        } else if key < keys[at] {
            keys[at] = key
            siftUp(at)
        } else if key > keys[at] {
            keys[at] = key
            siftDown(at)
        }
    }

    /// Forgets `position` and renumbers every later position one down (an
    /// instance removed from the middle of the scheduler's array). O(N).
    mutating func removePosition(_ position: Int) {
        guard position < slot.count else { return }
        if slot[position] >= 0 { removeAt(Int(slot[position])) }
        slot.remove(at: position)
        for i in positions.indices where Int(positions[i]) > position { positions[i] -= 1 }
    }

    /// Appends every position whose key is `≤ bound` to `buffer` (in heap
    /// order, not sorted): a walk that stops at the first larger key on each
    /// branch, so it costs the number found times the arity.
    func collect(upTo bound: Double, into buffer: inout [Int]) {
        collect(upTo: bound) { position, _ in buffer.append(position) }
    }

    /// Calls `body` with every position whose key is `≤ bound`, and its key:
    /// a depth-first walk whose stack is a small temporary allocation (on the
    /// call stack: at most 3 pending siblings per level of the heap), so it
    /// allocates nothing.
    func collect(upTo bound: Double, _ body: (Int, Double) -> Void) {
        guard let first = keys.first, first <= bound else { return }
        var levels = 1
        var width = 1
        while width < keys.count {
            width = width * 4 + 1
            levels += 1
        }
        withUnsafeTemporaryAllocation(of: Int.self, capacity: 3 * levels + 4) { stack in
            var top = 0
            stack[0] = 0
            top = 1
            while top > 0 {
                top -= 1
                let i = stack[top]
                body(Int(positions[i]), keys[i])
                let child = 4 * i + 1
                var c = child
                let end = min(child + 4, keys.count)
                while c < end {
                    if keys[c] <= bound {
                        stack[top] = c
                        top += 1
                    }
                    c += 1
                }
            }
        }
    }

    private mutating func removeAt(_ at: Int) {
        let last = keys.count - 1
        slot[Int(positions[at])] = -1
        let lastKey = keys[last]
        let lastPosition = positions[last]
        keys.removeLast()
        positions.removeLast()
        guard at < last else { return }
        // The last element fills the hole, moved up or down to its place.
        if at > 0 && lastKey < keys[(at - 1) / 4] {
            place(lastKey, lastPosition, from: at, up: true)
        } else {
            place(lastKey, lastPosition, from: at, up: false)
        }
    }

    private mutating func siftUp(_ start: Int) {
        place(keys[start], positions[start], from: start, up: true)
    }

    private mutating func siftDown(_ start: Int) {
        place(keys[start], positions[start], from: start, up: false)
    }

    /// Puts `key` (of `position`) into the hole at `start`, moving the
    /// elements it passes into the hole instead of swapping (half the
    /// writes), on the arrays' buffers (one uniqueness check per array, not
    /// one per write).
    private mutating func place(_ key: Double, _ position: Int32, from start: Int, up: Bool) {
        keys.withUnsafeMutableBufferPointer { keys in
            positions.withUnsafeMutableBufferPointer { positions in
                slot.withUnsafeMutableBufferPointer { slot in
                    var i = start
                    if up {
                        while i > 0 {
                            let parent = (i - 1) / 4
                            guard key < keys[parent] else { break }
                            keys[i] = keys[parent]
                            positions[i] = positions[parent]
                            slot[Int(positions[i])] = Int32(i)
                            i = parent
                        }
                    } else {
                        let n = keys.count
                        while true {
                            let first = 4 * i + 1
                            guard first < n else { break }
                            var best = first
                            let end = min(first + 4, n)
                            var c = first + 1
                            while c < end {
                                if keys[c] < keys[best] { best = c }
                                c += 1
                            }
                            guard keys[best] < key else { break }
                            keys[i] = keys[best]
                            positions[i] = positions[best]
                            slot[Int(positions[i])] = Int32(i)
                            i = best
                        }
                    }
                    keys[i] = key
                    positions[i] = position
                    slot[Int(position)] = Int32(i)
                }
            }
        }
    }
}
