/// A small, seeded, portable random number generator (SplitMix64): the
/// same seed gives the same numbers on every machine and in every process,
/// where the standard library's generator is seeded by the system.
///
/// `widgethost simulate --seed` draws its scenario's events from it, and
/// the tests draw their random cases from it, so that a failure repeats:
///
/// ```swift
/// var random = SplitMix64(seed: 2026)
/// let delay = Int.random(in: 1...60, using: &random)
/// ```
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose numbers are those of `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number uniform in [0, 1), from the next 53 bits.
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
