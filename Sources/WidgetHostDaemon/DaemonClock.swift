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
