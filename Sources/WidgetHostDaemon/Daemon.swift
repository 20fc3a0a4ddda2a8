import CWidgetHostSupport
import Logging
import SystemPackage
import WidgetHostControl
import WidgetHostIsolation
import WidgetHostModel
import WidgetHostScheduler
import WidgetHostStore
import WidgetHostWeb

#if canImport(Glibc)
    import Glibc
#endif

/// Where the daemon reads its configuration, keeps its state and listens.
public struct DaemonOptions: Sendable {
    public var configurationPath: String
    public var statePath: String
    public var socketPath: String
    public var isolation: IsolationOptions
    /// Where the web dashboard listens (`run --http`); nil: no dashboard.
    public var http: WebAddress?

    public init(
        configurationPath: String = ControlPaths.configuration, statePath: String = ControlPaths.state,
        socketPath: String = ControlPaths.socket, isolation: IsolationOptions = IsolationOptions(),
        http: WebAddress? = nil
    ) {
        self.http = http
        self.configurationPath = configurationPath
        self.statePath = statePath
        self.socketPath = socketPath
        self.isolation = isolation
    }
}

/// `widgethost run`: keeps the configured widget instances fresh in real time.
///
/// One thread runs the loop: it sleeps in `poll(2)` until the next due event
/// (a CLOCK_REALTIME timerfd armed at the scheduler's next wakeup, which also
/// fires when the wall clock is set), a control-socket request, a finished
/// plugin call, or a signal. Plugin calls run on one serial queue per
/// plugin, through that plugin's fork server. Every change of state is
/// committed to SQLite before it is acted on (docs/daemon.md).
///
/// ```swift
/// let daemon = try Daemon.start(options: DaemonOptions(configurationPath: "host.json"), logger: logger)
/// exit(daemon.run())   // returns after SIGTERM or SIGINT
/// ```
public final class Daemon {
    let options: DaemonOptions
    var configuration: DaemonConfiguration
    let logger: Logger
    let store: StateStore
    let clock = DaemonClock()
    var scheduler: ReloadScheduler
    /// Plugin name → worker.
    var workers: [String: PluginWorker] = [:]
    /// Instance id → its configuration entry.
    var instances: [String: DaemonConfiguration.Instance]
    /// Reloads running now: instance id → when it started (monotonic) and the decision.
    var inFlight: [String: (started: Double, decision: ReloadDecision)] = [:]
    let completions: Mailbox<Completion>
    /// Plugin loads that ended on the plugins' queues (``PluginWorker/beginLoad(_:)``).
    let loads: Mailbox<PluginLoad>
    /// A configuration read at SIGHUP whose new plugins are still loading:
    /// applied once none is (the old one runs meanwhile).
    var pendingConfiguration: (configuration: DaemonConfiguration, workers: [String: PluginWorker])?
    let startedAt: Double
    var stopping = false
    var server: ControlServer?
    /// The web dashboard (`run --http`), or nil (Daemon+HTTP.swift).
    var web: DaemonWebService?
    /// Whether the state database takes writes (``StorageHealth``).
    var storage = StorageHealth()
    /// The requests of this turn of the loop, while they are answered (``answer(_:on:)``).
    var requestBatch: RequestBatch?
    /// Completions taken from the mailbox and not yet finished (``nextCompletions()``).
    var completionBacklog: [Completion] = []
    /// What the requests of this batch changed, not yet committed (``apply(_:at:kind:message:)``).
    var changes = PendingChanges()
    /// Instances whose timeline changed since the last commit (a completed
    /// reload): the others' timeline rows are not rewritten.
    var changedTimelines: Set<String> = []
    /// The host-wide parts of the state as last committed, written again only when they differ.
    var persisted: (freeLedger: RollingLedger, apps: [String: AppState])
    /// Counts the changes of the scheduler's state (every change is applied
    /// or committed through a path that bumps it); keys ``summaryCache``.
    var stateGeneration = 0
    /// `status`'s summary counts as of ``stateGeneration``.
    var summaryCache: (generation: Int, counts: InstanceCounts)?
    /// Bumped when instances are added, removed or changed (a configuration
    /// applied, `instances.add`, `.remove`, `.update`, a batch undone), only
    /// through ``instanceSetChanged(_:)``; keys ``usage`` and the stacks
    /// (``WatchState/stacks``), which follow some changes in place.
    var instanceSetGeneration = 0
    /// The kinds each app has placed, as of ``instanceSetGeneration``.
    var usage: InstanceUse?
    /// The event stream (`watch`, and in-process subscribers such as the web dashboard).
    public private(set) lazy var events = EventLog(store: store)
    /// What the loop keeps for the event stream (``serviceWatch()``).
    var watch = WatchState()
    /// Each kind's push token, once read from the state database (``pushTokens()``).
    var pushTokenCache: [String: String]?
    /// The reloads that ended in this turn of the loop, committed together (``finishAll(_:)``).
    var completionBatch: [FinishedReload] = []
    /// The reloads held (not called) whose summary is not logged yet (``logHeldReloads()``).
    var heldReloads = HeldReloadLog()
    private let signalDescriptor: Int32
    /// The state file's lock, held for the daemon's life.
    let lock: StateLock
    private var timerDescriptor: Int32 = -1
    /// The last (wall, boottime) pair seen by the loop, to notice clock jumps.
    private var clockWatch: ClockWatch
    /// SIGHUP arrived: read the configuration again at the next turn of the loop.
    private var configurationReloadPending = false
    /// When the loop last read a request (monotonic; ``turnSize``).
    var lastRequestAt = -Double.infinity
    /// After SIGTERM: when the calls still running are given up (monotonic).
    private var shutdownDeadline: Double?

