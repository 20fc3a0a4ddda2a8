import CWidgetHostSupport
import WidgetHostModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// How plugin calls are isolated (`--isolation`, a plugin's `isolation` in
/// the daemon's configuration). ``IsolationEngine/mode(for:)`` decides the
/// mode of every call, in one place.
public enum IsolationMode: String, Sendable, CaseIterable {
    /// The default: a warm sandboxed worker per plugin (and per sandbox
    /// profile) serves calls one at a time, with a warm standby; recycled
    /// by call count, memory and idle time.
    case worker
    /// Strict: a fresh child forked from the plugin's fork server per call
    /// (every call starts from the loaded state). Kinds that set
    /// `WH_KIND_FRESH_PROCESS` always run this way.
    case forkServer = "fork-server"
    /// A fresh `widgethost-runner` (posix_spawn + exec + load) per call: for
    /// plugins that cannot be forked or reused.
    case spawn
    /// Debugging only: the plugin runs inside the host (`InProcessPlugin`).
    case inProcess = "in-process"
}

/// When a warm worker is replaced (PHP-FPM's `pm.max_requests` and
/// `pm.process_idle_timeout`, gunicorn's `max_requests` with jitter).
///
/// ```swift
/// var recycling = WorkerRecycling()
/// recycling.maxCalls = 1_000          // each worker serves 900…1,100 calls
/// recycling.maxResidentBytes = 128 << 20
/// ```
public struct WorkerRecycling: Sendable, Hashable {
    /// Calls a worker serves before it is replaced, ± ``jitter`` (so workers
    /// do not all recycle together).
    public var maxCalls: Int
    /// The fraction of ``maxCalls`` each worker's own limit varies by.
    public var jitter: Double
    /// Resident memory past which a worker is replaced after its call.
    public var maxResidentBytes: Int
    /// Seconds without a call after which a worker is replaced before its next one.
    public var maxIdleSeconds: Double
    /// Warm standbys kept per sandbox profile, loaded and waiting, so a call
    /// never waits for a spawn after a worker is replaced.
    public var standbys: Int

    public init(
        maxCalls: Int = 5_000, jitter: Double = 0.1, maxResidentBytes: Int = 512 << 20, maxIdleSeconds: Double = 600,
        standbys: Int = 1
    ) {
        self.maxCalls = maxCalls
        self.jitter = jitter
        self.maxResidentBytes = maxResidentBytes
        self.maxIdleSeconds = maxIdleSeconds
        self.standbys = standbys
    }
}

/// What the engine did so far, for `load`, `status` and `bench`.
public struct EngineStatistics: Sendable, Hashable {
    /// Workers started (the first, standbys and replacements).
    public var workersStarted = 0
    /// Workers replaced, by why: `calls`, `memory`, `idle`, `failure`, `silent` (wrote out of turn or exited between calls).
    public var recycled: [String: Int] = [:]
    /// Calls made through workers.
    public var workerCalls = 0
    /// Workers alive now (active and standby).
    public var workersAlive = 0
    /// CPU time of the workers that were replaced or stopped (user + system).
    public var retiredWorkerCPUSeconds = 0.0
    /// The largest resident memory a worker was seen with (read after each
    /// call, when the memory cap is checked), in bytes.
    public var peakWorkerResidentBytes = 0
}

/// The one way every part of widgethost calls a plugin: `load`, the call
/// commands, `bench`, `simulate` and the daemon. One engine per plugin file;
/// it decides each call's ``IsolationMode`` (``mode(for:)``) and runs it
/// through the matching machinery, which shares the runner launcher
/// (`RunnerLauncher`), the sandbox, the answer checks (`ResultValidator`),
/// the failure mapping and the timeouts.
///
/// Calls are serialized: one engine makes one call at a time (use one per
/// thread for concurrency).
///
/// ```swift
/// let engine = IsolationEngine(plugin: "/path/libCountdownPlugin.so")
/// let output = engine.call(PluginCall(.snapshot, kind: "com.widgethost.countdown",
///                                     family: .systemSmall, now: now, dataDirectory: dir))
/// engine.stop()
/// ```
public final class IsolationEngine {
    public let pluginPath: String
    public let options: IsolationOptions
    /// The mode asked for (flag or configuration); a kind may still force
    /// the strict fork mode (``mode(for:)``).
    public let requestedMode: IsolationMode
    public let recycling: WorkerRecycling
    /// The plugin as last loaded.
    public private(set) var plugin: PluginDescription?
    public private(set) var statistics = EngineStatistics()
    /// What became of the warm-up in the most recent worker or fork server.
    public private(set) var warmUp = WarmUpOutcome.none

