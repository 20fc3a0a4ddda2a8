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
}
