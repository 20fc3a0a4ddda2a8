/// The ranges every number that crosses a boundary into the host is checked
/// against: a plugin's answer, a configuration file, a control request, a row
/// of the state file, a command-line flag.
///
/// One place decides them, so a date the daemon accepts from a plugin is one
/// the scheduler, the store and every report can convert without trapping.
///
/// ```swift
/// let date = try Bounds.time(raw.policyDate, field: "policy_date")
/// let every = try Bounds.duration(seconds, field: "instances[2].interval")
/// guard let count = Bounds.exactInt(value) else { … }   // 3.0 → 3, 3.5 or 1e300 → nil
/// ```
public enum Bounds {
    /// The earliest time accepted: 1970-01-01T00:00:00Z, in seconds since the Unix epoch.
    public static let earliestTime: Double = 0
    /// The latest time accepted: 9999-12-31T23:59:59Z, in seconds since the Unix epoch.
    public static let latestTime: Double = 253_402_300_799
    /// The longest duration accepted: 10 years of 365.25 days, in seconds.
    public static let longestDuration: Double = 315_576_000
    /// The largest integer a JSON number carries exactly through a `Double` (2^53).
    public static let largestExactInteger: Double = 9_007_199_254_740_992

    /// The longest timeout of a plugin call accepted: 10 minutes, in seconds.
    public static let longestCallTimeout: Double = 600
    /// A call timeout's range, in words, for messages and docs.
    public static let callTimeoutRange = "more than 0 and at most 600 seconds (10 minutes)"

    /// Whether `seconds` is a call timeout the host accepts: more than 0 (a
    /// call given no time at all times out before it starts) and at most 10
    /// minutes. One rule for a scenario's and the daemon's `timeout`, a
    /// control request's `widget.timeout` and `--timeout`.
    @inlinable
    public static func isCallTimeout(_ seconds: Double) -> Bool {
        seconds > 0 && seconds <= longestCallTimeout  // false for NaN
    }

    /// Whether `seconds` is a finite time between 1970 and 9999.
    @inlinable
    public static func isTime(_ seconds: Double) -> Bool {
        seconds >= earliestTime && seconds <= latestTime  // false for NaN
    }

    /// Whether `seconds` is a finite duration from 0 to 10 years.
    @inlinable
    public static func isDuration(_ seconds: Double) -> Bool {
        seconds >= 0 && seconds <= longestDuration  // false for NaN
    }

    /// `value` as an `Int` when it is a whole number within ±2^53, else `nil`:
    /// never traps, whatever the input (NaN, ±infinity, 1e300, 3.5).
    @inlinable
    public static func exactInt(_ value: Double) -> Int? {
        guard value.isFinite, abs(value) <= largestExactInteger, value.rounded(.towardZero) == value else {
            return nil
        }
        return Int(value)
    }

    /// `value` as an `Int`, truncated toward zero and clamped to ±2^53: for
    /// arithmetic on a value already known to be finite (a time or a duration
    /// that passed ``isTime(_:)`` or ``isDuration(_:)``), never traps.
    @inlinable
    public static func clampedInt(_ value: Double) -> Int {
        guard value.isFinite else {
            return value > 0 ? Int(largestExactInteger) : value < 0 ? -Int(largestExactInteger) : 0
        }
        return Int(min(max(value, -largestExactInteger), largestExactInteger))
    }

    /// `seconds` if it is a time between 1970 and 9999; otherwise a ``BoundsError`` naming `field`.
    public static func time(_ seconds: Double, field: String) throws(BoundsError) -> Double {
        guard isTime(seconds) else {
            throw BoundsError(
                field: field, expected: "a time between 1970-01-01 and 9999-12-31 (seconds since 1970)", found: seconds)
        }
        return seconds
    }

    /// `seconds` if it is a duration from 0 to 10 years; otherwise a ``BoundsError`` naming `field`.
    public static func duration(_ seconds: Double, field: String) throws(BoundsError) -> Double {
        guard isDuration(seconds) else {
            throw BoundsError(field: field, expected: "a duration from 0 to 10 years (in seconds)", found: seconds)
        }
        return seconds
    }

    /// `seconds` if it is a call timeout (``isCallTimeout(_:)``); otherwise a ``BoundsError`` naming `field`.
    public static func callTimeout(_ seconds: Double, field: String) throws(BoundsError) -> Double {
        guard isCallTimeout(seconds) else {
            throw BoundsError(field: field, expected: "a timeout of \(callTimeoutRange)", found: seconds)
        }
        return seconds
    }

    /// The largest `maxTasks` (a plugin's `pids.max`): the kernel refuses to
    /// write more than `PID_MAX_LIMIT` (2^22 on 64-bit Linux) to `pids.max`,
    /// and every call would then fail as the sandbox could not be set up.
    public static let largestMaxTasks = 4_194_304
    /// The smallest `maxTasks`: the host's own processes in the plugin's
    /// pids cgroup (the runner's relay, the PID namespace's init, the
    /// runner; for a fork server its standby child and the call) take up to
    /// 5, so below 8 a plugin has about no process or thread left.
    public static let smallestMaxTasks = 8

    /// `value` as an `Int` if it is a whole number in `range`; otherwise a ``BoundsError`` naming `field`.
    public static func integer(_ value: Double, in range: ClosedRange<Int>, field: String) throws(BoundsError) -> Int {
        guard let int = exactInt(value), range.contains(int) else {
            throw BoundsError(
                field: field, expected: "a whole number from \(range.lowerBound) to \(range.upperBound)", found: value)
        }
        return int
    }
}

/// A number outside the range ``Bounds`` accepts for its field.
public struct BoundsError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The field, as the input names it (`policy_date`, `entries[3].date`, `instances[2].interval`).
    public var field: String
    /// What the field accepts, in words.
    public var expected: String
    /// The value found.
    public var found: Double

    /// Creates the error.
    public init(field: String, expected: String, found: Double) {
        self.field = field
        self.expected = expected
        self.found = found
    }

    /// `entries[3].date is 1e+300, expected a time between 1970-01-01 and 9999-12-31 (seconds since 1970)`.
    public var description: String { "\(field) is \(found), expected \(expected)" }
}
