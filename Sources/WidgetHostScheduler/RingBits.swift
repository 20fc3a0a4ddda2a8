extension UnsafeBufferPointer where Element == UInt64 {
    /// The first set bit at or after bit `start`, going round past the last
    /// bit to the first: a timing wheel's next bucket that is not empty,
    /// from the bitmap of its ring (one bit per slot). Nil when no bit is
    /// set.
    ///
    /// ```swift
    /// let occupied: [UInt64] = [0b1000, 0]
    /// occupied.withUnsafeBufferPointer { $0.firstSetBit(circularlyFrom: 70) }  // 3 (round past the end)
    /// ```
    func firstSetBit(circularlyFrom start: Int) -> Int? {
        let words = count
        var word = start >> 6
        var bits = self[word] & (~0 << UInt64(start & 63))
        for _ in 0...words {
            if bits != 0 { return word << 6 + bits.trailingZeroBitCount }
            word = (word + 1) % words
            bits = self[word]
        }
        return nil
    }
}

extension OwnedArray where Element == UInt64 {
    /// ``Swift/UnsafeBufferPointer/firstSetBit(circularlyFrom:)`` of the
    /// array's bits: a timing wheel's bitmap of its ring.
    func firstSetBit(circularlyFrom start: Int) -> Int? {
        withUnsafeBufferPointer { $0.firstSetBit(circularlyFrom: start) }
    }
}
