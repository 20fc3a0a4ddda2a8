#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where the scheduler's driver gets "now" from (seconds since the Unix epoch).
///
/// The scheduler core never reads a clock and never sleeps: every method takes
/// the time explicitly. A driver reads a clock, asks `nextWakeup()`, sleeps (or,
/// with a ``VirtualClock``, jumps) to it, and calls `dueReloads(at:)`.
public protocol SchedulerClock {
    /// The current time, seconds since the Unix epoch.
    func now() -> Double
}

/// The wall clock.
public struct RealClock: SchedulerClock, Sendable {
    public init() {}
    public func now() -> Double { Date().timeIntervalSince1970 }
}

/// A clock that only moves when told to; for tests and `widgethost simulate`.
/// Not thread-safe: one driver owns it.
public final class VirtualClock: SchedulerClock {
    private var current: Double

    public init(start: Double = 0) { current = start }

    public func now() -> Double { current }

    /// Moves to `time`; a time in the past is ignored (virtual time never goes back).
    public func advance(to time: Double) {
        if time > current { current = time }
    }

    public func advance(by seconds: Double) { advance(to: current + seconds) }
}
