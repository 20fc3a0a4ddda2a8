import Glibc

/// CPU time (user + system) a fork server and its call children used, as
/// the server reports it with each child it reaps (CHILD_EXITED: the child's
/// `wait4` usage and the server's own process clock). `widgethost bench`
/// takes the difference over a run and divides by the calls: what an
/// isolated call costs the machine besides its latency.
///
/// ```swift
/// let before = server.cpuUsage
/// for _ in 0..<1000 { _ = server.call(call) }
/// let spent = server.cpuUsage - before
/// print(spent.childrenSeconds / Double(spent.childrenReaped))  // one child's CPU
/// ```
public struct CPUUsage: Sendable, Hashable {
    /// The servers' own CPU time: forking the call children, reaping them,
    /// their messages. Summed over the servers this `ForkServer` started.
    public var serverSeconds: Double = 0
    /// The CPU time of the call children reaped so far, each from its fork
    /// to its end: its setup and prefault, the call, and its teardown after
    /// the kill (freeing its memory is most of a child's CPU).
    public var childrenSeconds: Double = 0
    /// How many call children `childrenSeconds` covers.
    public var childrenReaped = 0

    public init(serverSeconds: Double = 0, childrenSeconds: Double = 0, childrenReaped: Int = 0) {
        self.serverSeconds = serverSeconds
        self.childrenSeconds = childrenSeconds
        self.childrenReaped = childrenReaped
    }

    /// What was used between two readings.
    public static func - (after: CPUUsage, before: CPUUsage) -> CPUUsage {
        CPUUsage(
            serverSeconds: after.serverSeconds - before.serverSeconds,
            childrenSeconds: after.childrenSeconds - before.childrenSeconds,
            childrenReaped: after.childrenReaped - before.childrenReaped)
    }

    /// A `timeval` (as in `rusage`) in seconds.
    static func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }

    /// The calling thread's CPU time so far, in seconds.
    public static func currentThreadSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
