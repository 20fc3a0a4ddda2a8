import CWidgetHostSupport
import WidgetHostControl
import WidgetHostIsolation
import WidgetHostModel
import WidgetHostScheduler
import WidgetHostStore

extension Daemon {
    /// Issues the reloads due at `now` (at most ``turnSize``'s; the
    /// rest at the next turns): commits the decisions (ledger, in-flight
    /// mark, event), then hands the calls to the plugins' queues.
    ///
    /// The decisions are committed in one transaction (group commit: one
    /// `synchronous=FULL` sync for the lot) before any call is made. When
    /// the store cannot take it, the scheduler's journal puts back what the
    /// decisions changed: nothing is issued that could not be stored.
    func issueDueReloads(at now: Double) {
        scheduler.beginJournal()
        let decisions = scheduler.dueReloads(at: now, limit: turnSize.reloads).flatMap(\.decisions)
        guard !decisions.isEmpty else {
            scheduler.endJournal()
            return
        }
        // The instances the decisions touched (and the free ledger) are
        // written by `commit` itself.
        let stored = commit("\(decisions.count) reloads issued") { tx in
            try tx.observe(now)
            for decision in decisions {
                try tx.appendEvent(
                    time: decision.time, instanceID: decision.instanceID, kind: "reload",
                    message: decision.description, data: watchDetails(of: decision))
            }
        }
        guard stored else {
            scheduler.rollBackJournal()
            return
        }
        scheduler.endJournal()
        for decision in decisions {
            guard scheduler.instanceState(decision.instanceID) != nil else { continue }
            inFlight[decision.instanceID] = (wh_monotonic_seconds(), decision)
            dispatch(decision.instanceID, at: now)
        }
        // Reloads not called (plugin unavailable, kind backing off) are committed together.
        finishAll([])
    }

    /// Calls the plugin for the reload of `id` (issued, committed, in
    /// flight), or ends it at once as not called (uncharged, held: the
    /// plugin did not load or is quarantined, or the kind backs off). A
    /// reload whose plugin is loading waits for the load
    /// (``PluginWorker/waiting``).
    func dispatch(_ id: String, at now: Double) {
        guard let decision = inFlight[id]?.decision else { return }
        guard let instance = instances[id], let worker = workers[decision.plugin] else {
            let cause = HoldCause.pluginUnusable(plugin: decision.plugin, problem: "it is not configured")
            finish(Completion(instanceID: id, notCalled: cause, retryAt: now + configuration.scheduler.backoffCap))
            return
        }
        loadAgainIfChanged(worker)
        if worker.state == .loading {
            worker.waiting.append(id)
            return
        }
        guard worker.state == .loaded, let description = worker.description else {
            let cause = HoldCause.pluginUnusable(plugin: decision.plugin, problem: worker.problem ?? "it did not load")
            let retryAt = worker.holdUntil(at: now, backoff: configuration.scheduler.backoff(afterFailures:))
            finish(Completion(instanceID: id, notCalled: cause, retryAt: retryAt))
            return
        }
        if let until = worker.backoff(of: instance.kind, at: now) {
            let cause = HoldCause.kindBackingOff(
                plugin: decision.plugin, kind: instance.kind,
                failures: worker.kindFailures[instance.kind]?.count ?? 0, until: until)
            finish(Completion(instanceID: id, notCalled: cause, retryAt: until))
            return
        }
        let kind = description.kind(instance.kind)
        let call = PluginCall(
            .timeline, kind: instance.kind, family: instance.family, now: now, timeout: instance.timeout,
            configuration: instance.configuration, dataDirectory: worker.dataDirectory,
            allowNetwork: kind?.needsNetwork ?? false,
            pushToken: kind?.acceptsPush == true ? pushTokens()[instance.kind] : nil)
        let mailbox = completions
        worker.submit(call) { output in
            mailbox.post(Completion(instanceID: id, output: output))
        }
    }

