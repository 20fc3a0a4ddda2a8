import CWidgetHostSupport
import Dispatch
import Synchronization
import WidgetHostIsolation
import WidgetHostModel
import WidgetHostStore

/// One configured plugin in the daemon: its description, its state, and a
/// serial queue that makes its calls (through a fork server, or a runner
/// per call when the plugin cannot be forked), one at a time.
///
/// Everything but ``submit(_:done:)`` and ``stop()`` is used from the
/// daemon's loop thread only. Loading runs on the plugin's queue too
/// (``beginLoad(_:)``): the loop never waits for a plugin.
final class PluginWorker {
    enum State: String {
        /// Being loaded on the plugin's queue; its due reloads wait (``waiting``).
        case loading
        case loaded, failed, quarantined
    }

    let name: String
    let path: String
    let dataDirectory: String
    let options: IsolationOptions
    var state: State = .failed
    var description: PluginDescription?
    /// Why the plugin is not usable (failed to load, quarantined).
    var problem: String?
    /// The file as it was when loaded or quarantined.
    var identity: PluginFileIdentity?
    /// Crashes of this file counted toward quarantine: those within the
    /// crash window as of the last crash (``countCrash(at:window:)``), or a
    /// quarantined file's count when it was quarantined.
    var crashes = 0
    /// When this file crashed since it was loaded (CLOCK_BOOTTIME seconds),
    /// oldest first, those older than the crash window let go.
    private(set) var crashTimes: [Double] = []

    /// Counts a crash at `now` (CLOCK_BOOTTIME seconds); returns the crashes
    /// within the last `window` seconds, this one included.
    func countCrash(at now: Double, window: Double) -> Int {
        crashTimes.append(now)
        crashTimes.removeFirst(crashTimes.prefix { $0 <= now - window }.count)
        crashes = crashTimes.count
        return crashes
    }

    /// The crashes that count toward quarantine at `now` (CLOCK_BOOTTIME
    /// seconds): those within the last `window` seconds; a quarantined
    /// file's count as it was quarantined.
    func crashes(within window: Double, at now: Double) -> Int {
        state == .quarantined ? crashes : crashTimes.reduce(0) { $0 + ($1 > now - window ? 1 : 0) }
    }
    /// Per kind: failed reloads in a row (of any instance) and the end of the
    /// kind's backoff. While it lasts, the kind's due reloads are not sent to
    /// the plugin: they fail at once and each instance backs off as well.
    var kindFailures: [String: (count: Int, until: Double)] = [:]
    /// Instances whose reload was issued (committed, in flight) while the
    /// plugin was loading: called once it has loaded, held as not called
    /// if it did not.
    var waiting: [String] = []
    /// While the plugin cannot be called (it failed to load or is
    /// quarantined): until when its reloads are held, and how many holds
    /// in a row there have been. Reset when it loads.
    private(set) var hold: (until: Double, count: Int)?
    /// Loads that succeeded in this run.
    private(set) var successfulLoads = 0
    private let calls: CallQueue

    /// Records a reload's outcome for its kind; returns the new backoff end
    /// when this failure starts or extends one. The first failure of a kind
    /// is the instance's business; from the second in a row the kind backs
    /// off `backoff(n - 1)`: 5, 10, 20, 40, 60 minutes with the defaults.
    func record(kind: String, failed: Bool, at now: Double, backoff: (Int) -> Double) -> Double? {
        guard failed else {
            kindFailures[kind] = nil
            return nil
        }
        let count = (kindFailures[kind]?.count ?? 0) + 1
        let until = count >= 2 ? now + backoff(count - 1) : now
        kindFailures[kind] = (count, until)
        return count >= 2 ? until : nil
    }