    /// A reload that ended: the call's output, or why the plugin could not be called.
    struct Completion: Sendable {
        var instanceID: String
        var output: CallOutput?
        /// Why the plugin was not called, and until when the reload is
        /// held (``ReloadOutcome/notCalled(reason:retryAt:)``); nil for a call made.
        var notCalled: (cause: HoldCause, retryAt: Double)?

        /// A call made, and its output.
        init(instanceID: String, output: CallOutput) {
            self.instanceID = instanceID
            self.output = output
        }

        /// A reload whose plugin was not called: held until `retryAt`.
        init(instanceID: String, notCalled cause: HoldCause, retryAt: Double) {
            self.instanceID = instanceID
            self.notCalled = (cause, retryAt)
        }
    }

    /// A reload completed in the scheduler, waiting for its commit to be logged (``finishAll(_:)``).
    struct FinishedReload {
        var instanceID: String
        /// Its event: `timeline`, `failure` or `held`, and its text.
        var kind: String
        var message: String
        /// Its log line.
        var line: String
        /// Whether the plugin returned a timeline.
        var ok: Bool
        /// For a reload not called: why, and until when it is held. Its
        /// line is then at debug level, and the reloads held for one cause
        /// are logged together (``HeldReloadLog``).
        var held: (cause: HoldCause, until: Double)?
    }

    /// A plugin load that ended: the worker (by identity, since a SIGHUP
    /// may have replaced it meanwhile) and how.
    struct PluginLoad: Sendable {
        var plugin: String
        var worker: ObjectIdentifier
        var result: Result<PluginDescription, PluginFailure>
    }

    private init(
        options: DaemonOptions, configuration: DaemonConfiguration, logger: Logger, store: StateStore,
        scheduler: ReloadScheduler, workers: [String: PluginWorker], startedAt: Double, server: ControlServer,
        signals: Int32, lock: StateLock, loads: Mailbox<PluginLoad>
    ) throws(DaemonError) {
        self.loads = loads
        self.lock = lock
        self.server = server
        self.signalDescriptor = signals
        self.options = options
        self.configuration = configuration
        self.logger = logger
        self.store = store
        self.scheduler = scheduler
        self.persisted = (scheduler.freeLedger, scheduler.apps)
        self.workers = workers
        self.instances = Dictionary(uniqueKeysWithValues: configuration.instances.map { ($0.id, $0) })
        self.completions = try Mailbox()
        self.startedAt = startedAt
        self.clockWatch = ClockWatch(wall: clock.now(), boot: clock.boottime())
        watch.since = startedAt
    }

    /// Milliseconds until the first plugin's warm workers are idle past
    /// their `maxIdleSeconds`, for the loop's poll; nil when none may be.
    var idleWorkersTimeout: Int32? {
        guard let deadline = workers.values.compactMap(\.idleDeadline).min() else { return nil }
        return Int32(max(0, min(Double(Int32.max), (deadline - wh_monotonic_seconds()) * 1000)).rounded(.up))
    }

    /// A scheduler as the daemon runs it: recording the instances it
    /// changes (for ``commit(_:_:)``) and the entries that became current
    /// (for `entry` events, ``serviceWatch()``).
    static func running(_ configuration: SchedulerConfiguration, state: SchedulerState) -> ReloadScheduler {
        var scheduler = ReloadScheduler(configuration: configuration, state: state)
        scheduler.tracksTouched = true
        scheduler.tracksDisplayChanges = true
        return scheduler
    }

