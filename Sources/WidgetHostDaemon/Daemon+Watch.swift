import WidgetHostControl
import WidgetHostModel
import WidgetHostScheduler
import WidgetHostStore

/// What the loop keeps for the event stream: which commits have events to
/// publish, and the `entry` events not yet written.
struct WatchState {
    /// A commit may have written events since the last publish.
    var committed = true
    /// The scores and stack tops were made.
    var primed = false
    /// The instances whose displayed entry became current at its date and
    /// whose `entry` event is not written yet: the store took no writes, or
    /// the scheduler was rebuilt before the event was written. The
    /// scheduler finds the entries that became current
    /// (``ReloadScheduler/takeDisplayChanges(into:causes:)``); these are
    /// only what waits to be written.
    var pendingEntries: Set<String> = []
    /// Positions taken from the scheduler, kept to be filled again.
    var entryChanges: [Int] = []
    /// When the event stream began: entries that became current before
    /// (while the daemon was not running) get no `entry` event.
    var since = -Double.infinity
    /// The stacks, with each instance's relevance score in force as last
    /// published, and each stack's top (``stackTopSize`` instances), to
    /// tell when an order changes.
    var stacks = StackIndex()
    var stackTops: [WidgetFamily: [String]] = [:]
    static let stackTopSize = 10
}

extension Daemon {
    /// Once per turn of the loop, before it sleeps: writes an `entry` event
    /// for each instance whose displayed entry changed at its date, publishes
    /// what was committed to the subscribers, and moves the waiting events
    /// of each watching connection to its output. Never blocks.
    func serviceWatch() {
        let now = clock.now()
        if !watch.primed {
            primeScores(at: now)
            for family in watch.stacks.families {
                watch.stackTops[family] = stackTop(of: family)
            }
            watch.primed = true
        }
        // While the store takes no writes the entries that became current
        // stay with the scheduler (or pending here): their events are
        // written once it is back, none is dropped.
        if storage.isAvailable { writeEntryEvents(at: now) }
        // A second round publishes the `stack` events the first one wrote
        // (they change no order themselves), so nothing waits for the next wakeup.
        while watch.committed {
            watch.committed = false
            var touched: Set<WidgetFamily> = []
            let published = events.publishCommitted()
            if !published.isEmpty { refreshStacks() }
            for event in published {
                if event.type == WatchEventType.configuration.rawValue {
                    // SIGHUP placed and removed instances without events of their own.
                    touched.formUnion(WidgetFamily.allCases)
                }
                guard let id = event.instance else { continue }
                switch WatchEventType(rawValue: event.type) {
                case .timeline?, .instanceAdded?, .instanceUpdated?, .entry?:
                    // A new timeline has its own event: an `entry` event
                    // still waiting would tell of an entry no longer shown.
                    if event.type != WatchEventType.entry.rawValue { watch.pendingEntries.remove(id) }
                    let score = scheduler.relevanceScore(of: id, at: now)
                    // Only a changed score, or a new or changed instance, can change an order.
                    let placed =
                        event.type == WatchEventType.instanceAdded.rawValue
                        || event.type == WatchEventType.instanceUpdated.rawValue
                    if (watch.stacks.score(of: id) ?? 0) != score || placed,
                        let family = watch.stacks.family(of: id)
                    {
                        watch.stacks.setScore(score, of: id)
                        touched.insert(family)
                        // A changed instance may have left another stack.
                        if event.type == WatchEventType.instanceUpdated.rawValue {
                            touched.formUnion(watch.stackTops.keys)
                        }
                    }
                case .instanceRemoved?:
                    watch.pendingEntries.remove(id)
                    touched.formUnion(watch.stackTops.keys)
                default: break
                }
            }
            noteStackOrders(touched, at: now)
        }
        server?.deliverWatchEvents()
    }

    /// Writes an `entry` event for each instance whose displayed entry
    /// became current at its date since the last call (the scheduler's
    /// display changes caused by an entry's date), and for those pending.
    /// What the store does not take stays pending.
    func writeEntryEvents(at now: Double) {
        takeEntryChanges()
        guard !watch.pendingEntries.isEmpty else { return }
        var rows: [(id: String, message: String, data: String?)] = []
        for id in watch.pendingEntries.sorted() {
            guard let entry = scheduler.displayedEntry(of: id, at: now), entry.date >= watch.since else { continue }
            var details = WatchEventDetails()
            details.entryDate = entry.date
            details.nextEntryDate = scheduler.nextEntryChange(of: id, after: now)
            details.relevance = scheduler.relevanceScore(of: id, at: now)
            rows.append((id, "the entry of \(Timestamp.iso8601(entry.date)) is now displayed", EventLog.data(details)))
        }
        let stored =
            rows.isEmpty
            || commit("\(rows.count) entries became current") { tx in
                for row in rows {
                    try tx.appendEvent(
                        time: now, instanceID: row.id, kind: WatchEventType.entry.rawValue, message: row.message,
                        data: row.data)
                }
            }
        // Not stored: written when the store is back.
        if stored { watch.pendingEntries = [] }
    }