    /// Until when a reload found the plugin unusable at `now` is held: one
    /// time for all of them, so that they are tried again together (the
    /// first to be tried loads the plugin again if its file changed, and
    /// the others wait for that load). Each hold that ends unused doubles
    /// the next, `backoff(n)`: 5, 10, 20, 40, 60 minutes with the defaults,
    /// at least a second (a `backoffBase` of 0 would issue them again at
    /// once, every turn of the loop).
    func holdUntil(at now: Double, backoff: (Int) -> Double) -> Double {
        if let hold, hold.until > now { return hold.until }
        let count = (hold?.count ?? 0) + 1
        let until = now + max(1, backoff(count))
        hold = (until, count)
        return until
    }

    /// The plugin loaded: its reloads are no longer held. Returns whether
    /// any of its instances' reloads may be: it was held in this run, or
    /// this is its first load in this run (a hold may come from the state
    /// of the run before).
    func endHold() -> Bool {
        defer { hold = nil }
        return hold != nil || successfulLoads == 1
    }

    /// The end of `kind`'s backoff, if it is backing off at `now`.
    func backoff(of kind: String, at now: Double) -> Double? {
        guard let entry = kindFailures[kind], entry.until > now else { return nil }
        return entry.until
    }

    /// How its calls are isolated and when its warm workers are replaced
    /// (the configuration's `isolation` and `workers`).
    let isolationMode: IsolationMode
    let recycling: WorkerRecycling

    init(
        name: String, path: String, dataDirectory: String, options: IsolationOptions,
        isolation: IsolationMode = .worker, recycling: WorkerRecycling = WorkerRecycling()
    ) {
        self.isolationMode = isolation
        self.recycling = recycling
        self.name = name
        self.path = path
        self.dataDirectory = dataDirectory
        self.options = options
        self.calls = CallQueue(
            label: "widgethost.plugin.\(name)", path: path, options: options, isolation: isolation,
            recycling: recycling)
    }

    /// Starts loading the plugin on its queue (its warm worker or fork
    /// server loads it once, for its description and for the calls that
    /// follow); `done` runs there with the outcome, which the loop hands to
    /// ``finishLoad(_:)``. Calls submitted meanwhile run after it.
    func beginLoad(_ done: @escaping @Sendable (Result<PluginDescription, PluginFailure>) -> Void) {
        identity = PluginFileIdentity.of(path: path)
        state = .loading
        description = nil
        problem = nil
        calls.prepare(dataDirectory: dataDirectory, done: done)
    }

    /// Records how a load ended (on the loop thread).
    func finishLoad(_ result: Result<PluginDescription, PluginFailure>) {
        switch result {
        case .success(let plugin):
            description = plugin
            state = .loaded
            problem = nil
            successfulLoads += 1
        case .failure(let failure):
            description = nil
            state = .failed
            problem = failure.message
        }
        crashes = 0
        crashTimes = []
    }

    /// Whether the file at ``path`` is no longer the one loaded or
    /// quarantined (``identity``): another size or modification time, or
    /// gone. One `stat`; false while loading (the load reads the file anew).
    var fileChanged: Bool {
        guard state != .loading, let identity else { return false }
        return PluginFileIdentity.of(path: path) != identity
    }

    /// `fork-server`, or `spawn` with the reason the fork server fell back.
    var isolation: String { calls.isolation }

    /// Runs `call` on the plugin's queue; `done` runs on that queue.
    func submit(_ call: PluginCall, done: @escaping @Sendable (CallOutput) -> Void) {
        calls.submit(call, done: done)
    }

    /// Stops the fork server once the queued calls are done, without
    /// waiting for them (the loop never blocks on a plugin).
    func stop() { calls.stop(wait: false) }

    /// Stops the fork server, waiting for the call running now (shutdown).
    func stopAndWait() { calls.stop(wait: true) }

    /// Shutdown: calls queued and not yet started are dropped without a
    /// completion (their reloads stay in flight in the state file, so the
    /// next start runs them); the one running goes on.
    func cancelQueuedCalls() { calls.cancelQueued() }

    /// Whether a call of this plugin is running now.
    var isCalling: Bool { calls.isCalling }