    /// A plugin whose file changed since it was loaded (or failed to load,
    /// or was quarantined) starts loading again (off the loop); its reloads
    /// wait for it. A loaded one is loaded again too: its description
    /// (identifier, version, kinds), its crash count and a quarantine are
    /// then the new file's, not the old one's (its calls would load the new
    /// file anyway: the engine notices the change).
    func loadAgainIfChanged(_ worker: PluginWorker) {
        guard worker.state != .loading, PluginFileIdentity.of(path: worker.path) != worker.identity else { return }
        logger.notice("plugin \(worker.name): the file changed; loading it again")
        Self.beginLoad(worker, posting: loads)
    }

    /// Loads `worker` again (`widgethost unquarantine`), off the loop.
    func loadAgain(_ worker: PluginWorker) {
        Self.beginLoad(worker, posting: loads)
    }

    /// Plugin loads that ended since the last turn of the loop: each
    /// recorded in its worker, the reloads that waited for it called (or
    /// held, not called, if it did not load), and, once it loaded, the
    /// holds of its instances' reloads not called ended (they are due
    /// again now, not when their holds would have run out); a configuration
    /// waiting for its plugins is applied once none is loading.
    func settleLoads(_ done: [PluginLoad]) {
        guard !done.isEmpty else { return }
        let now = clock.now()
        for load in done {
            if let worker = Self.settle(load, in: workers, logger: logger) {
                stateGeneration &+= 1
                if worker.state == .loaded, let description = worker.description {
                    note(kind: "plugin", message: "\(worker.name) loaded (\(description.id) \(description.version))")
                    // Its push kinds' tokens, made and stored now rather
                    // than on the way to their first call.
                    if description.kinds.contains(where: \.acceptsPush) { _ = pushTokens() }
                    // Only when some may be held: not a pass over every
                    // instance at each load.
                    if worker.endHold() {
                        for (id, instance) in instances where instance.plugin == worker.name {
                            scheduler.endHold(of: id, at: now)
                        }
                    }
                }
                let waiting = worker.waiting
                worker.waiting = []
                for id in waiting { dispatch(id, at: now) }
            } else if let pending = pendingConfiguration {
                _ = Self.settle(load, in: pending.workers, logger: logger)
            }
        }
        if let pending = pendingConfiguration, !pending.workers.values.contains(where: { $0.state == .loading }) {
            pendingConfiguration = nil
            applyConfiguration(pending.configuration, workers: pending.workers)
        }
        finishAll([])
    }

    /// How much reload work one turn of the loop takes on (each part one
    /// commit): a `reload(kind)` that makes 500 instances due is issued, and
    /// a storm of completions (10,000 instances reloading) finished, over
    /// turns, and the requests that arrive meanwhile are answered between
    /// them. While requests are arriving (one in the last second) the turns
    /// are short, so a request waits for little reload work (50 clients
    /// with 10,000 reloads running: p99 from 105 to 33-47 ms); otherwise they
    /// are long, so a storm costs fewer commits (the start's 10,000 added
    /// reloads).
    struct TurnSize {
        /// The most reloads issued.
        var reloads: Int
        /// The most completions finished.
        var completions: Int

        static let quiet = TurnSize(reloads: 128, completions: 256)
        static let answering = TurnSize(reloads: 16, completions: 32)
    }

    /// The turn size in force: ``TurnSize/answering`` while requests arrive.
    var turnSize: TurnSize { wh_monotonic_seconds() - lastRequestAt < 1 ? .answering : .quiet }

    /// The completions this turn finishes: the oldest waiting, at most ``turnSize``'s.
    func nextCompletions() -> [Completion] {
        completionBacklog += completions.take()
        let limit = turnSize.completions
        guard completionBacklog.count > limit else {
            defer { completionBacklog = [] }
            return completionBacklog
        }
        let now = Array(completionBacklog.prefix(limit))
        completionBacklog.removeFirst(limit)
        return now
    }

