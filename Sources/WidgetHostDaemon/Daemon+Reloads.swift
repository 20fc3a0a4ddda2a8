import CWidgetHostSupport
import WidgetHostIsolation
import WidgetHostModel
import WidgetHostScheduler
import WidgetHostStore

extension Daemon {
    /// Issues every reload due at `now`: commits the decision (ledger,
    /// in-flight mark, event), then hands the call to the plugin's queue.
    ///
    /// Every decision due at `now` is committed in one transaction (group
    /// commit: one `synchronous=FULL` sync for the lot) before any call is
    /// made. When the store cannot take it, the scheduler is put back as it
    /// was: nothing is issued that could not be stored.
    func issueDueReloads(at now: Double) {
        let before = scheduler
        let decisions = scheduler.dueReloads(at: now).flatMap(\.decisions)
        guard !decisions.isEmpty else { return }
        let states = decisions.compactMap { scheduler.instanceState($0.instanceID) }
        let freeLedger = scheduler.state.freeLedger
        let stored = commit("\(decisions.count) reloads issued") { tx in
            for state in states { try tx.upsert(state) }
            try tx.replaceFreeLedger(freeLedger)
            try tx.observe(now)
            for decision in decisions {
                try tx.appendEvent(
                    time: decision.time, instanceID: decision.instanceID, kind: "reload",
                    message: decision.description, data: watchDetails(of: decision))
            }
        }
        guard stored else {
            scheduler = before
            return
        }
        for decision in decisions {
            guard scheduler.instanceState(decision.instanceID) != nil else { continue }
            inFlight[decision.instanceID] = (wh_monotonic_seconds(), decision)
            guard let instance = instances[decision.instanceID], let worker = available(decision.plugin),
                let description = worker.description
            else {
                let problem =
                    "plugin \(decision.plugin) cannot be called: \(workers[decision.plugin]?.problem ?? "it is not configured")"
                finish(Completion(instanceID: decision.instanceID, output: nil, unavailable: problem))
                continue
            }
            if let until = worker.backoff(of: instance.kind, at: now) {
                let count = worker.kindFailures[instance.kind]?.count ?? 0
                let problem =
                    "kind \(instance.kind) is backing off until \(Timestamp.iso8601(until)) after \(count) failed reloads in a row"
                finish(Completion(instanceID: decision.instanceID, output: nil, unavailable: problem))
                continue
            }
            let call = PluginCall(
                .timeline, kind: instance.kind, family: instance.family, now: now, timeout: instance.timeout,
                configuration: instance.configuration, dataDirectory: worker.dataDirectory,
                allowNetwork: description.kind(instance.kind)?.needsNetwork ?? false)
            let mailbox = completions
            let id = decision.instanceID
            worker.submit(call) { output in
                mailbox.post(Completion(instanceID: id, output: output, unavailable: nil))
            }
        }
        // Reloads that failed at once (plugin unavailable, kind backing off) are committed together.
        finishAll([])
    }

