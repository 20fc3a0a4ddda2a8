import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

@Suite("Sorting without allocating")
struct InPlaceSortTests {
    /// Against the standard library's sort, with ties, in both directions.
    @Test func sortsAsTheStandardLibraryDoes() {
        var random = SplitMix64(seed: 5)
        for size in 0...100 {
            var values = (0..<size).map { _ in Int(random.next() % 50) }
            let expected = values.sorted()
            values.withUnsafeMutableBufferPointer { $0.sortWithoutAllocating(by: <) }
            #expect(values == expected, "\(size) elements")
            values.withUnsafeMutableBufferPointer { $0.sortWithoutAllocating(by: >) }
            #expect(values == expected.reversed(), "\(size) elements, descending")
        }
    }

    /// Distinct positions, few and many (the bitmap's way), against the
    /// standard library's sort; the bitmap is left all zero for the next call.
    @Test func sortsDistinctPositionsByBitmapOrHeap() {
        var random = SplitMix64(seed: 9)
        var bitmap: [UInt64] = []
        for _ in 0..<300 {
            let bound = 1 + Int(random.next() % 5_000)
            let size = Int(random.next() % UInt64(min(bound, 600) + 1))
            var all = Array(0..<bound)
            for i in 0..<size { all.swapAt(i, i + Int(random.next() % UInt64(bound - i))) }
            var positions = Array(all[0..<size])
            let expected = positions.sorted()
            positions.withUnsafeMutableBufferPointer { $0.sortDistinctPositions(below: bound, bitmap: &bitmap) }
            #expect(positions == expected, "\(size) of \(bound)")
            #expect(bitmap.allSatisfy { $0 == 0 })
        }
        #expect(!bitmap.isEmpty, "no case took the bitmap's way")
    }

    /// A wheel's bucket, few (insertion) and many (heap), with ties: the
    /// keys from the latest to the earliest, every position kept.
    @Test func sortsABucketLatestFirst() {
        var random = SplitMix64(seed: 13)
        for size in [0, 1, 2, 5, 31, 32, 33, 64, 200] {
            var bucket = (0..<size).map {
                KeyedPosition(key: 1_800_000_000 + Double(random.next() % 20) / 4, position: Int32($0))
            }
            bucket.withUnsafeMutableBufferPointer { $0.sortLatestFirst() }
            #expect(bucket.map(\.key) == bucket.map(\.key).sorted(by: >), "\(size) keys")
            #expect(Set(bucket.map(\.position)) == Set((0..<size).map(Int32.init)), "\(size) keys")
        }
    }
}
