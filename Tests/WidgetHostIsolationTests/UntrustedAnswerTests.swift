import Foundation
import Testing
import WidgetHostIsolation
import WidgetHostModel

/// What arrives on the channel may have been written by plugin code, not
/// by the runner: every limit and every number is checked again on the
/// host, in every mode, and nothing traps (issue 14, items 3, 7 and 10).
@Suite("Untrusted answers")
struct UntrustedAnswerTests {
    static let modes: [IsolationMode] = [.worker, .forkServer, .spawn]

    static func call(_ variant: String, timeout: Double = 5) -> PluginCall {
        PluginCall(
            .timeline, kind: "test.fixture", family: .systemSmall, now: Date().timeIntervalSince1970,
            timeout: timeout, locale: variant, dataDirectory: TestSupport.dataDirectory)
    }

    static func run(_ fixture: String, _ call: PluginCall, mode: IsolationMode) -> CallOutput {
        let engine = IsolationEngine(
            plugin: TestSupport.fixture(fixture), mode: mode, recycling: WorkerRecycling(standbys: 0))
        defer { engine.stop() }
        return engine.call(call)
    }

    @Test(arguments: modes)
    func aForgedEntryCountAboveTheLimitIsRefused(mode: IsolationMode) {
        let output = Self.run("forged_result", Self.call("count"), mode: mode)
        #expect(output.failure?.reason == .resultTooLarge(what: "entry_count", found: 1000, limit: 400), "\(mode)")
        TestSupport.expectNoSurvivors(output)
    }

    @Test(arguments: modes)
    func forgedContentAboveTheLimitIsRefused(mode: IsolationMode) {
        let output = Self.run("forged_result", Self.call("large"), mode: mode)
        #expect(
            output.failure?.reason
                == .resultTooLarge(what: "bytes of entry content", found: 11 << 20, limit: 10 << 20), "\(mode)")
    }

    /// A date of 1e300 (or a policy of after(1e19)) is refused, never
    /// converted: the host used to trap on such values.
    @Test(arguments: modes)
    func aHugeFiniteDateIsRefusedNotTrapped(mode: IsolationMode) {
        let output = Self.run("forged_result", Self.call("date"), mode: mode)
        guard case .malformedResult(let what) = output.failure?.reason else {
            Issue.record("\(mode): \(String(describing: output.failure?.reason))")
            return
        }
        #expect(what.contains("entries[0].date is 1e+300"), "\(what)")
        #expect(output.failure?.message.contains("1970-01-01 and 9999-12-31") == true)
    }

    /// A 20 MiB error message is cut to 64 KiB and stays the plugin's own
    /// error (not a broken frame that would count as a crash).
    @Test(arguments: modes)
    func aHugeErrorMessageIsCutAndStaysAPluginError(mode: IsolationMode) {
        let output = Self.run("huge_error", Self.call("en-US"), mode: mode)
        guard case .pluginError(let code, let message) = output.failure?.reason else {
            Issue.record("\(mode): \(String(describing: output.failure?.reason))")
            return
        }
        #expect(code == 42)
        #expect(message.utf8.count <= TerminalText.maxMessageBytes + 64)
        #expect(message.hasPrefix("eeee"))
        #expect(output.failure?.isPluginCrash == false)
    }

    @Test func timestampsAndDurationsNeverTrap() {
        for value in [1e300, -1e300, 1e19, .infinity, -.infinity, .nan, Double(Int.max)] {
            _ = Timestamp.iso8601(value)
            _ = Timestamp.duration(value)
            _ = Timestamp.relative(value, to: 0)
            #expect(Bounds.exactInt(value) == nil || abs(value) <= Bounds.largestExactInteger)
            #expect(!Bounds.isTime(value) || (value >= 0 && value <= Bounds.latestTime))
        }
        #expect(Bounds.exactInt(3.0) == 3)
        #expect(Bounds.exactInt(3.5) == nil)
        #expect(throws: BoundsError.self) { try Bounds.time(1e300, field: "policy_date") }
        #expect(TerminalText.escaped("a\u{1B}]0;x\u{07}b\n") == "a\\u{1B}]0;x\\u{7}b\n")
    }
}

extension IsolationMode: CustomTestStringConvertible {
    public var testDescription: String { rawValue }
}

/// Issue 14's critical hole: plugin code (a warm_up, in the process that
/// holds the host's channel) forges a CHILD_STARTED naming another process
/// group. The host takes no pid from a message: the decoy group, in a
/// session of its own, lives on in every mode.
@Suite("Forged CHILD_STARTED")
struct ForgedChildStartedTests {
    @Test(arguments: [IsolationMode.worker, .forkServer, .spawn])
    func aForgedAnnouncementKillsNothing(mode: IsolationMode) throws {
        // The decoy: `sleep` in a session (and process group) of its own,
        // holding none of this process's descriptors: holding the write end
        // of another test's pipe (spawned while that test's command ran),
        // it kept that test's read waiting for its 600 s, and the run with it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        posix_spawnattr_setflags(&attributes, 0x80)  // POSIX_SPAWN_SETSID (glibc), not imported as a macro
        var group: pid_t = 0
        let closeAllAndSleep =
            #"for fd in /proc/self/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-" 2>/dev/null; done; "#
            + "exec /bin/sleep 600"
        let arguments: [UnsafeMutablePointer<CChar>?] = [
            strdup("/bin/bash"), strdup("-c"), strdup(closeAllAndSleep), nil,
        ]
        let spawned = posix_spawn(&group, "/bin/bash", nil, &attributes, arguments, environ)
        posix_spawnattr_destroy(&attributes)
        for argument in arguments { free(argument) }
        try #require(spawned == 0)
        defer {
            kill(group, SIGKILL)
            var status: Int32 = 0
            waitpid(group, &status, 0)
        }
        let directory = TestSupport.temporaryDirectory("forged-child-started")
        try "\(group)".write(toFile: directory + "/target.pid", atomically: true, encoding: .utf8)
        let engine = IsolationEngine(
            plugin: TestSupport.fixture("forged_child_started"), mode: mode, recycling: WorkerRecycling(standbys: 0))
        // The helper writes 300 ms after the warm-up: calls before and after.
        for round in 0..<3 {
            let output = engine.call(WorkerTests.call(timeout: 1, dataDirectory: directory))
            if let failure = output.failure { #expect(!failure.isHostFault, "\(failure.code)") }
            if round == 0 { usleep(500_000) }
        }
        engine.stop()
        var status: Int32 = 0
        #expect(waitpid(group, &status, WNOHANG) == 0, "\(mode): the decoy group was not killed")
    }
}
