import Glibc
import WidgetHostModel

/// The time each phase of a daemon's start took, for one log line:
/// `state read 3.1s (CPU 2.9s), configuration 1.2ms (CPU 0µs), …`. The CPU
/// time is the starting thread's: much less than the wall time means the
/// phase waited (for another thread, the disk, a busy machine).
struct StartPhases: CustomStringConvertible {
    private var last: (wall: Double, cpu: Double)
    private var phases: [(name: String, wall: Double, cpu: Double)] = []

    init() { last = Self.now() }

    /// Ends the phase running since the previous call (or since `init`).
    mutating func end(_ name: String) {
        let now = Self.now()
        phases.append((name, now.wall - last.wall, now.cpu - last.cpu))
        last = now
    }

    var description: String {
        phases.map { "\($0.name) \(Timestamp.duration($0.wall)) (CPU \(Timestamp.duration($0.cpu)))" }
            .joined(separator: ", ")
    }

    private static func now() -> (wall: Double, cpu: Double) {
        func seconds(_ clock: clockid_t) -> Double {
            var ts = timespec()
            clock_gettime(clock, &ts)
            return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        }
        return (seconds(CLOCK_MONOTONIC), seconds(CLOCK_THREAD_CPUTIME_ID))
    }
}
