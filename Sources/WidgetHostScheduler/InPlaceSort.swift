extension UnsafeMutableBufferPointer {
    /// Sorts the elements in place by `less` without allocating (the
    /// standard library's stable sort allocates a buffer of half the
    /// elements): heapsort, O(n log n) in every case, not stable. The
    /// scheduler sorts only keys without ties (instance positions) or orders
    /// whose ties do not matter.
    ///
    /// ```swift
    /// var values = [3, 1, 2]
    /// values.withUnsafeMutableBufferPointer { $0.sortWithoutAllocating(by: <) }  // [1, 2, 3]
    /// ```
    @inlinable
    mutating func sortWithoutAllocating(by less: (Element, Element) -> Bool) {
        let n = count
        guard n > 1 else { return }
        // A max-heap, then the largest moved to the end one by one.
        makeHeap(by: { less($1, $0) })
        var end = n - 1
        while end > 0 {
            swapAt(0, end)
            siftDown(0, end: end, by: { less($1, $0) })
            end -= 1
        }
    }

    /// Arranges the elements as a binary heap whose first element comes
    /// first by `first` (a min-heap for `<`), in O(n).
    @inlinable
    mutating func makeHeap(by first: (Element, Element) -> Bool) {
        var start = count / 2
        while start > 0 {
            start -= 1
            siftDown(start, end: count, by: first)
        }
    }

    @inlinable
    mutating func siftDown(_ start: Int, end: Int, by first: (Element, Element) -> Bool) {
        var root = start
        while true {
            var child = 2 * root + 1
            guard child < end else { return }
            if child + 1 < end && first(self[child + 1], self[child]) { child += 1 }
            guard first(self[child], self[root]) else { return }
            swapAt(root, child)
            root = child
        }
    }
}

extension UnsafeMutableBufferPointer where Element == Int {
    /// Sorts distinct positions in `0..<bound` ascending. Many of them
    /// (at least `bound / 1024`, and 32) are marked in `bitmap` (one bit
    /// per position, kept by the caller between calls and left all zero) and
    /// read back in order: no comparison, no branch that guesses wrong, one
    /// word read per 64 positions; a few are sorted by
    /// ``sortWithoutAllocating(by:)``, where reading the whole bitmap would
    /// cost more. The scheduler sorts a wakeup's due instances this way: at
    /// 100,000 instances, thousands at a time.
    ///
    /// ```swift
    /// var bitmap: [UInt64] = []
    /// var due = [7, 3, 5]
    /// due.withUnsafeMutableBufferPointer { $0.sortDistinctPositions(below: 8, bitmap: &bitmap) }  // [3, 5, 7]
    /// ```
    mutating func sortDistinctPositions(below bound: Int, bitmap: inout [UInt64]) {
        let words = (bound + 63) / 64
        guard count >= 32 && count * 16 >= words else {
            sortWithoutAllocating(by: <)
            return
        }
        if bitmap.count < words { bitmap.append(contentsOf: repeatElement(0, count: words - bitmap.count)) }
        bitmap.withUnsafeMutableBufferPointer { bits in
            for p in self {
                precondition(p >= 0 && p < bound, "a position out of range")
                bits[p &>> 6] |= 1 &<< UInt64(p & 63)
            }
            var k = 0
            for w in 0..<words where bits[w] != 0 {
                var word = bits[w]
                bits[w] = 0
                while word != 0 {
                    self[k] = w &<< 6 | word.trailingZeroBitCount
                    k += 1
                    word &= word &- 1
                }
            }
            precondition(k == count, "positions given twice")
        }
    }
}

/// A queued position and its key, as ``EntryWheel`` keeps the positions of
/// its current bucket in order (and ``ReloadWheel`` its earliest bucket,
/// once walked twice).
struct KeyedPosition: Sendable {
    var key: Double
    var position: Int32
}

extension UnsafeMutableBufferPointer where Element == KeyedPosition {
    /// Sorts by key from the latest to the earliest (the earliest last, to
    /// be taken from the end), without allocating: an insertion sort for a
    /// bucket's usual few, ``sortWithoutAllocating(by:)`` past 32. Equal
    /// keys end in no particular order.
    ///
    /// ```swift
    /// var bucket = [KeyedPosition(key: 2, position: 0), KeyedPosition(key: 5, position: 1)]
    /// bucket.withUnsafeMutableBufferPointer { $0.sortLatestFirst() }  // positions 1, 0
    /// ```
    mutating func sortLatestFirst() {
        guard count > 1 else { return }
        guard count <= 32 else { return sortWithoutAllocating { $0.key > $1.key } }
        for i in 1..<count {
            let entry = self[i]
            var j = i
            while j > 0 && self[j - 1].key < entry.key {
                self[j] = self[j - 1]
                j -= 1
            }
            self[j] = entry
        }
    }
}
