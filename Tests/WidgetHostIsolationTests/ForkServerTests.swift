import Foundation
import Testing
import WidgetHostIsolation
import WidgetHostModel

/// One fixture call, made the same way through spawn-per-call and through a
/// fork server.
struct ForkCase: CustomTestStringConvertible, Sendable {
    var fixture: String
    /// "outside" / "secret" / "" give the hostile fixture the trap's target.
    var target: String?
    var timeout: Double?
    var loadTimeout: Double = 5
    var testDescription: String { fixture }
}

extension HostileTrap {
    func call(_ forkCase: ForkCase) -> PluginCall {
        var configuration: [String: String] = [:]
        if let target = forkCase.target {
            let path =
                switch target {
                case "outside": outsidePath
                case "secret": secretPath
                default: ""
                }
            configuration = ["path": "\"\(path)\"", "port": "\(port)"]
        }
        return PluginCall(
            .timeline, kind: "test.fixture", family: .systemSmall, now: Date().timeIntervalSince1970,
            timeout: forkCase.timeout, configuration: configuration, dataDirectory: dataDirectory)
    }
}

@Suite("Fork server")
struct ForkServerTests {
    static let cases: [ForkCase] = [
        ForkCase(fixture: "good"), ForkCase(fixture: "async_good"), ForkCase(fixture: "crash_segv"),
        ForkCase(fixture: "abort"), ForkCase(fixture: "exit_early"), ForkCase(fixture: "hang", timeout: 0.3),
        ForkCase(fixture: "never_completes", timeout: 0.3), ForkCase(fixture: "null_result"),
        ForkCase(fixture: "plugin_error"), ForkCase(fixture: "too_many_entries"), ForkCase(fixture: "too_large"),
        ForkCase(fixture: "malformed_json"), ForkCase(fixture: "content_not_object"),
        ForkCase(fixture: "double_complete"), ForkCase(fixture: "nan_date"), ForkCase(fixture: "unsorted_dates"),
        ForkCase(fixture: "write_fd3"), ForkCase(fixture: "forbidden_syscall"), ForkCase(fixture: "ptrace_host"),
        ForkCase(fixture: "ctor_threads"), ForkCase(fixture: "setsid_escape"), ForkCase(fixture: "grandchild"),
        ForkCase(fixture: "fork_bomb", timeout: 1), ForkCase(fixture: "garbage_output"),
        ForkCase(fixture: "alloc_past_limit"), ForkCase(fixture: "write_outside", target: "outside"),
        ForkCase(fixture: "read_secret", target: "secret"), ForkCase(fixture: "tcp_connect", target: ""),
        ForkCase(fixture: "read_stdin", target: ""), ForkCase(fixture: "close_fds", target: ""),
        ForkCase(fixture: "ctor_crash"), ForkCase(fixture: "ctor_hang", loadTimeout: 0.5),
        ForkCase(fixture: "bad_magic"), ForkCase(fixture: "wrong_abi"), ForkCase(fixture: "refuses"),
        ForkCase(fixture: "missing_entry_point"), ForkCase(fixture: "sleep_forever", timeout: 0.3),
    ]

