/// The scheduler's instance positions by id: an open-addressing hash table
/// (linear probing, at most half full) of 4-byte positions. The ids are not
/// stored twice: a probe compares with the id of the instance at the
/// position it finds. The hash is FNV-1a of the id's UTF-8 bytes
/// (`StableJitter.fnv1a64`, the jitter's hash): an id is found by its bytes (another Unicode
/// normalization of the same text, which Swift's `==` and a `Dictionary`
/// would take for it, is not; the daemon passes ids back as it received them).
///
/// A `[String: Int]` kept a copy of every id and an 8-byte position per
/// bucket at a load of at most 3/4: 63 bytes per instance at 100,000
/// instances; this table takes 8 to 16.
///
/// ```swift
/// var index = PositionIndex()
/// instances.withUnsafeBufferPointer { all in
///     index.insert(position: 0, of: all)
///     index.find("w1", in: all)  // 0, if instances[0] is "w1"
/// }
/// ```
struct PositionIndex: Sendable {
    /// Positions, -1 for an empty bucket; a power of two long (or empty).
    private var buckets: [Int32] = []
    private(set) var count = 0

    init() {}

    /// The table of every instance of `instances`, at its position.
    init(_ instances: UnsafeBufferPointer<WidgetInstance>) {
        reserve(instances.count)
        for position in instances.indices { insert(position: position, of: instances) }
    }

    /// The position of the instance `id` in `instances`, nil if none.
    func find(_ id: String, in instances: UnsafeBufferPointer<WidgetInstance>) -> Int? {
        find(id, hash: StableJitter.fnv1a64(id), in: instances)
    }

    /// ``find(_:in:)`` with the id's `StableJitter.fnv1a64` already computed.
    func find(_ id: String, hash: UInt64, in instances: UnsafeBufferPointer<WidgetInstance>) -> Int? {
        guard !buckets.isEmpty else { return nil }
        let mask = buckets.count - 1
        var bucket = Int(truncatingIfNeeded: hash) & mask
        while true {
            let position = Int(buckets[bucket])
            if position < 0 { return nil }
            if instances[position].id == id { return position }
            bucket = (bucket + 1) & mask
        }
    }

    /// Reads the first bucket of each hash of `hashes` and the id of the
    /// instance it holds (its bytes), ahead of the searches for them (see
    /// ``InstanceRecords/readAheadRecord(_:forIssue:)``): the buckets in one pass,
    /// the ids in a second.
    func readAhead(_ hashes: UnsafeBufferPointer<UInt64>, in instances: UnsafeBufferPointer<WidgetInstance>) {
        guard !buckets.isEmpty else { return }
        let mask = buckets.count - 1
        buckets.withUnsafeBufferPointer { buckets in
            let base = buckets.baseAddress.unsafelyUnwrapped
            for hash in hashes { ReadAhead.line(base + (Int(truncatingIfNeeded: hash) & mask)) }
            for hash in hashes {
                let position = Int(buckets[Int(truncatingIfNeeded: hash) & mask])
                // The id's bytes: an id longer than 15 bytes lives in a block
                // of its own, which the comparison reads (a shorter one is
                // inline in the instance's names, whose line this read brings).
                guard position >= 0 else { continue }
                _ = instances[position].id.utf8.withContiguousStorageIfAvailable { bytes in
                    if let start = bytes.baseAddress { ReadAhead.line(start) }
                }
            }
        }
    }

    /// Records the instance at `position` of `instances` (its id must not be
    /// recorded yet).
    mutating func insert(position: Int, of instances: UnsafeBufferPointer<WidgetInstance>) {
        if (count + 1) * 2 > buckets.count {
            let old = buckets
            buckets = []
            count = 0
            reserve(max(16, old.count))
            for p in old where p >= 0 { place(Int(p), instances[Int(p)].id) }
        }
        place(position, instances[position].id)
    }

    /// Forgets the instance at `position` of `instances` (still there) and
    /// numbers every later position one down, as the caller then removes it
    /// from `instances`: the bucket is emptied by shifting back the entries
    /// after it that may move (linear probing has no tombstones), and the
    /// renumbering touches integers only, no id.
    mutating func remove(position: Int, of instances: UnsafeBufferPointer<WidgetInstance>) {
        guard !buckets.isEmpty else { return }
        let mask = buckets.count - 1
        func home(_ p: Int32) -> Int {
            Int(truncatingIfNeeded: StableJitter.fnv1a64(instances[Int(p)].id)) & mask
        }
        var hole = home(Int32(position))
        while Int(buckets[hole]) != position {
            guard buckets[hole] >= 0 else { return }  // not recorded
            hole = (hole + 1) & mask
        }
        var next = (hole + 1) & mask
        while buckets[next] >= 0 {
            // The entry at `next` may fill the hole unless its home lies
            // cyclically in (hole, next].
            let h = home(buckets[next])
            let staysPut = hole <= next ? (hole < h && h <= next) : (hole < h || h <= next)
            if !staysPut {
                buckets[hole] = buckets[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole] = -1
        count -= 1
        let removed = Int32(position)
        buckets.withUnsafeMutableBufferPointer { all in
            for i in all.indices where all[i] > removed { all[i] -= 1 }
        }
    }

    /// Makes room for `n` instances without growing.
    private mutating func reserve(_ n: Int) {
        var size = 16
        while size < 2 * n { size *= 2 }
        if size > buckets.count { buckets = Array(repeating: -1, count: size) }
    }

    private mutating func place(_ position: Int, _ id: String) {
        let mask = buckets.count - 1
        var bucket = Int(truncatingIfNeeded: StableJitter.fnv1a64(id)) & mask
        while buckets[bucket] >= 0 { bucket = (bucket + 1) & mask }
        buckets[bucket] = Int32(position)
        count += 1
    }
}