    // MARK: Start

    /// Reads the configuration, opens the state, loads every plugin (one that
    /// fails is reported and its instances wait; the others work), checks the
    /// instances against the plugins, and reconciles the stored state with
    /// the clock and the configuration. Does not listen yet: ``run()`` does.
    public static func start(options: DaemonOptions, logger: Logger) throws(DaemonError) -> Daemon {
        // Where a start's time goes, logged at `info` (a restart with 100,000
        // instances is measured against a goal of 5 s: docs/performance.md).
        var phases = StartPhases()
        // Before any other thread starts: SIGTERM, SIGINT and SIGHUP become
        // readable events of the loop in every thread started afterwards.
        let signals = wh_signalfd_open()
        guard signals >= 0 else { throw .system("signalfd", errno: errno) }
        // The configuration is read and checked on its own thread while the
        // state is opened and read here (with 100,000 instances, 0.9 s and
        // 4 s). Its error, if any, is the one reported, before any other, as
        // when it was read first.
        let reading = ConfigurationReading(path: options.configurationPath)
        let clock = DaemonClock()
        func configurationFirst(_ error: DaemonError) -> DaemonError {
            if case .failure(let problem) = reading.wait() { return .configuration(problem.description) }
            return error
        }
        // One daemon per state file, checked before anything is touched.
        do {
            try makeParentDirectory(of: options.statePath)
        } catch {
            throw configurationFirst(.state(path: options.statePath, detail: "\(error)"))
        }
        let lock: StateLock
        do { lock = try StateLock.acquire(for: options.statePath) } catch { throw configurationFirst(error) }
        // Listen before touching the state: a socket that cannot be created
        // (another daemon, a bad path) stops the start with nothing changed.
        // The connection limit is set once the configuration is in (and
        // again at each SIGHUP: ``applyConfiguration(_:workers:)``).
        let descriptors = raiseDescriptorLimit(logger: logger)
        let server: ControlServer
        do {
            server = try ControlServer(
                path: options.socketPath,
                limits: ControlServer.Limits(connections: max(16, descriptors - max(64, descriptors / 8))),
                logger: logger)
        } catch {
            throw configurationFirst(error)
        }
        var started = false
        defer { if !started { server.close() } }
        // No state file yet (a first start): nothing to read meanwhile, and a
        // configuration refused must not leave an empty one behind.
        if access(options.statePath, F_OK) != 0, case .failure(let problem) = reading.wait() {
            throw .configuration(problem.description)
        }
        let store: StateStore
        do {
            store = try StateStore(path: options.statePath)
        } catch let error as StateStoreError {
            if case .newerSchema = error { throw configurationFirst(.newerState(error.description)) }
            throw configurationFirst(.state(path: options.statePath, detail: "\(error)"))
        } catch {
            throw configurationFirst(.state(path: options.statePath, detail: "\(error)"))
        }
        // A row that fails its checks (a time past 9999 a plugin once
        // returned, a hand-edited value) is set aside, never trapped on.
        let stored: SchedulerState
        let setAside: [RejectedRow]
        do {
            (stored, setAside) = try store.loadSchedulerStateSettingAsideBadRows(at: clock.now())
        } catch {
            throw configurationFirst(.state(path: options.statePath, detail: "\(error)"))
        }
        phases.end("state read")
        var configuration: DaemonConfiguration
        switch reading.wait() {
        case .success(let read): configuration = read
        case .failure(let problem): throw .configuration(problem.description)
        }
        phases.end("waiting for the configuration")
        server.configure(configuration.daemon)
        // Every plugin loads at once, each on its own queue; the start waits
        // for them (no request is served yet) because the configuration is
        // checked against their kinds before the daemon is ready: a mistake
        // exits 2 (the unit's RestartPreventExitStatus) instead of running.
        let loads = try Mailbox<PluginLoad>()
        let workers = loadPlugins(configuration, options: options, store: store, logger: logger, loads: loads)
        awaitLoads(of: workers, from: loads, logger: logger)
        let shadowed = addRuntimeInstances(to: &configuration, store: store, workers: workers, logger: logger)
        let widgets = try instances(of: configuration, workers: workers)
        phases.end("plugins and placement")

        // The stored state, reconciled with the clock, then with the configuration.
        let now = clock.now()
        let scheduler: ReloadScheduler
        do {
            for row in setAside {
                logger.error(
                    "state: set aside \(row) (moved to the rejected_row table of \(options.statePath)); a still-configured instance starts afresh"
                )
            }
            let sample = clock.sample()
            let last = try store.lastClockSample()
            let reconciliation = RestartPlanner.reconcile(
                state: stored, lastSeen: last?.wallClock, now: now,
                monotonicElapsed: last.flatMap { sample.monotonicElapsed(since: $0) })
            var state = reconciliation.state
            for note in reconciliation.notes { logger.notice("restart: \(note)") }
            try store.transaction { tx in
                for note in reconciliation.notes {
                    try tx.appendEvent(time: now, instanceID: nil, kind: "restart", message: note)
                }
            }
            if !reconciliation.catchUp.isEmpty {
                logger.notice(
                    "restart: one catch-up reload each for \(RestartPlanner.list(reconciliation.catchUp))")
            }
            let fresh = merge(widgets, into: &state, at: now, logger: logger)
            var built = running(configuration.scheduler, state: state)
            for widget in fresh { built.add(widget, at: now) }
            phases.end("reconcile and merge")
            // Only what the reconciliation and the configuration changed is
            // written (a start with 100,000 unchanged instances writes none).
            try store.saveSchedulerState(built.state, storedAs: stored)
            _ = built.takeTouched()
            try store.transaction { tx in for id in shadowed { try tx.removeRuntimeInstance(id) } }
            try store.recordClockSample(sample)
            try store.appendEvent(
                time: now, kind: "start",
                message: "started with \(widgets.count) instances, \(workers.count) plugins (\(configuration.file))")
            scheduler = built
            phases.end("first commit")
        } catch {
            throw .state(path: options.statePath, detail: "\(error)")
        }
        let daemon = try Daemon(
            options: options, configuration: configuration, logger: logger, store: store, scheduler: scheduler,
            workers: workers, startedAt: now, server: server, signals: signals, lock: lock, loads: loads)
        started = true
        logger.info("start: \(phases)")
        return daemon
    }