    /// The reloads that ended since the last turn of the loop: each
    /// completed in the scheduler and logged, then all committed in one
    /// transaction (group commit).
    func finishAll(_ done: [Completion]) {
        for completion in done { finish(completion) }
        let batch = completionBatch
        completionBatch = []
        guard !batch.isEmpty else { return }
        let ids = Set(batch.map(\.instanceID))
        guard storage.isAvailable else {
            storage.dirty.formUnion(ids)
            for entry in batch { log(entry, stored: false) }
            return
        }
        let now = clock.now()
        let sample = clock.sample()
        // The completed instances were touched in the scheduler: `commit` writes them.
        let stored = commit(
            batch.count == 1 ? "the end of the reload of \(batch[0].instanceID)" : "\(batch.count) reloads ended"
        ) { tx in
            try tx.observe(now)
            try tx.recordClockSample(sample)
            for entry in batch {
                try tx.appendEvent(
                    time: now, instanceID: entry.instanceID, kind: entry.kind, message: entry.message,
                    data: watchDetails(ofCompletion: entry.instanceID, held: entry.kind == "held" ? entry.message : nil)
                )
            }
        }
        if !stored { storage.dirty.formUnion(ids) }
        for entry in batch { log(entry, stored: stored) }
    }

    /// Logs a finished reload's line: at info when it returned a timeline
    /// and is stored, at warning otherwise; a reload not called at debug,
    /// counted in the summary of its cause (``logHeldReloads()``).
    private func log(_ entry: FinishedReload, stored: Bool) {
        let line = stored ? entry.line : entry.line + " (not stored yet: the state file takes no writes)"
        if let held = entry.held {
            logger.debug("\(line)")
            heldReloads.add(entry.instanceID, cause: held.cause, until: held.until, at: wh_monotonic_seconds())
        } else if entry.ok && stored {
            logger.info("\(line)")
        } else {
            logger.warning("\(line)")
        }
    }

    /// Logs one line per cause for the reloads held (not called) since the
    /// last time: once a turn of the loop leaves no reload due now and no
    /// completion waiting (the retry of 100,000 instances of a plugin that
    /// cannot be called, issued over many turns, is one line), or when the
    /// line has waited a second; all of them when `all` (shutdown). A host
    /// fault's is an error, the others warnings.
    func logHeldReloads(all: Bool = false) {
        guard !heldReloads.isEmpty else { return }
        let due = !stopping && storage.isAvailable && scheduler.nextWakeup().map { $0 <= clock.now() } == true
        let busy = due || !completionBacklog.isEmpty
        for summary in heldReloads.take(all: all || !busy, at: wh_monotonic_seconds()) {
            if summary.cause.isHostFault { logger.error("\(summary.line)") } else { logger.warning("\(summary.line)") }
        }
    }

    /// A reload ended: completes it in the scheduler, queues its commit,
    /// logs one line, and counts crashes toward quarantine.
    func finish(_ completion: Completion) {
        let now = clock.now()
        guard let flight = inFlight.removeValue(forKey: completion.instanceID) else { return }
        let output = completion.output
        let outcome: ReloadOutcome
        if let (cause, retryAt) = completion.notCalled {
            outcome = .notCalled(reason: cause.reason, retryAt: retryAt)
        } else if let output {
            // A host fault is retried after the minimum reload interval, uncharged.
            outcome = ReloadOutcome(output, at: now, configuration: configuration.scheduler)
        } else {
            outcome = .failure(reason: "no result")
        }
        scheduler.complete(completion.instanceID, with: outcome, at: now)
        stateGeneration &+= 1
        if case .success = outcome { changedTimelines.insert(completion.instanceID) }
        if let state = scheduler.instanceState(completion.instanceID) {
            let text = ReloadLine.outcome(output, outcome: outcome, state: state)
            // Written with the other completions of this turn (``finishAll(_:)``);
            // not stored, it is owed and written with the first write that
            // succeeds (until then the reload stays in flight in the file, so
            // a restart runs it again: nothing is lost either way).
            let latency = wh_monotonic_seconds() - flight.started
            let line = ReloadLine.text(
                decision: flight.decision, latency: latency, outcome: text,
                next: scheduler.plannedReload(of: completion.instanceID, at: now))
            // Logged once committed (``finishAll(_:)``): a reload in the log is in the state file.
            completionBatch.append(
                FinishedReload(
                    instanceID: completion.instanceID, kind: Self.eventKind(of: outcome), message: text,
                    line: line, ok: output?.result != nil,
                    held: Self.hold(of: completion, outcome: outcome, plugin: flight.decision.plugin)
                ))
        }
        guard let worker = workers[flight.decision.plugin], let output else { return }
        // The host's own faults (no runner, out of descriptors or memory)
        // are retried (logged with the other reloads held for the same
        // fault: ``logHeldReloads()``); they never count toward the
        // plugin's backoff or quarantine.
        if let failure = output.failure, failure.isHostFault { return }
        let failed = output.result == nil
        if let until = worker.record(
            kind: flight.decision.kind, failed: failed, at: now,
            backoff: configuration.scheduler.backoff(afterFailures:))
        {
            logger.warning(
                "kind \(flight.decision.kind) of \(worker.name) backs off until \(Timestamp.iso8601(until)) after \(worker.kindFailures[flight.decision.kind]?.count ?? 0) failed reloads in a row"
            )
        }
        if let failure = output.failure, failure.isPluginCrash, worker.state == .loaded {
            countCrash(of: worker, failure: failure, at: now)
        }
    }