    private var pools: [SandboxProfile: WorkerPool] = [:]
    private var forkServers: [SandboxProfile: ForkServer] = [:]
    private var inProcess: InProcessPlugin?
    private var stamp: FileStamp?
    private var random = SystemRandomNumberGenerator()

    public init(
        plugin: String, options: IsolationOptions = IsolationOptions(), mode: IsolationMode = .worker,
        recycling: WorkerRecycling = WorkerRecycling()
    ) {
        self.pluginPath = IsolatedRunner.absolutePath(plugin)
        self.options = options
        self.requestedMode = mode
        self.recycling = recycling
    }

    deinit { stop() }

    /// The mode a call of `kind` runs in: the requested mode, except that a
    /// kind declaring `WH_KIND_FRESH_PROCESS` never shares a process between
    /// calls (worker becomes fork-server). The only place a mode is decided.
    public func mode(for kind: String?) -> IsolationMode {
        guard requestedMode == .worker, let kind, let description = plugin?.kind(kind) else { return requestedMode }
        return description.needsFreshProcess ? .forkServer : .worker
    }

    /// Loads the plugin for calls with these settings without making a call
    /// and returns its description (the daemon describes its plugins this
    /// way). A worker (or fork server) started here serves the calls that follow.
    public func prepare(dataDirectory: String, locale: String = "en-US", allowNetwork: Bool = false)
        -> Result<PluginDescription, PluginFailure>
    {
        noticeFileChange()
        let profile = SandboxProfile(dataDirectory: dataDirectory, locale: locale, allowNetwork: allowNetwork)
        switch requestedMode {
        case .worker:
            switch pool(for: profile).ready(engine: self) {
            case .failure(let failure): return .failure(failure)
            case .success(let worker):
                if let loaded = worker.plugin { plugin = loaded }
                warmUp = worker.warmUp
            }
        case .forkServer:
            let server = forkServer(for: profile)
            let prepared = server.prepare(dataDirectory: dataDirectory, locale: locale, allowNetwork: allowNetwork)
            warmUp = server.warmUp
            if case .success(let loaded) = prepared { plugin = loaded }
            return prepared
        case .spawn:
            let output = IsolatedRunner.run(plugin: pluginPath, call: nil, options: options)
            if let failure = output.failure { return .failure(failure) }
            plugin = output.plugin
        case .inProcess:
            let loaded = inProcessPlugin().call(nil)
            if let failure = loaded.failure { return .failure(failure) }
            plugin = loaded.plugin
        }
        guard let plugin else {
            return .failure(PluginFailure(plugin: pluginPath, reason: .protocolViolation("no plugin loaded")))
        }
        return .success(plugin)
    }