    /// A worker per configured plugin, each loading (off the loop: the
    /// outcome is posted to `loads`) or found quarantined. Workers in
    /// `current` whose plugin is unchanged (name, file, data directory,
    /// sandbox) are kept as they are, fork server and all.
    static func loadPlugins(
        _ configuration: DaemonConfiguration, options: DaemonOptions, store: StateStore, logger: Logger,
        current: [String: PluginWorker] = [:], loads: Mailbox<PluginLoad>
    ) -> [String: PluginWorker] {
        var workers: [String: PluginWorker] = [:]
        for plugin in configuration.plugins {
            let data =
                plugin.dataDirectory ?? DataDirectory.defaultPath(forPlugin: plugin.name, root: configuration.dataRoot)
            var isolation = options.isolation
            isolation.sandbox = plugin.sandbox
            if let existing = current[plugin.name], existing.path == plugin.path, existing.dataDirectory == data,
                existing.options.sandbox == plugin.sandbox, existing.isolationMode == plugin.isolation,
                existing.recycling == plugin.recycling
            {
                workers[plugin.name] = existing
                continue
            }
            DataDirectory.ensure(data)
            let worker = PluginWorker(
                name: plugin.name, path: plugin.path, dataDirectory: data, options: isolation,
                isolation: plugin.isolation, recycling: plugin.recycling)
            if let file = PluginFileIdentity.of(path: plugin.path), let entry = try? store.quarantineEntry(file) {
                worker.identity = file
                worker.state = .quarantined
                worker.crashes = entry.crashCount
                worker.problem =
                    "quarantined since \(Timestamp.iso8601(entry.since)) after \(entry.crashCount) crashes (\(entry.reason)); replace the file or run `widgethost unquarantine \(plugin.path)`"
                logger.warning("plugin \(plugin.name) is quarantined: \(worker.problem!)")
            } else {
                beginLoad(worker, posting: loads)
            }
            workers[plugin.name] = worker
        }
        return workers
    }

    /// Starts loading `worker` on its queue; the outcome arrives in `loads`.
    static func beginLoad(_ worker: PluginWorker, posting loads: Mailbox<PluginLoad>) {
        let name = worker.name
        let identity = ObjectIdentifier(worker)
        worker.beginLoad { result in loads.post(PluginLoad(plugin: name, worker: identity, result: result)) }
    }