    /// Moves the instances whose displayed entry became current at its
    /// date, as the scheduler found them, to ``WatchState/pendingEntries``:
    /// before the scheduler is replaced (its positions name its own
    /// instances), and before each write.
    func takeEntryChanges() {
        watch.entryChanges.removeAll(keepingCapacity: true)
        scheduler.takeDisplayChanges(into: &watch.entryChanges, causes: .entryDate)
        for position in watch.entryChanges { watch.pendingEntries.insert(scheduler.instance(at: position).id) }
    }

    /// The first instances of a stack by relevance (the scores last published).
    func stackTop(of family: WidgetFamily) -> [String] {
        refreshStacks()
        return watch.stacks.top(of: family, count: WatchState.stackTopSize)
    }

    /// Writes a `stack` event for each of `families` whose top changed.
    func noteStackOrders(_ families: Set<WidgetFamily>, at now: Double) {
        var rows: [(id: String, message: String, data: String?)] = []
        for family in families.sorted(by: { $0.rawValue < $1.rawValue }) {
            let top = stackTop(of: family)
            guard top != watch.stackTops[family] ?? [] else { continue }
            watch.stackTops[family] = top
            guard let first = top.first else { continue }
            var details = WatchEventDetails()
            details.family = family.name
            details.order = top
            details.relevance = watch.stacks.score(of: first) ?? 0
            rows.append(
                (
                    first, "\(family.name) stack: \(first) on top (relevance \(details.relevance ?? 0))",
                    EventLog.data(details)
                ))
        }
        guard !rows.isEmpty, storage.isAvailable else { return }
        commit("the order of \(rows.count) stacks") { tx in
            for row in rows {
                try tx.appendEvent(
                    time: now, instanceID: row.id, kind: WatchEventType.stack.rawValue, message: row.message,
                    data: row.data)
            }
        }
    }

    /// The details of a `reload` event (a reload started).
    func watchDetails(of decision: ReloadDecision) -> String? {
        var details = WatchEventDetails()
        details.reason = Self.reasonName(decision.trigger)
        details.counted = decision.charge.isCounted
        details.charge = "\(decision.charge)"
        if let explanation = scheduler.explain(decision.instanceID, at: decision.time) {
            details.budgetUsed = explanation.countedInWindow
            details.budgetAllowance = explanation.allowance
        }
        details.plugin = decision.plugin
        details.kind = decision.kind
        return EventLog.data(details)
    }

    /// The details of a finished reload's event (`timeline`, `failure` or
    /// `held`): the stored timeline, or the failure, or why the plugin was
    /// not called (`held`).
    func watchDetails(ofCompletion id: String, held: String? = nil) -> String? {
        guard let s = scheduler.instanceState(id) else { return nil }
        let now = clock.now()
        var details = WatchEventDetails()
        if let held {
            details.outcome = held
        } else if s.consecutiveFailures > 0, let failure = s.lastFailure {
            details.outcome = failure.reason
        } else {
            details.outcome = "ok"
        }
        if let timeline = s.timeline {
            details.entries = timeline.entries.count
            details.entryDate = timeline.entry(at: now)?.date
            details.nextEntryDate = scheduler.nextEntryChange(of: id, after: now)
            details.policy = "\(timeline.policy)"
            details.relevance = scheduler.relevanceScore(of: id, at: now)
        }
        if let explanation = scheduler.explain(id, at: now) {
            details.budgetUsed = explanation.countedInWindow
            details.budgetAllowance = explanation.allowance
        }
        return EventLog.data(details)
    }

    /// The short name of a reload's reason, as the watch stream and `instance` give it.
    static func reasonName(_ trigger: ReloadTrigger) -> String {
        switch trigger {
        case .added: "instanceAdded"
        case .policy: "policy"
        case .reloadTimelines: "reloadTimelines"
        case .reloadAllTimelines: "reloadAllTimelines"
        case .appIntent: "appIntent"
        case .systemChange(let change): "systemChange(\(change.rawValue))"
        case .significantLocationChange: "significantLocationChange"
        case .push: "push"
        }
    }

    /// Answers `watch`: subscribes the connection to the event log, from
    /// after `lastEventId` when given.
    func startWatch(_ request: ControlRequest, connection: Int32) -> ControlResponse {
        if let last = request.lastEventId {
            do {
                _ = try Bounds.integer(Double(last), in: 0...Int(Bounds.largestExactInteger), field: "lastEventId")
            } catch {
                return .failure(
                    id: request.id, .badArgument, "\(error.description) (the id of the last event seen)",
                    field: "lastEventId")
            }
        }
        let subscription: EventSubscription
        do {
            subscription = try events.subscribe(after: request.lastEventId, instances: request.instances.map(Set.init))
        } catch {
            return .failure(id: request.id, .storageUnavailable, "the event log cannot be read: \(error)")
        }
        guard let server, server.watch(connection, subscription, id: request.id, version: request.v) else {
            subscription.cancel()
            return .failure(id: request.id, .internalError, "the connection closed")
        }
        var response = ControlResponse(id: request.id)
        response.watch = subscription.start
        return response
    }
}