    /// Makes one call in the mode ``mode(for:)`` decides. Never throws: every
    /// failure is a typed ``PluginFailure``.
    public func call(_ call: PluginCall) -> CallOutput {
        noticeFileChange()
        if plugin == nil, requestedMode == .worker {
            // The descriptor decides the mode of a kind: load it first. A
            // plugin that does not load fails this call with that failure
            // (not a second start of a worker to find it again).
            let started = monotonicSeconds()
            if case .failure(let failure) = prepare(
                dataDirectory: call.dataDirectory, locale: call.locale, allowNetwork: call.allowNetwork)
            {
                return CallOutput(
                    plugin: nil, result: nil, failure: failure,
                    timing: CallTiming(totalSeconds: monotonicSeconds() - started), log: .empty,
                    childExit: "did not load", processGroup: 0)
            }
        }
        let output: CallOutput
        switch mode(for: call.kind) {
        case .worker:
            output = pool(for: SandboxProfile(call)).call(call, engine: self)
        case .forkServer:
            let server = forkServer(for: SandboxProfile(call))
            output = server.call(call)
            warmUp = server.warmUp
        case .spawn:
            output = IsolatedRunner.run(plugin: pluginPath, call: call, options: options)
        case .inProcess:
            output = inProcessPlugin().call(call)
        }
        if let loaded = output.plugin { plugin = loaded }
        if case .timedOut = output.failure?.reason {
            lastTimeoutLateness =
                mode(for: call.kind) == .forkServer
                ? forkServers[SandboxProfile(call)]?.lastTimeoutLateness
                : pools[SandboxProfile(call)]?.lastTimeoutLateness
        }
        return output
    }

    /// CPU time (user + system) of every worker this engine started, alive or gone.
    public var workerCPUSeconds: Double {
        statistics.retiredWorkerCPUSeconds + pools.values.reduce(0) { $0 + $1.aliveCPUSeconds }
    }

    /// CPU time of the fork servers this engine started and their call children.
    public var forkServerCPU: CPUUsage? {
        guard !forkServers.isEmpty else { return nil }
        var total = CPUUsage()
        for server in forkServers.values {
            total.serverSeconds += server.cpuUsage.serverSeconds
            total.childrenSeconds += server.cpuUsage.childrenSeconds
            total.childrenReaped += server.cpuUsage.childrenReaped
        }
        return total
    }

    /// For the last call that timed out: seconds from its deadline to the
    /// SIGKILL (how late the timeout was enforced), in worker or fork mode.
    public private(set) var lastTimeoutLateness: Double?

    /// How calls run now, for reports (`load`, the daemon's `status`):
    /// `warm worker: 2 started, 340 calls; each replaced after 5000 calls
    /// ±10%, past 512 MiB resident or 10m idle`, `fork-server`, `spawn (why)`.
    public var isolationSummary: String {
        switch requestedMode {
        case .worker:
            let jitter = Int((recycling.jitter * 100).rounded())
            return
                "warm worker: \(statistics.workersStarted) started, \(statistics.workerCalls) calls; each replaced after \(recycling.maxCalls) calls ±\(jitter)%, past \(recycling.maxResidentBytes >> 20) MiB resident or \(Timestamp.duration(recycling.maxIdleSeconds)) idle"
        case .forkServer:
            if let reason = forkServers.values.first?.fallbackReason { return "spawn (\(reason))" }
            return "fork-server"
        default: return requestedMode.rawValue
        }
    }

    /// Stops every worker and fork server (idempotent).
    public func stop() {
        for pool in pools.values { pool.stop(engine: self) }
        pools = [:]
        for server in forkServers.values { server.stop() }
        forkServers = [:]
        statistics.workersAlive = 0
    }

    /// Retires the workers that have been idle past
    /// ``WorkerRecycling/maxIdleSeconds``; the next call starts a fresh one.
    /// The daemon calls this when a plugin's workers reach that idle time
    /// (its loop wakes for it); a call does it too.
    public func retireIdleWorkers() {
        for pool in pools.values { pool.retireIdle(engine: self) }
    }

    // MARK: Internals used by the pools