    /// Why a reload was not called, and until when it is held: the cause
    /// it was completed with, or else a host fault of its call (the
    /// outcome says whether it was called); nil for a reload called.
    static func hold(of completion: Completion, outcome: ReloadOutcome, plugin: String)
        -> (cause: HoldCause, until: Double)?
    {
        guard case .notCalled(let reason, let retryAt) = outcome else { return nil }
        return (completion.notCalled?.cause ?? .hostFault(plugin: plugin, message: reason), retryAt)
    }

    /// The watch event type of a finished reload: `timeline`, `failure`,
    /// or `held` for a reload whose plugin was not called.
    static func eventKind(of outcome: ReloadOutcome) -> String {
        switch outcome {
        case .success: WatchEventType.timeline.rawValue
        case .failure, .timedOut: WatchEventType.failure.rawValue
        case .notCalled: WatchEventType.held.rawValue
        }
    }

    /// After `quarantineAfterCrashes` crashes of one file within
    /// `crashWindow` (a rolling window on CLOCK_BOOTTIME: older crashes no
    /// longer count), the plugin is quarantined until the file changes or
    /// `widgethost unquarantine` clears it.
    func countCrash(of worker: PluginWorker, failure: PluginFailure, at now: Double) {
        let policy = configuration.failurePolicy
        let crashes = worker.countCrash(at: clock.boottime(), window: policy.crashWindow)
        let limit = policy.quarantineAfterCrashes
        guard crashes >= limit else {
            logger.warning(
                "plugin \(worker.name) crashed (\(crashes) of \(limit) within \(Timestamp.duration(policy.crashWindow)) before quarantine)"
            )
            return
        }
        let reason = failure.code
        guard let file = worker.identity ?? PluginFileIdentity.of(path: worker.path) else { return }
        commit("the quarantine of \(worker.path)") { tx in
            let entry = try tx.quarantine(file, reason: reason, crashCount: crashes, at: now)
            try tx.appendEvent(
                time: now, instanceID: nil, kind: "quarantine",
                message: "\(file.path) (\(file.size) bytes): \(reason), \(entry.crashCount) crashes")
        }
        worker.identity = file
        worker.state = .quarantined
        worker.problem =
            "quarantined at \(Timestamp.iso8601(now)) after \(worker.crashes) crashes (last: \(reason)); replace the file or run `widgethost unquarantine \(worker.path)`"
        worker.stop()
        logger.error("plugin \(worker.name) quarantined after \(worker.crashes) crashes: \(failure.message)")
    }

    /// Feeds events to the scheduler and commits what they changed before
    /// the loop acts on them. Returns the instances that got a new reload
    /// request, or nil when the change could not be stored: then the
    /// scheduler is as it was before (nothing acknowledged is lost, nothing
    /// unstored is acted on). Inside ``answer(_:on:)`` the commit is left to
    /// the batch (group commit).
    ///
    /// Costs what the events touched, not the number of instances: the
    /// scheduler names the instances it changed (``ReloadScheduler/takeTouched()``).
    func apply(_ events: [SchedulerEvent], at now: Double, kind: String, message: String) -> [String]? {
        let inBatch = requestBatch != nil
        // The batch's journal (``answers(to:)``), or this change's own: what a
        // request is compared with, and the undo.
        if !inBatch { scheduler.beginJournal() }
        for event in events { scheduler.handle(event, at: now) }
        stateGeneration &+= 1
        let requested = newlyRequested(among: scheduler.takeTouched())
        if inBatch {
            requestBatch!.events.append((kind, message))
            return requested
        }
        guard commitChanges(at: now, events: [(kind, message)]) else {
            scheduler.rollBackJournal()
            return nil
        }
        scheduler.endJournal()
        return requested
    }