    /// When its warm workers will have been idle past the configured
    /// `maxIdleSeconds` (monotonic seconds), nil when none may be: the loop
    /// wakes then to retire them (``retireIdleWorkers(at:)``), so that an
    /// idle plugin's workers give their memory back while it is idle, not
    /// at its next call. One wakeup per idle spell.
    var idleDeadline: Double? {
        guard isolationMode == .worker else { return nil }
        // A second past the engine's own deadline: its standby was ready a
        // little after the call that made it.
        return calls.lastActivity.map { $0 + recycling.maxIdleSeconds + 1 }
    }

    /// Retires the warm workers idle past `maxIdleSeconds` when their
    /// deadline has come (on the plugin's queue); the next call starts a
    /// fresh one.
    func retireIdleWorkers(at monotonicNow: Double) {
        guard let deadline = idleDeadline, deadline <= monotonicNow else { return }
        calls.retireIdle()
    }
}

/// The part of a worker that runs off the loop thread: the plugin's
/// isolation engine (warm workers, or the mode its configuration asks for)
/// is touched only on `queue`.
private final class CallQueue: @unchecked Sendable {
    private let queue: DispatchQueue
    private let engine: IsolationEngine
    private let mode = Mutex("worker")
    /// Calls running (0 or 1) and whether queued calls are dropped.
    private let activity = Mutex((running: 0, cancelled: false))
    /// When the last load or call ended (monotonic seconds), nil once its
    /// idle workers were retired (or before anything ran).
    private let lastEnded = Mutex<Double?>(nil)

    init(label: String, path: String, options: IsolationOptions, isolation: IsolationMode, recycling: WorkerRecycling) {
        queue = DispatchQueue(label: label)
        engine = IsolationEngine(plugin: path, options: options, mode: isolation, recycling: recycling)
    }

    var isolation: String { mode.withLock { $0 } }

    /// Loads the plugin in a worker (or fork server) on the queue; `done` runs there.
    func prepare(
        dataDirectory: String, done: @escaping @Sendable (Result<PluginDescription, PluginFailure>) -> Void
    ) {
        queue.async { [self] in
            let result = engine.prepare(dataDirectory: dataDirectory)
            mode.withLock { $0 = Self.describe(engine) }
            lastEnded.withLock { $0 = wh_monotonic_seconds() }
            done(result)
        }
    }

    private static func describe(_ engine: IsolationEngine) -> String {
        var current = engine.isolationSummary
        if case .failed(let reason) = engine.warmUp { current += " (warm-up failed: \(reason))" }
        return current
    }

    func submit(_ call: PluginCall, done: @escaping @Sendable (CallOutput) -> Void) {
        queue.async { [self] in
            let go = activity.withLock { state -> Bool in
                guard !state.cancelled else { return false }
                state.running += 1
                return true
            }
            guard go else { return }
            let output = engine.call(call)
            mode.withLock { $0 = Self.describe(engine) }
            lastEnded.withLock { $0 = wh_monotonic_seconds() }
            // Posted before the count drops: a loop that sees no call running
            // finds every completion in its mailbox.
            done(output)
            activity.withLock { $0.running -= 1 }
        }
    }

    var isCalling: Bool { activity.withLock { $0.running > 0 } }

    /// When the last load or call ended, nil once idle workers were retired.
    var lastActivity: Double? { lastEnded.withLock { $0 } }

    /// Retires the engine's idle workers on the queue (after any call queued).
    func retireIdle() {
        lastEnded.withLock { $0 = nil }
        queue.async { [self] in
            engine.retireIdleWorkers()
            mode.withLock { $0 = Self.describe(engine) }
        }
    }

    func cancelQueued() { activity.withLock { $0.cancelled = true } }

    func stop(wait: Bool) {
        if wait {
            queue.sync { engine.stop() }
        } else {
            queue.async { [self] in engine.stop() }
        }
    }
}