    /// Records the outcome of `load` in its worker, if that worker is one of
    /// `workers` (else it was replaced meanwhile: nil), and logs it.
    static func settle(_ load: PluginLoad, in workers: [String: PluginWorker], logger: Logger) -> PluginWorker? {
        guard let worker = workers[load.plugin], ObjectIdentifier(worker) == load.worker else { return nil }
        worker.finishLoad(load.result)
        if let problem = worker.problem {
            logger.error("plugin \(worker.name) (\(worker.path)) failed to load: \(problem)")
        } else if let description = worker.description {
            logger.info(
                "plugin \(worker.name): \(description.id) \(description.version), kinds \(description.kinds.map(\.id).joined(separator: ", "))"
            )
        }
        return worker
    }

    /// Waits (before the loop runs) until none of `workers` is loading.
    static func awaitLoads(of workers: [String: PluginWorker], from loads: Mailbox<PluginLoad>, logger: Logger) {
        while workers.values.contains(where: { $0.state == .loading }) {
            var descriptor = pollfd(fd: loads.descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, -1)
            for load in loads.take() { _ = settle(load, in: workers, logger: logger) }
        }
    }

    /// The configured instances, each checked against its (loaded) plugin:
    /// kind, family and parameters, with the line of the mistake.
    static func instances(of configuration: DaemonConfiguration, workers: [String: PluginWorker])
        throws(DaemonError) -> [WidgetInstance]
    {
        var widgets: [WidgetInstance] = []
        for instance in configuration.instances {
            var json = JSONValue.objectText(instance.configuration)
            if let description = workers[instance.plugin]?.description {
                guard let kind = description.kind(instance.kind) else {
                    throw .configuration(
                        configuration.fail(
                            "\(instance.field).kind",
                            "plugin \(instance.plugin) has no kind \"\(instance.kind)\"; it has: \(description.kinds.map(\.id).joined(separator: ", "))"
                        ).description)
                }
                guard kind.families.contains(instance.family) else {
                    throw .configuration(
                        configuration.fail(
                            "\(instance.field).family",
                            "kind \(kind.id) does not support \(instance.family.name); it supports: \(kind.families.map(\.name).joined(separator: ", "))"
                        ).description)
                }
                switch ConfigurationBuilder.build(kind: kind, overrides: instance.configuration) {
                case .success(let text): json = text
                case .failure(let problem):
                    throw .configuration(
                        configuration.fail("\(instance.field).configuration", "\(problem)").description)
                }
            }
            widgets.append(
                WidgetInstance(
                    id: instance.id, plugin: instance.plugin, kind: instance.kind, family: instance.family,
                    configuration: json, app: instance.app, isVisible: instance.visible,
                    usesLocation: instance.usesLocation))
        }
        return widgets
    }

    /// Makes `state` follow the configured `widgets`: instances no longer
    /// configured are removed, reconfigured ones get one free reload (their
    /// visibility is runtime state and stays); returns the new ones, to add.
    static func merge(_ widgets: [WidgetInstance], into state: inout SchedulerState, at now: Double, logger: Logger)
        -> [WidgetInstance]
    {
        // The usual restart: the same instances in the same order, none
        // changed. Checked in one walk, with no copy of any state (a set and
        // a map of 100,000 ids and a copy of the array were a tenth of a
        // restart); anything else takes the general path.
        if widgets.count == state.instances.count
            && widgets.indices.allSatisfy({ p in
                let existing = state.instances[p].instance
                var changed = widgets[p]
                changed.isVisible = existing.isVisible
                return changed == existing
            })
        {
            return []
        }
        let wanted = Set(widgets.map(\.id))
        for removed in state.instances.map(\.instance.id) where !wanted.contains(removed) {
            logger.notice("instance \(removed) is no longer configured: removed with its state")
        }
        state.instances.removeAll { !wanted.contains($0.instance.id) }
        var fresh: [WidgetInstance] = []
        var positions: [String: Int] = [:]
        for (position, s) in state.instances.enumerated() { positions[s.instance.id] = position }
        for widget in widgets {
            guard let position = positions[widget.id] else {
                fresh.append(widget)
                continue
            }
            var existing = state.instances[position]
            var changed = widget
            changed.isVisible = existing.instance.isVisible
            if existing.instance != changed {
                logger.notice("instance \(widget.id) was reconfigured: a free reload with the new configuration")
                existing.instance = changed
                existing.request = PendingRequest(trigger: .added, charge: .free(.instanceAdded), requestedAt: now)
                state.instances[position] = existing
            }
        }
        return fresh
    }