    func workerStarted() { statistics.workersStarted += 1 }
    func workerRecycled(_ why: String) { statistics.recycled[why, default: 0] += 1 }
    /// Notes a worker's resident memory, read after a call.
    func workerResident(_ bytes: Int) {
        statistics.peakWorkerResidentBytes = max(statistics.peakWorkerResidentBytes, bytes)
    }
    func workerRetired(_ worker: WorkerProcess) { statistics.retiredWorkerCPUSeconds += worker.cpuSeconds() }
    func workerCalled(_ worker: WorkerProcess) {
        statistics.workerCalls += 1
        warmUp = worker.warmUp
        statistics.workersAlive = pools.values.reduce(0) { $0 + $1.aliveCount }
    }
    /// This worker's own call limit: ``WorkerRecycling/maxCalls`` ± jitter.
    func callLimit() -> Int {
        let spread = Double(recycling.maxCalls) * max(0, min(recycling.jitter, 1))
        let offset = spread > 0 ? Double.random(in: -spread...spread, using: &random) : 0
        return max(1, recycling.maxCalls + Int(offset.rounded()))
    }

    private func pool(for profile: SandboxProfile) -> WorkerPool {
        if let pool = pools[profile] { return pool }
        let pool = WorkerPool(plugin: pluginPath, options: options, profile: profile, recycling: recycling)
        pools[profile] = pool
        return pool
    }

    private func forkServer(for profile: SandboxProfile) -> ForkServer {
        if let server = forkServers[profile] { return server }
        let server = ForkServer(plugin: pluginPath, options: options)
        forkServers[profile] = server
        return server
    }

    private func inProcessPlugin() -> InProcessPlugin {
        if let inProcess { return inProcess }
        let loaded = InProcessPlugin(plugin: pluginPath, options: options)
        inProcess = loaded
        return loaded
    }

    /// A changed plugin file (size, mtime or inode) is loaded again: every
    /// worker of the old one is stopped.
    private func noticeFileChange() {
        let current = FileStamp(pluginPath)
        if current != stamp {
            if stamp != nil { stop() }
            stamp = current
            plugin = nil
        }
    }
}

/// The workers of one plugin for one sandbox profile: the active worker and
/// its warm standbys.
final class WorkerPool {
    let pluginPath: String
    let options: IsolationOptions
    let profile: SandboxProfile
    let recycling: WorkerRecycling
    private var active: WorkerProcess?
    private var activeLimit = 0
    private var standbys: [WorkerProcess] = []
    /// A warm-up that failed: later workers start without it.
    private var warmUpFailed = false

    init(plugin: String, options: IsolationOptions, profile: SandboxProfile, recycling: WorkerRecycling) {
        self.pluginPath = plugin
        self.options = options
        self.profile = profile
        self.recycling = recycling
    }

    var aliveCount: Int { (active?.isUsable == true ? 1 : 0) + standbys.filter(\.isUsable).count }
    var aliveCPUSeconds: Double { (active?.cpuSeconds() ?? 0) + standbys.reduce(0) { $0 + $1.cpuSeconds() } }
    private(set) var lastTimeoutLateness: Double?

    /// The worker for the next call, loaded: the active one if it may go on,
    /// else a standby (promoted), else a new one (a cold start).
    func ready(engine: IsolationEngine) -> Result<WorkerProcess, PluginFailure> {
        if let worker = active, worker.awaitLoad() != nil {
            // A promoted standby that failed to load: try the next.
            noteWarmUp(worker)
            worker.terminate()
            engine.workerRetired(worker)
            active = nil
        }
        if let worker = active {
            let why: String? =
                !worker.isReadyForCall()
                ? "silent"
                : worker.callsServed >= activeLimit
                    ? "calls" : monotonicSeconds() - worker.idleSince > recycling.maxIdleSeconds ? "idle" : nil
            if let why {
                engine.workerRecycled(why)
                worker.terminate()
                engine.workerRetired(worker)
                active = nil
            }
        }
        if active == nil {
            while !standbys.isEmpty {
                let candidate = standbys.removeFirst()
                if candidate.awaitLoad() == nil, candidate.isReadyForCall(),
                    monotonicSeconds() - candidate.idleSince <= recycling.maxIdleSeconds
                {
                    active = candidate
                    activeLimit = engine.callLimit()
                    break
                }
                noteWarmUp(candidate)
                candidate.terminate()
                engine.workerRetired(candidate)
            }
        }
        if active == nil {
            switch start(engine: engine) {
            case .failure(let failure): return .failure(failure)
            case .success(let worker):
                if let failure = worker.awaitLoad() {
                    noteWarmUp(worker)
                    // A warm-up that failed: once more without it.
                    if warmUpFailed, case .success(let again) = start(engine: engine), again.awaitLoad() == nil {
                        active = again
                    } else {
                        return .failure(failure)
                    }
                } else {
                    active = worker
                }
                activeLimit = engine.callLimit()
            }
        }
        guard let active else {
            return .failure(PluginFailure(plugin: pluginPath, reason: .protocolViolation("no worker")))
        }
        return .success(active)
    }

