/// `x` rounded down, as an `Int64`, for `|x| < limit`; `limit` at or above
/// it (and for NaN), `-limit` at or below `-limit`. `limit` is at most
/// 2^62, so that the differences of two results do not overflow.
///
/// Rounded by truncating and correcting: `Double.rounded(.down)` calls
/// libm's `floor` (the baseline x86-64 target has no SSE4.1), and the
/// scheduler rounds on its hot paths (the reload wheel's buckets, the view
/// history's hours). `ViewHistoryTests` checks it against `floor`.
@inline(__always)
func roundedDown(_ x: Double, within limit: Int64) -> Int64 {
    guard x < Double(limit) else { return limit }
    guard x > -Double(limit) else { return -limit }
    let truncated = Int64(x)
    return Double(truncated) > x ? truncated - 1 : truncated
}