    /// Of the instances just touched, those whose pending request is new
    /// since the last time they were looked at in this batch (or since the
    /// batch began); remembers them as touched for the batch's commit.
    private func newlyRequested(among touched: Set<String>) -> [String] {
        var ids: [String] = []
        for id in touched {
            let current = scheduler.instanceState(id)?.request
            let previous = changes.requests[id] ?? scheduler.instanceStateBeforeJournal(id)?.request
            if let current, current != previous { ids.append(id) }
            changes.requests[id] = .some(current)
        }
        changes.touched.formUnion(touched)
        return ids.sorted()
    }

    /// Commits what the requests changed (the instances they touched, the
    /// apps and the free ledger when they differ), with one event-log line
    /// per request, in one transaction. The caller undoes on false.
    ///
    /// A request changes an instance's row only (``SchedulerEvent``s set a
    /// pending request, visibility or a location mark; ledgers, timelines and
    /// failures change when reloads are issued and completed, which write
    /// them), so only the rows are written.
    func commitChanges(
        at now: Double, events: [(kind: String, message: String)],
        also writes: [(StateTransaction) throws -> Void] = []
    ) -> Bool {
        let touched = changes.touched
        changes = PendingChanges()
        let stored = commit(events.count == 1 ? events[0].message : "\(events.count) requests") { tx in
            for id in touched.sorted() {
                if let state = scheduler.instanceState(id) { try tx.upsertRow(state) }
            }
            try tx.observe(now)
            for event in events {
                try tx.appendEvent(time: now, instanceID: nil, kind: event.kind, message: event.message)
            }
            for write in writes { try write(tx) }
        }
        if !stored { storage.dirty.formUnion(touched) }
        return stored
    }
}

/// What the requests of a batch changed in the scheduler, not yet committed.
struct PendingChanges {
    /// The instances touched so far.
    var touched: Set<String> = []
    /// The pending request of each touched instance when last looked at.
    var requests: [String: PendingRequest?] = [:]
}

/// The one log line of a reload, and the event-log text of its outcome.
enum ReloadLine {
    static func text(decision: ReloadDecision, latency: Double, outcome: String, next: PlannedReload?) -> String {
        var parts = [
            "reload \(decision.instanceID)", "reason=\(decision.trigger)", "\(decision.charge)",
            "latency=\(Timestamp.duration(latency))",
        ]
        if let allowance = decision.allowance, let used = decision.countedInWindow {
            parts.append("budget=\(used)/\(allowance)")
        }
        // A reload issued a few milliseconds after its time is not news.
        if let deferral = decision.deferral, (deferral.until ?? decision.time) - deferral.from >= 1 {
            parts.append("deferred(\(deferral))")
        }
        parts.append("outcome=" + outcome)
        if let next { parts.append("next=\(Timestamp.iso8601(next.time)) \(next.trigger)") }
        return parts.joined(separator: " ")
    }

    static func outcome(_ output: CallOutput?, outcome: ReloadOutcome, state: InstanceState) -> String {
        if let result = output?.result {
            return "ok \(result.entries.count) entries policy=\(result.policy ?? .never)"
        }
        if case .notCalled(let reason, _) = outcome {
            let code = output?.failure?.code ?? "unavailable"
            return
                "\(code) (not called: \(reason); not charged, not counted as a failure, held until \(state.backoffUntil.map(Timestamp.iso8601) ?? "-"))"
        }
        let code = output?.failure?.code ?? "failed"
        let message = output?.failure?.message ?? "no result"
        return
            "\(code) (\(message); \(state.consecutiveFailures) in a row, retry after \(state.backoffUntil.map(Timestamp.iso8601) ?? "-"))"
    }
}