    /// Every fixture has the same typed outcome through the fork server as
    /// through spawn-per-call, twice in a row from one server (the second call
    /// starts from the same clean state), contained like a spawned call.
    @Test(arguments: cases)
    func sameOutcomeAsSpawn(_ forkCase: ForkCase) {
        let trap = HostileTrap()
        let options = IsolationOptions(loadTimeout: forkCase.loadTimeout)
        let plugin = TestSupport.fixture(forkCase.fixture)
        let spawned = IsolatedRunner.run(plugin: plugin, call: trap.call(forkCase), options: options)
        let server = ForkServer(plugin: plugin, options: options)
        for round in 1...2 {
            let forked = server.call(trap.call(forkCase))
            #expect(
                forked.failure?.code == spawned.failure?.code,
                "round \(round): fork server \(String(describing: forked.failure?.reason)), spawn \(String(describing: spawned.failure?.reason))"
            )
            #expect(forked.result?.entries.count == spawned.result?.entries.count, "round \(round)")
            trap.expectContained(forked)
        }
        server.stop()
    }

    @Test func callsShareOneServerAndEachRunsInAFreshChild() {
        let server = ForkServer(plugin: TestSupport.fixture("good"))
        var groups: Set<Int32> = []
        for _ in 0..<5 {
            let output = server.call(Self.call())
            #expect(output.failure == nil)
            #expect(output.result?.entries.count == 3)
            groups.insert(output.processGroup)
        }
        #expect(server.starts == 1)
        #expect(server.fallbackReason == nil)
        #expect(groups.count == 5)
        #expect(!groups.contains(server.serverPid))
    }

    @Test func aTimeoutKillsTheChildAndTheServerLivesOn() {
        let server = ForkServer(plugin: TestSupport.fixture("hang"))
        let output = server.call(Self.call(timeout: 0.2))
        #expect(output.failure?.reason == .timedOut(phase: .call(.timeline), limit: 0.2))
        #expect(output.timing.totalSeconds < 1.5)
        TestSupport.expectNoSurvivors(output)
        let pid = server.serverPid
        #expect(server.call(Self.call(timeout: 0.2)).failure?.code == "timedOut")
        #expect(server.serverPid == pid)
        #expect(server.starts == 1)
    }

    /// `prepare` loads the plugin once, for its description and for the
    /// calls that follow with the same settings (the daemon's start).
    @Test func prepareLoadsOnceForTheDescriptionAndTheCalls() throws {
        let server = ForkServer(plugin: TestSupport.fixture("good"))
        defer { server.stop() }
        let plugin = try server.prepare(dataDirectory: TestSupport.dataDirectory).get()
        #expect(plugin.kinds.map(\.id) == ["test.fixture"])
        #expect(server.starts == 1 && server.isRunning)
        let call = PluginCall(
            .timeline, kind: "test.fixture", family: .systemSmall, now: Date().timeIntervalSince1970,
            dataDirectory: TestSupport.dataDirectory)
        #expect(server.call(call).failure == nil)
        #expect(server.starts == 1, "the call used the prepared server")
        var elsewhere = call
        elsewhere.dataDirectory = TestSupport.temporaryDirectory("prepare-elsewhere")
        #expect(server.call(elsewhere).failure == nil)
        #expect(server.starts == 2, "another data directory is another sandbox: a new server")

        let broken = ForkServer(plugin: TestSupport.fixture("not_elf"))
        guard case .failure(let failure) = broken.prepare(dataDirectory: TestSupport.dataDirectory) else {
            Issue.record("not_elf.so prepared")
            return
        }
        #expect(failure.code == "notELF", "\(failure.message)")
    }

    /// Calls of one instance reuse the last CALL message with their own
    /// `now` written in: each call's entries are dated at its own `now`, and
    /// another configuration or entry point gets a message of its own.
    @Test func repeatedCallsCarryTheirOwnNow() {
        let server = ForkServer(plugin: TestSupport.fixture("good"))
        defer { server.stop() }
        let start = Date().timeIntervalSince1970.rounded()
        for step in 0..<3 {
            let now = start + Double(step) * 3600
            let call = PluginCall(
                .timeline, kind: "test.fixture", family: .systemSmall, now: now,
                dataDirectory: TestSupport.dataDirectory)
            let output = server.call(call)
            #expect(output.result?.entries.first?.date == now, "call \(step)")
            #expect(output.result?.entries.count == 3)
        }
        let snapshot = PluginCall(
            .snapshot, kind: "test.fixture", family: .systemMedium, now: start,
            dataDirectory: TestSupport.dataDirectory)
        #expect(server.call(snapshot).result?.entries.count == 1, "another entry point: another message")
    }

    @Test func aServerThatDiedIsRestarted() {
        let server = ForkServer(plugin: TestSupport.fixture("good"))
        #expect(server.call(Self.call()).failure == nil)
        kill(server.serverPid, SIGKILL)
        usleep(50_000)
        let output = server.call(Self.call())
        #expect(output.failure == nil, "\(String(describing: output.failure))")
        #expect(server.starts == 2)
    }

    @Test func aPluginChangedOnDiskIsReloaded() throws {
        let directory = TestSupport.temporaryDirectory("reload")
        let path = directory + "/plugin.so"
        try FileManager.default.copyItem(atPath: TestSupport.fixture("good"), toPath: path)
        let server = ForkServer(plugin: path)
        #expect(server.call(Self.call()).failure == nil)
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: TestSupport.fixture("plugin_error"), toPath: path)
        let output = server.call(Self.call())
        #expect(output.failure?.code == "pluginError")
        #expect(server.starts == 2)
    }

    @Test func aPluginWithThreadsAfterLoadingFallsBackToSpawn() {
        let server = ForkServer(plugin: TestSupport.fixture("ctor_threads"))
        let output = server.call(Self.call())
        #expect(output.failure == nil)
        #expect(server.fallbackReason?.contains("threads") == true)
        #expect(!server.isRunning)
        #expect(server.call(Self.call()).failure == nil)
    }

    /// The server reports the CPU time of every child it reaps and its own:
    /// a child that spun until its timeout shows as CPU time of the children.
    @Test func cpuUsageCountsTheReapedChildrenAndTheServer() {
        let server = ForkServer(plugin: TestSupport.fixture("hang"))
        #expect(server.cpuUsage == CPUUsage())
        for _ in 0..<3 { #expect(server.call(Self.call(timeout: 0.15)).failure?.code == "timedOut") }
        // A fourth call, well after the others were killed: their reports
        // (sent when the server reaped them) are read as it starts.
        usleep(300_000)
        #expect(server.call(Self.call(timeout: 0.05)).failure?.code == "timedOut")
        let usage = server.cpuUsage
        #expect(usage.childrenReaped >= 1)
        #expect(usage.childrenReaped <= 4)
        // A spinning child gets well over 10 ms of a CPU in 150 ms, even on a busy machine.
        #expect(usage.childrenSeconds > 0.01 * Double(usage.childrenReaped), "\(usage)")
        #expect(usage.serverSeconds > 0)
        let difference = usage - CPUUsage(serverSeconds: 0, childrenSeconds: 0.01, childrenReaped: 1)
        #expect(difference.childrenReaped == usage.childrenReaped - 1)
        server.stop()
        #expect(server.cpuUsage == usage)
    }

    @Test func aSpawnedCallReportsItsRunnersCPUTime() {
        let output = IsolatedRunner.run(plugin: TestSupport.fixture("good"), call: Self.call())
        #expect(output.failure == nil)
        // exec, dlopen and the call cost well over a microsecond of CPU.
        #expect((output.timing.childCPUSeconds ?? 0) > 1e-6)
        let forked = ForkServer(plugin: TestSupport.fixture("good")).call(Self.call())
        #expect(forked.timing.childCPUSeconds == nil)
    }

    static func call(timeout: Double? = nil) -> PluginCall {
        PluginCall(
            .timeline, kind: "test.fixture", family: .systemSmall, now: Date().timeIntervalSince1970,
            timeout: timeout, dataDirectory: TestSupport.dataDirectory)
    }
}
