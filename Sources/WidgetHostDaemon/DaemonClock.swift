import WidgetHostStore

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's view of time: the wall clock the scheduler runs on, and
/// CLOCK_BOOTTIME to tell real elapsed time from a wall-clock jump.
struct DaemonClock {
    let bootID = ClockSample.current().bootID

    /// Seconds since 1970.
    func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Seconds since boot, suspend included.
    func boottime() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_BOOTTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Both clocks, as the store records them.
    func sample() -> ClockSample { ClockSample(wallClock: now(), bootID: bootID, uptime: boottime()) }
}

/// Notices wall-clock jumps: compares how far the wall clock moved with how
/// far CLOCK_BOOTTIME (real time, suspend included) moved since the last
/// observation. A suspend moves both; `date -s` or an NTP step moves only
/// the wall clock.
///
/// ```swift
/// var watch = ClockWatch(wall: 1000, boot: 50)
/// watch.observe(wall: 1010, boot: 60)      // nil: 10 s passed on both
/// watch.observe(wall: 4610, boot: 61)      // 3599: the wall clock jumped an hour forward
/// ```
struct ClockWatch {
    /// The reference: the last observation, kept while a jump is pending.
    private(set) var wall: Double
    private(set) var boot: Double

    /// The jump in seconds (positive: forwards) since the reference, or nil
    /// when the clocks agree within `tolerance`. Without a jump the
    /// observation becomes the new reference; with one the caller decides
    /// when to ``accept(wall:boot:)`` it.
    mutating func observe(wall now: Double, boot: Double, tolerance: Double = 5) -> Double? {
        let jump = (now - wall) - (boot - self.boot)
        guard abs(jump) > tolerance else {
            accept(wall: now, boot: boot)
            return nil
        }
        return jump
    }

    /// Makes this observation the reference (after the jump was handled).
    mutating func accept(wall: Double, boot: Double) {
        self.wall = wall
        self.boot = boot
    }
}