    func call(_ call: PluginCall, engine: IsolationEngine) -> CallOutput {
        let worker: WorkerProcess
        switch ready(engine: engine) {
        case .failure(let failure):
            return CallOutput(
                plugin: nil, result: nil, failure: failure, timing: CallTiming(totalSeconds: 0), log: .empty,
                childExit: "not started", processGroup: 0)
        case .success(let got): worker = got
        }
        var output = worker.call(call)
        engine.workerCalled(worker)
        if let late = worker.lastTimeoutLateness { lastTimeoutLateness = late }
        let resident = worker.isUsable ? worker.residentBytes() : nil
        if let resident { engine.workerResident(resident) }
        if !worker.isUsable {
            engine.workerRecycled("failure")
            engine.workerRetired(worker)
            active = nil
        } else if let resident, resident > recycling.maxResidentBytes {
            engine.workerRecycled("memory")
            worker.terminate()
            engine.workerRetired(worker)
            active = nil
            output.childExit +=
                "; replaced: \(resident >> 20) MiB resident, over the \(recycling.maxResidentBytes >> 20) MiB cap"
        }
        // A retired worker's successor is chosen now, and the standbys are
        // started after the answer, off the next call's path.
        if active == nil, !standbys.isEmpty {
            let successor = standbys.removeFirst()
            // Its load is read now, with the failed call, so the next call
            // finds it ready (its memory figure's file opened too).
            if successor.awaitLoad() == nil { _ = successor.residentBytes() }
            successor.inheritCallMessage(from: worker)
            active = successor
            activeLimit = engine.callLimit()
        }
        topUpStandbys(engine: engine)
        return output
    }

    func retireIdle(engine: IsolationEngine) {
        if let worker = active, monotonicSeconds() - worker.idleSince > recycling.maxIdleSeconds {
            engine.workerRecycled("idle")
            worker.terminate()
            active = nil
        }
        standbys.removeAll { worker in
            guard monotonicSeconds() - worker.idleSince > recycling.maxIdleSeconds else { return false }
            worker.terminate()
            return true
        }
    }

    func stop(engine: IsolationEngine? = nil) {
        for worker in [active].compactMap({ $0 }) + standbys {
            worker.terminate()
            engine?.workerRetired(worker)
        }
        active = nil
        standbys = []
    }

    private func topUpStandbys(engine: IsolationEngine) {
        standbys.removeAll { !$0.isUsable }
        while standbys.count < recycling.standbys {
            guard case .success(let worker) = start(engine: engine) else { return }
            standbys.append(worker)
        }
    }

    private func start(engine: IsolationEngine) -> Result<WorkerProcess, PluginFailure> {
        let started = WorkerProcess.start(
            plugin: pluginPath, options: options, profile: profile, warmUp: !warmUpFailed)
        if case .success = started { engine.workerStarted() }
        return started
    }

    private func noteWarmUp(_ worker: WorkerProcess) {
        if case .failed = worker.warmUp { warmUpFailed = true }
    }
}

/// A file's size, mtime and inode: a change means the plugin was rebuilt.
struct FileStamp: Equatable {
    var size: Int
    var seconds: Int
    var nanoseconds: Int
    var inode: UInt

    init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        size = Int(info.st_size)
        seconds = Int(info.st_mtim.tv_sec)
        nanoseconds = Int(info.st_mtim.tv_nsec)
        inode = UInt(info.st_ino)
    }
}
