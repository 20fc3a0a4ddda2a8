/// The later of two times: `max(x, y)`, in one instruction.
///
/// `Swift.max(x, y)` is `y >= x ? y : x`, which the compiler writes as a
/// compare and three masks (it keeps `x` when either is NaN, which the
/// processor's `maxsd` does not). This is the same answer for every pair,
/// NaN included, but for the sign of a zero (of two equal zeros it keeps
/// `x`): `maxsd`'s own order, so the compiler writes that one
/// instruction. The steady path takes several maxima per reload.
/// `LaterTests` checks it against `max` over the special values.
@inline(__always)
func later(_ x: Double, _ y: Double) -> Double { y > x ? y : x }