    /// The worker of `plugin` if it can take calls. A quarantined or failed
    /// plugin whose file changed since is loaded again first.
    func available(_ plugin: String) -> PluginWorker? {
        guard let worker = workers[plugin] else { return nil }
        if worker.state != .loaded, PluginFileIdentity.of(path: worker.path) != worker.identity {
            logger.notice("plugin \(plugin): the file changed; loading it again")
            worker.load()
            if worker.state == .loaded {
                note(kind: "plugin", message: "\(plugin) loaded again after its file changed")
            }
        }
        return worker.state == .loaded ? worker : nil
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
            for entry in batch { logger.warning("\(entry.line) (not stored yet: the state file takes no writes)") }
            return
        }
        let now = clock.now()
        let sample = clock.sample()
        let states = ids.sorted().compactMap { scheduler.instanceState($0) }
        let stored = commit(
            batch.count == 1 ? "the end of the reload of \(batch[0].instanceID)" : "\(batch.count) reloads ended"
        ) { tx in
            for state in states { try tx.upsert(state) }
            try tx.observe(now)
            try tx.recordClockSample(sample)
            for entry in batch {
                try tx.appendEvent(
                    time: now, instanceID: entry.instanceID, kind: entry.kind, message: entry.message,
                    data: watchDetails(ofCompletion: entry.instanceID))
            }
        }
        if !stored { storage.dirty.formUnion(ids) }
        for entry in batch {
            let line = stored ? entry.line : entry.line + " (not stored yet: the state file takes no writes)"
            if entry.ok && stored { logger.info("\(line)") } else { logger.warning("\(line)") }
        }
    }

    /// A reload ended: completes it in the scheduler, queues its commit,
    /// logs one line, and counts crashes toward quarantine.
    func finish(_ completion: Completion) {
        let now = clock.now()
        guard let flight = inFlight.removeValue(forKey: completion.instanceID) else { return }
        let output = completion.output
        let outcome: ReloadOutcome
        if let result = output?.result {
            outcome = .success(result.timeline)
        } else if case .timedOut? = output?.failure?.reason {
            outcome = .timedOut
        } else {
            outcome = .failure(reason: output?.failure?.message ?? completion.unavailable ?? "no result")
        }
        scheduler.complete(completion.instanceID, with: outcome, at: now)
        if let state = scheduler.instanceState(completion.instanceID) {
            let text = ReloadLine.outcome(output, unavailable: completion.unavailable, state: state)
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
                (
                    completion.instanceID, kind: output?.result == nil ? "failure" : "timeline", message: text,
                    line: line, ok: output?.result != nil
                ))
        }
        guard let worker = workers[flight.decision.plugin], let output else { return }
        // The host's own faults (no runner, out of descriptors or memory)
        // are logged and retried; they never count toward the plugin's
        // backoff or quarantine.
        if let failure = output.failure, failure.isHostFault {
            logger.error(
                "host fault calling \(worker.name): \(failure.message); retried, not counted against the plugin")
            return
        }
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

    /// After `quarantineAfterCrashes` crashes of one file, the plugin is
    /// quarantined until the file changes or `widgethost unquarantine` clears it.
    func countCrash(of worker: PluginWorker, failure: PluginFailure, at now: Double) {
        worker.crashes += 1
        let limit = configuration.failurePolicy.quarantineAfterCrashes
        guard worker.crashes >= limit else {
            logger.warning("plugin \(worker.name) crashed (\(worker.crashes) of \(limit) before quarantine)")
            return
        }
        let reason = failure.code
        guard let file = worker.identity ?? PluginFileIdentity.of(path: worker.path) else { return }
        let crashes = worker.crashes
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
    func apply(_ events: [SchedulerEvent], at now: Double, kind: String, message: String) -> [String]? {
        let saved = scheduler
        let before = scheduler.state
        for event in events { scheduler.handle(event, at: now) }
        if requestBatch != nil {
            requestBatch!.events.append((kind, message))
            return requested(since: before)
        }
        guard commitChanges(since: before, at: now, events: [(kind, message)]) else {
            scheduler = saved
            return nil
        }
        return requested(since: before)
    }

    /// Commits the instances, apps and free ledger that differ from `before`,
    /// with one event-log line per change, in one transaction.
    func commitChanges(
        since before: SchedulerState, at now: Double, events: [(kind: String, message: String)],
        also writes: [(StateTransaction) throws -> Void] = []
    ) -> Bool {
        let after = scheduler.state
        let changed = changedInstances(since: before)
        return commit(events.count == 1 ? events[0].message : "\(events.count) requests") { tx in
            for s in changed { try tx.upsert(s) }
            if before.apps != after.apps { try tx.replaceApps(after.apps) }
            if before.freeLedger != after.freeLedger { try tx.replaceFreeLedger(after.freeLedger) }
            try tx.observe(now)
            for event in events {
                try tx.appendEvent(time: now, instanceID: nil, kind: event.kind, message: event.message)
            }
            for write in writes { try write(tx) }
        }
    }
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

    static func outcome(_ output: CallOutput?, unavailable: String?, state: InstanceState) -> String {
        if let result = output?.result {
            return "ok \(result.entries.count) entries policy=\(result.policy ?? .never)"
        }
        let code = output?.failure?.code ?? (unavailable == nil ? "failed" : "unavailable")
        let message = output?.failure?.message ?? unavailable ?? "no result"
        return
            "\(code) (\(message); \(state.consecutiveFailures) in a row, retry after \(state.backoffUntil.map(Timestamp.iso8601) ?? "-"))"
    }
}
