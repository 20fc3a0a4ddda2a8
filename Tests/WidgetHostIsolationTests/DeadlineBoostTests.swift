import CWidgetHostSupport
import Foundation
import Testing

/// The boost a waiting thread takes for the last stretch before a deadline
/// (`wh_deadline_boost_begin`: 1 ns timer slack, SCHED_FIFO where allowed).
@Suite("Isolation: the deadline boost")
struct DeadlineBoostTests {
    /// A process started by a boosted thread starts under the normal policy
    /// (SCHED_RESET_ON_FORK), and the thread's own policy comes back at the
    /// boost's end. Without the flag a runner, or any process a caller
    /// sharing the thread started, ran real-time: a browser started so in a
    /// test run spun at SCHED_FIFO and starved the machine (2026-12-03).
    @Test func aProcessStartedWhileBoostedIsNotRealTime() throws {
        let before = sched_getscheduler(0)
        var boost = wh_deadline_boost()
        wh_deadline_boost_begin(&boost)
        let granted = boost.realtime != 0
        if granted {
            // SCHED_RESET_ON_FORK (a GNU macro Swift does not import).
            let resetOnFork: Int32 = 0x4000_0000
            #expect(sched_getscheduler(0) & ~resetOnFork == SCHED_FIFO)
        }
        // The child's policy: field 41 of its /proc/self/stat ("cut" is one
        // word, so the fields split on spaces), spawned from this thread.
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("boost-\(getpid())").path
        defer { unlink(output) }
        let command = "cut -d' ' -f41 /proc/self/stat > '\(output)'"
        var pid: pid_t = 0
        let arguments = ["/bin/sh", "-c", command]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, &argv, environ)
        var status: Int32 = 0
        if spawned == 0 { waitpid(pid, &status, 0) }
        wh_deadline_boost_end(&boost)
        #expect(spawned == 0)
        #expect(sched_getscheduler(0) == before)
        let policy = try String(contentsOfFile: output, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        // 0: SCHED_OTHER (the test's own, when the boost was refused too).
        #expect(policy == "0", "the child's policy (granted real-time: \(granted))")
    }
}