    /// Raises the soft RLIMIT_NOFILE to the hard limit (each idle control
    /// connection holds one descriptor); returns the limit in force.
    static func raiseDescriptorLimit(logger: Logger) -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            let soft = limit.rlim_cur
            limit.rlim_cur = limit.rlim_max
            if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 {
                logger.info("descriptor limit raised from \(soft) to \(limit.rlim_max) (RLIMIT_NOFILE)")
            } else {
                limit.rlim_cur = soft
            }
        }
        return Int(min(limit.rlim_cur, 1 << 30))
    }

    static func makeParentDirectory(of path: String) throws {
        var directory = ""
        for component in path.split(separator: "/").dropLast() {
            directory += "/" + component
            if mkdir(directory, 0o700) != 0 && errno != EEXIST {
                throw DaemonError.system("mkdir \(directory)", errno: errno)
            }
        }
    }

    // MARK: Run

    /// Listens on the control socket and runs until SIGTERM or SIGINT (a
    /// second one stops at once). Returns the exit status.
    public func run() -> Int32 {
        timerDescriptor = wh_timerfd_open()
        guard timerDescriptor >= 0 else {
            logger.critical("cannot create the timer descriptor: \(String(cString: strerror(errno)))")
            return 1
        }
        logger.info(
            "widgethost daemon \(getpid()) ready: \(instances.count) instances, socket \(options.socketPath), state \(options.statePath)"
        )
        if let address = options.http {
            do {
                try startWeb(address)
            } catch {
                logger.critical("cannot start the dashboard: \(error.description)")
                return 1
            }
        }
        _ = wh_sd_notify("READY=1\nSTATUS=keeping \(instances.count) widget instances fresh")
        var signals = 0
        var armedFor: Double? = nil
        while true {
            let now = clock.now()
            noticeClockJump(now: now)
            settleLoads(loads.take())
            finishAll(nextCompletions())
            if stopping {
                // Calls queued were dropped at SIGTERM (still in flight in the
                // file: they run after the restart); the running ones have the grace period.
                if !workers.values.contains(where: \.isCalling) {
                    completionBacklog += completions.take()
                    finishAll(completionBacklog)
                    completionBacklog = []
                    break
                }
                if let deadline = shutdownDeadline, wh_monotonic_seconds() >= deadline {
                    let running = workers.values.filter(\.isCalling).map(\.name).sorted()
                    logger.warning(
                        "grace period of \(Timestamp.duration(configuration.daemon.shutdownGracePeriod)) over: killing the calls still running (\(running.joined(separator: ", "))); their reloads run again after the restart"
                    )
                    finishShutdown(waitingForCalls: false)
                    return 0
                }
            }
            if configurationReloadPending && !stopping {
                configurationReloadPending = false
                reloadConfiguration()
            }
            retryStorageIfDue()
            let monotonicNow = wh_monotonic_seconds()
            for worker in workers.values { worker.retireIdleWorkers(at: monotonicNow) }
            if !stopping && storage.isAvailable { issueDueReloads(at: clock.now()) }
            logHeldReloads()
            serviceWatch()

            // Sleep until the next due event: no timer at all when nothing is
            // scheduled, nor while the store takes no writes (reloads are
            // paused; the retry below wakes the loop).
            let wake = stopping || !storage.isAvailable ? nil : scheduler.nextWakeup()
            if wake != armedFor {
                wh_timerfd_arm(timerDescriptor, wake ?? -1)
                armedFor = wake
            }
            var descriptors = [
                pollfd(fd: signalDescriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: timerDescriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: completions.descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: loads.descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: webDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            descriptors += server?.descriptors ?? []
            // Stopping, the loop looks again every 50 ms whether the calls
            // still running have ended: a call's completion is posted just
            // before its queue counts it done, so the wakeup it brings may
            // still see it running (the stop then waited out the whole grace
            // period after the last call had ended).
            let graceTimeout = shutdownDeadline.map {
                Int32(max(0, min(50, ($0 - wh_monotonic_seconds()) * 1000)).rounded(.up))
            }
            // Completions left for the next turn: look at the sockets, do not sleep.
            let backlogTimeout: Int32? = completionBacklog.isEmpty ? nil : 0
            let timeouts = [
                storageRetryTimeout, server?.acceptPauseTimeout, graceTimeout, backlogTimeout, idleWorkersTimeout,
            ].compactMap { $0 }
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeouts.min() ?? -1)
            if ready < 0 {
                if errno == EINTR { continue }
                logger.critical("poll failed: \(String(cString: strerror(errno)))")
                break
            }
            if descriptors[1].revents != 0 {
                if wh_timerfd_read(timerDescriptor) == 2 {
                    logger.notice("the wall clock was set")
                    armedFor = nil  // re-arm: CANCEL_ON_SET disarmed it
                }
            }
            if descriptors[0].revents != 0 {
                while case let signal = wh_signalfd_read(signalDescriptor), signal > 0 {
                    if signal == SIGHUP {
                        configurationReloadPending = true
                        continue
                    }
                    signals += 1
                    if signals == 1 {
                        beginShutdown(reason: signal == SIGTERM ? "SIGTERM" : "SIGINT")
                    } else {
                        logger.warning("second signal: stopping now; in-flight calls are killed with their runners")
                        finishShutdown(waitingForCalls: false)
                        return 1
                    }
                }
            }
            if let server {
                let incoming = server.service(descriptors[5...])
                if !incoming.isEmpty {
                    lastRequestAt = wh_monotonic_seconds()
                    answer(incoming, on: server)
                }
                server.reapClosing()
            }
            serviceWeb()
        }
        finishShutdown()
        return 0
    }

    /// SIGHUP: reads the configuration again and applies it as a restart
    /// would (new plugins loaded, unchanged ones kept with their fork servers,
    /// removed instances dropped, new ones added, reconfigured ones reloaded
    /// once, free), with its `daemon` and `failures` settings. A
    /// configuration with a mistake is refused with its line and the daemon
    /// goes on with the old one.
    func reloadConfiguration() {
        guard configuration.rereadable else {
            logger.error(
                "SIGHUP: configuration not reloaded, the old one stays: it was read from \(options.configurationPath == "-" ? "standard input" : "a pipe (\(options.configurationPath))"), which cannot be read again; to change it, restart the daemon, or give --config a file"
            )
            return
        }
        let new: DaemonConfiguration
        do {
            new = try DaemonConfiguration.load(options.configurationPath)
        } catch {
            logger.error("SIGHUP: configuration not reloaded, the old one stays: \(error.description)")
            return
        }
        // A configuration still waiting for its plugins is replaced by this one.
        if let pending = pendingConfiguration {
            for (name, worker) in pending.workers where workers[name] !== worker { worker.stop() }
            pendingConfiguration = nil
        }
        let newWorkers = Self.loadPlugins(
            new, options: options, store: store, logger: logger, current: workers, loads: loads)
        let loading = newWorkers.values.filter { $0.state == .loading }.map(\.name).sorted()
        guard loading.isEmpty else {
            // Loaded off the loop; applied by `settleLoads` once they are.
            pendingConfiguration = (new, newWorkers)
            logger.notice(
                "SIGHUP: loading \(loading.joined(separator: ", ")); the new configuration applies once loaded, the old one runs meanwhile"
            )
            return
        }
        applyConfiguration(new, workers: newWorkers)
    }

    /// Applies a configuration read at SIGHUP whose plugins have loaded (or
    /// failed): checks its instances against them (a mistake keeps the old
    /// configuration), then follows it as a restart would.
    func applyConfiguration(_ configured: DaemonConfiguration, workers newWorkers: [String: PluginWorker]) {
        let now = clock.now()
        var new = configured
        let shadowed = Self.addRuntimeInstances(to: &new, store: store, workers: newWorkers, logger: logger)
        let widgets: [WidgetInstance]
        do {
            widgets = try Self.instances(of: new, workers: newWorkers)
        } catch {
            for (name, worker) in newWorkers where workers[name] !== worker { worker.stop() }
            logger.error("SIGHUP: configuration not reloaded, the old one stays: \(error.description)")
            return
        }
        for (name, worker) in workers where newWorkers[name] !== worker {
            worker.stop()
            // Reloads that waited for a replaced plugin's load end now,
            // uncharged; they are issued again at once.
            for id in worker.waiting {
                finish(Completion(instanceID: id, notCalled: .reconfigured(plugin: name), retryAt: now))
            }
            worker.waiting = []
        }
        finishAll([])
        let previous = scheduler.state
        var state = scheduler.state
        let fresh = Self.merge(widgets, into: &state, at: now, logger: logger)
        var built = Self.running(new.scheduler, state: state)
        for widget in fresh { built.add(widget, at: now) }
        takeEntryChanges()
        scheduler = built
        instanceSetChanged(.replaced)
        configuration = new
        // `daemon.maximumConnections` and `requestLineTimeout`: a lower
        // connection limit refuses new connections, closes none.
        server?.configure(new.daemon)
        workers = newWorkers
        instances = Dictionary(uniqueKeysWithValues: new.instances.map { ($0.id, $0) })
        // A kept plugin that failed to load or is quarantined loads again if
        // its file changed: SIGHUP is how an operator says "I fixed it", and
        // its held reloads run once it has loaded.
        for worker in newWorkers.values { loadAgainIfChanged(worker) }
        let note = "configuration reloaded: \(widgets.count) instances, \(newWorkers.count) plugins"
        let snapshot = scheduler.state
        _ = scheduler.takeTouched()
        // The store holds the old state (every change is committed or owed,
        // and what is owed is written first): only the difference is written.
        if !commit(
            "the reloaded configuration",
            { tx in
                try tx.replaceSchedulerState(snapshot, storedAs: previous)
                for id in shadowed { try tx.removeRuntimeInstance(id) }
                try tx.appendEvent(time: now, instanceID: nil, kind: "configuration", message: note)
            })
        {
            storage.dirtyAll = true
        }
        logger.notice("SIGHUP: \(note)")
    }

    /// Stops taking work: no new reloads, no new requests; in-flight calls
    /// finish (each is bounded by its timeout).
    func beginShutdown(reason: String) {
        stopping = true
        shutdownDeadline = wh_monotonic_seconds() + configuration.daemon.shutdownGracePeriod
        _ = wh_sd_notify("STOPPING=1")
        for worker in workers.values { worker.cancelQueuedCalls() }
        let running = workers.values.filter(\.isCalling).count
        logger.notice(
            "\(reason): shutting down; \(running) running calls may finish within \(Timestamp.duration(configuration.daemon.shutdownGracePeriod)); \(max(0, inFlight.count - running)) queued reloads stay in the state and run after the restart"
        )
        server?.stopListening()
    }

    /// Stops the plugins' fork servers and records the clocks for the next
    /// start. Without `waitingForCalls`, calls still queued are not waited
    /// for: their runners die with the host (`PR_SET_PDEATHSIG`).
    func finishShutdown(waitingForCalls: Bool = true) {
        if waitingForCalls {
            for worker in workers.values { worker.stopAndWait() }
        }
        logHeldReloads(all: true)
        let sample = clock.sample()
        commit("the shutdown") { tx in
            try tx.recordClockSample(sample)
            try tx.appendEvent(time: sample.wallClock, instanceID: nil, kind: "stop", message: "stopped")
        }
        if !storage.isAvailable {
            logger.error(
                "stopped with the state database unavailable: the reloads completed since \(Timestamp.iso8601(storage.since)) were not stored and run again at the next start"
            )
        }
        server?.close()
        stopWeb()
        logger.notice("stopped; state is in \(options.statePath)")
    }

    // MARK: Clock jumps

    /// When the wall clock moved differently from real time (a `date -s`, an
    /// NTP step), moves every scheduling time by the same amount, as a
    /// restart would (``RestartPlanner``): no budget granted or lost, no storm.
    func noticeClockJump(now: Double) {
        let boot = clock.boottime()
        let reference = clockWatch
        // Keep the old reference until the reloads in flight have ended.
        guard let jump = clockWatch.observe(wall: now, boot: boot), inFlight.isEmpty else { return }
        // The same rules as a restart: a backwards jump moves every time
        // back, a forwards one (beyond the real elapsed time) forward.
        let state = RestartPlanner.reconcile(
            state: scheduler.state, lastSeen: reference.wall, now: now, monotonicElapsed: boot - reference.boot
        ).state
        takeEntryChanges()
        scheduler = Self.running(configuration.scheduler, state: state)
        clockWatch.accept(wall: now, boot: boot)
        let note =
            "wall clock jumped \(jump > 0 ? "forward" : "back") \(Timestamp.duration(abs(jump))): scheduling times moved with it"
        logger.notice("\(note)")
        let snapshot = scheduler.state
        let sample = clock.sample()
        if !commit(
            "the clock jump",
            { tx in
                try tx.replaceSchedulerState(snapshot)
                try tx.recordClockSample(sample)
                try tx.appendEvent(time: now, instanceID: nil, kind: "clock", message: note)
            })
        {
            storage.dirtyAll = true
        }
    }
}

extension JSONValue {
    /// `{"name": value, ...}` from member names and their JSON text, sorted by name.
    static func objectText(_ members: [String: String]) -> String {
        "{"
            + members.keys.sorted().map { "\(JSONValue.string($0).compactText(limit: .max)):\(members[$0]!)" }
            .joined(separator: ",") + "}"
    }
}
