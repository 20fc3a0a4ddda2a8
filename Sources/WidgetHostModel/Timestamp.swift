#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Formatting helpers for times (seconds since the Unix epoch) and durations.
public enum Timestamp {
    /// `2026-11-21T17:00:00Z` (or with milliseconds when the time has them).
    public static func iso8601(_ seconds: Double) -> String {
        guard seconds.isFinite, abs(seconds) < 1e12 else { return "\(seconds)" }
        let date = Date(timeIntervalSince1970: seconds)
        let hasFraction = seconds.rounded(.down) != seconds
        return date.formatted(
            hasFraction
                ? Date.ISO8601FormatStyle(includingFractionalSeconds: true)
                : Date.ISO8601FormatStyle())
    }

    /// A short human form of a duration: `850µs`, `12.3ms`, `4.0s`, `5m`, `2h30m`, `3d4h`.
    public static func duration(_ seconds: Double) -> String {
        // Beyond ±10^15 s (about 30 million years) `Int(value)` could trap: shown as the number.
        guard seconds.isFinite, abs(seconds) < 1e15 else { return "\(seconds)s" }
        let sign = seconds < 0 ? "-" : ""
        let value = abs(seconds)
        if value < 0.001 { return sign + "\(Int((value * 1_000_000).rounded()))µs" }
        if value < 1 { return sign + String(format1(value * 1000)) + "ms" }
        if value < 60 { return sign + String(format1(value)) + "s" }
        // Clamped: a duration from a plugin or a file may be 1e300.
        let total = Bounds.clampedInt(value.rounded())
        let days = total / 86_400
        let hours = (total % 86_400) / 3600
        let minutes = (total % 3600) / 60
        if days > 0 { return sign + "\(days)d" + (hours > 0 ? "\(hours)h" : "") }
        if hours > 0 { return sign + "\(hours)h" + (minutes > 0 ? "\(minutes)m" : "") }
        let secs = total % 60
        return sign + "\(minutes)m" + (secs > 0 ? "\(secs)s" : "")
    }

    /// A time relative to `now`: `now`, `in 1h`, `5m ago`.
    public static func relative(_ time: Double, to now: Double) -> String {
        let delta = time - now
        if abs(delta) < 0.5 { return "now" }
        return delta > 0 ? "in " + duration(delta) : duration(-delta) + " ago"
    }

    private static func format1(_ value: Double) -> String {
        let tenths = (value * 10).rounded()
        return "\(Int(tenths) / 10).\(Int(tenths) % 10)"
    }
}
