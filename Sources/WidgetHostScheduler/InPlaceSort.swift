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
