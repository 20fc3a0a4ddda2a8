import Testing

@testable import WidgetHostScheduler

/// `later(_:_:)`, the steady path's one-instruction maximum, against
/// `Swift.max` over every pair of special and ordinary values: the same
/// answer, NaN included (the first argument when either is NaN), but for
/// the sign of a zero.
@Suite("later: Swift.max in one instruction")
struct LaterTests {
    static let values: [Double] = [
        .nan, -.infinity, .infinity, 0, -0.0, 1, -1, 1_800_000_000, 1_800_000_000.5,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude,
    ]

    @Test func agreesWithMax() {
        var disagreements: [String] = []
        for x in Self.values {
            for y in Self.values {
                let expected = max(x, y)
                let found = later(x, y)
                let same =
                    expected.isNaN
                    ? found.isNaN && (x.isNaN ? found.bitPattern == x.bitPattern : true)
                    : found == expected
                if !same { disagreements.append("later(\(x), \(y)) = \(found), max = \(expected)") }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements)")
    }

    /// When `x` is NaN, both keep `x`; when only `y` is, both keep `x` too.
    @Test func keepsTheFirstWhenEitherIsNaN() {
        #expect(later(5, .nan) == 5)
        #expect(max(5, Double.nan) == 5)
        #expect(later(.nan, 5).isNaN)
        #expect(max(Double.nan, 5).isNaN)
    }
}
