import Foundation
import Testing
import WidgetHostIsolation
import WidgetHostModel

/// Warm workers (`IsolationEngine`, worker mode): one process serves many
/// calls; a timeout, a crash or a worker that speaks out of turn gets a
/// typed outcome and a fresh worker; workers are recycled by count and
/// memory; every fixture has the same outcome as spawn-per-call.
@Suite("Warm workers")
struct WorkerTests {
    static func call(timeout: Double? = nil, dataDirectory: String = TestSupport.dataDirectory) -> PluginCall {
        PluginCall(
            .timeline, kind: "test.fixture", family: .systemSmall, now: Date().timeIntervalSince1970,
            timeout: timeout, dataDirectory: dataDirectory)
    }

    /// Every fixture of the fork-server list: the same typed outcome through a
    /// warm worker as through spawn-per-call, twice in a row from one engine
    /// (the second call is served by the same worker, or by its replacement
    /// after a failure), and nothing outside touched once the engine stops.
    @Test(arguments: ForkServerTests.cases)
    func sameOutcomeAsSpawn(_ forkCase: ForkCase) {
        let trap = HostileTrap()
        let options = IsolationOptions(loadTimeout: forkCase.loadTimeout)
        let plugin = TestSupport.fixture(forkCase.fixture)
        let spawned = IsolatedRunner.run(plugin: plugin, call: trap.call(forkCase), options: options)
        let engine = IsolationEngine(plugin: plugin, options: options, mode: .worker)
        var outputs: [CallOutput] = []
        for round in 1...2 {
            let output = engine.call(trap.call(forkCase))
            #expect(
                output.failure?.code == spawned.failure?.code,
                "round \(round): worker \(String(describing: output.failure?.reason)), spawn \(String(describing: spawned.failure?.reason))"
            )
            #expect(output.result?.entries.count == spawned.result?.entries.count, "round \(round)")
            outputs.append(output)
        }
        engine.stop()
        for output in outputs { trap.expectContained(output) }
    }

    @Test func oneWorkerServesManyCalls() {
        let engine = IsolationEngine(plugin: TestSupport.fixture("good"), recycling: WorkerRecycling(standbys: 0))
        defer { engine.stop() }
        var workers: Set<Int32> = []
        for _ in 0..<20 {
            let output = engine.call(Self.call())
            #expect(output.failure == nil)
            #expect(output.result?.entries.count == 3)
            workers.insert(output.processGroup)
        }
        #expect(workers.count == 1)
        #expect(engine.statistics.workersStarted == 1)
        #expect(engine.statistics.workerCalls == 20)
    }

    /// A worker started from a thread that then ends (a dispatch queue's,
    /// which libdispatch ends once idle) serves the next call: runners die
    /// with the thread that spawned them (`PR_SET_PDEATHSIG`), and every
    /// runner is spawned from the host's launcher thread, which never ends.
    @Test func aWorkerOutlivesTheThreadThatAskedForIt() throws {
        /// The engine lent to the thread, and its answer: used by one thread at a time.
        final class Handoff: @unchecked Sendable {
            let engine = IsolationEngine(plugin: TestSupport.fixture("good"), recycling: WorkerRecycling(standbys: 0))
            var output: CallOutput?
        }
        let handoff = Handoff()
        let engine = handoff.engine
        defer { engine.stop() }
        let first = Thread { handoff.output = handoff.engine.call(Self.call()) }
        first.start()
        while !first.isFinished { usleep(10_000) }
        // The thread has ended; give the kernel's parent-death signal time to arrive.
        usleep(300_000)
        let worker = try #require(handoff.output).processGroup
        #expect(kill(worker, 0) == 0, "the worker is alive")
        let second = engine.call(Self.call())
        #expect(second.failure == nil)
        #expect(second.processGroup == worker, "the same worker")
        #expect(engine.statistics.workersStarted == 1)
    }

    /// A timeout kills the worker's group; the standby takes the next call
    /// (no cold start on that call's path) and a new standby follows.
    @Test func aTimeoutKillsTheWorkerAndTheStandbyTakesTheNextCall() {
        let engine = IsolationEngine(plugin: TestSupport.fixture("hang"))
        defer { engine.stop() }
        let first = engine.call(Self.call(timeout: 0.2))
        #expect(first.failure?.reason == .timedOut(phase: .call(.timeline), limit: 0.2))
        TestSupport.expectNoSurvivors(first)
        #expect(engine.statistics.recycled["failure"] == 1)
        #expect(engine.lastTimeoutLateness != nil)
        let second = engine.call(Self.call(timeout: 0.2))
        #expect(second.failure?.code == "timedOut")
        #expect(second.processGroup != first.processGroup, "a fresh worker")
        TestSupport.expectNoSurvivors(second)
    }

    /// A crash is the plugin's, with its signal; the next call gets a new worker.
    @Test func aCrashIsTypedAndTheNextCallGetsANewWorker() {
        let engine = IsolationEngine(plugin: TestSupport.fixture("crash_segv"))
        defer { engine.stop() }
        let first = engine.call(Self.call())
        #expect(first.failure?.code == "crashed")
        #expect(first.failure?.isPluginCrash == true && first.failure?.isHostFault == false)
        let second = engine.call(Self.call())
        #expect(second.failure?.code == "crashed")
        #expect(second.processGroup != first.processGroup)
    }

    /// Recycling by call count: with a limit of 3 and no jitter, 9 calls are
    /// served by 3 workers in turn.
    @Test func workersAreRecycledByCallCount() {
        let recycling = WorkerRecycling(maxCalls: 3, jitter: 0, standbys: 1)
        let engine = IsolationEngine(plugin: TestSupport.fixture("good"), recycling: recycling)
        defer { engine.stop() }
        var workers: [Int32] = []
        for _ in 0..<9 {
            let output = engine.call(Self.call())
            #expect(output.failure == nil)
            if workers.last != output.processGroup { workers.append(output.processGroup) }
        }
        #expect(workers.count == 3, "\(workers)")
        #expect(engine.statistics.recycled["calls"] == 2)
    }

    /// A plugin that leaks 1 MiB a call: its worker is replaced once it
    /// passes the cap, so no worker is ever far above it.
    @Test func aLeakingWorkerIsReplacedPastItsMemoryCap() throws {
        let engine = IsolationEngine(
            plugin: TestSupport.fixture("leak_per_call"), recycling: WorkerRecycling(maxResidentBytes: 0, standbys: 0))
        let baseline = engine.call(Self.call())
        #expect(baseline.failure == nil)
        engine.stop()
        #expect(engine.statistics.recycled["memory"] == 1, "a zero cap replaces the worker after every call")

        let capped = IsolationEngine(
            plugin: TestSupport.fixture("leak_per_call"),
            recycling: WorkerRecycling(maxResidentBytes: 64 << 20, standbys: 0))
        defer { capped.stop() }
        var workers: Set<Int32> = []
        for _ in 0..<150 {
            let output = capped.call(Self.call())
            #expect(output.failure == nil)
            workers.insert(output.processGroup)
        }
        #expect(
            (capped.statistics.recycled["memory"] ?? 0) >= 1,
            "150 MiB leaked, cap 64 MiB: \(capped.statistics), \(workers)")
        #expect(workers.count >= 2)
        // No worker is ever seen above the cap by more than the calls since
        // the last check: one call, 1 MiB here (2 MiB of slack for malloc).
        let peak = capped.statistics.peakWorkerResidentBytes
        #expect(peak > 0 && peak <= (64 << 20) + (2 << 20), "peak \(peak >> 10) KiB, cap 64 MiB")
    }

    /// A worker that writes on its channel between calls is retired before
    /// the next call, which a fresh worker answers: no call fails for it.
    @Test func aWorkerThatSpeaksOutOfTurnIsRetiredAndNoCallFails() {
        let engine = IsolationEngine(plugin: TestSupport.fixture("late_write_fd3"))
        defer { engine.stop() }
        let first = engine.call(Self.call())
        #expect(first.failure == nil)
        usleep(300_000)  // the plugin's thread writes 50 ms after the answer
        let second = engine.call(Self.call())
        #expect(second.failure == nil, "\(String(describing: second.failure))")
        #expect(second.processGroup != first.processGroup)
        #expect(engine.statistics.recycled["silent"] == 1)
    }

    /// A worker that exits between calls: the next call finds that out
    /// before it is sent (the worker's pidfd) and goes to a fresh worker.
    @Test func aWorkerThatExitsBetweenCallsIsReplacedAndNoCallFails() {
        let engine = IsolationEngine(plugin: TestSupport.fixture("exit_later"))
        defer { engine.stop() }
        let first = engine.call(Self.call())
        #expect(first.failure == nil)
        usleep(300_000)
        let second = engine.call(Self.call())
        #expect(second.failure == nil, "\(String(describing: second.failure))")
        #expect(second.processGroup != first.processGroup)
        #expect(engine.statistics.recycled["silent"] == 1)
    }

    /// A kind that needs the network gets a worker of its own; the others
    /// never share its sandbox.
    @Test func aProfileWithNetworkGetsItsOwnWorker() {
        let engine = IsolationEngine(plugin: TestSupport.fixture("good"), recycling: WorkerRecycling(standbys: 0))
        defer { engine.stop() }
        var offline = Self.call()
        offline.allowNetwork = false
        var online = Self.call()
        online.allowNetwork = true
        let a = engine.call(offline)
        let b = engine.call(online)
        let c = engine.call(offline)
        #expect(a.failure == nil && b.failure == nil && c.failure == nil)
        #expect(a.processGroup == c.processGroup)
        #expect(a.processGroup != b.processGroup)
        #expect(engine.statistics.workersStarted == 2)
    }

    /// The host's faults are typed as such and never count as the plugin's.
    @Test func aMissingRunnerIsAHostFault() {
        let options = IsolationOptions(runnerPath: "/nonexistent/widgethost-runner")
        let engine = IsolationEngine(plugin: TestSupport.fixture("good"), options: options)
        let output = engine.call(Self.call())
        #expect(output.failure?.code == "runnerMissing")
        #expect(output.failure?.isHostFault == true)
        #expect(output.failure?.isPluginCrash == false)
    }
}

/// A call child that kills its fork server: the plugin's own crash, with
/// its signal (or, where the sandbox protects the server, no failure at
/// all), never a protocol violation; the next call gets a new server.
@Suite("Fork server killed by its call")
struct ForkServerKilledTests {
    @Test func aPluginKillingItsServerIsThePluginsCrash() {
        let server = ForkServer(plugin: TestSupport.fixture("kill_server"))
        defer { server.stop() }
        let first = server.call(WorkerTests.call())
        if let failure = first.failure {
            #expect(
                failure.reason == .crashed(phase: .call(.timeline), signal: SIGKILL, name: "SIGKILL (killed)"),
                "\(failure.reason)")
            #expect(failure.isPluginCrash && !failure.isHostFault)
        }
        TestSupport.expectNoSurvivors(first)
        let engine = IsolationEngine(plugin: TestSupport.fixture("kill_server"))
        defer { engine.stop() }
        #expect(engine.call(WorkerTests.call()).failure == nil, "in a worker the parent is the host: left alone")
    }
}
