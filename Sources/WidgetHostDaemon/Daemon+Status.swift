import WidgetHostControl
import WidgetHostModel
import WidgetHostScheduler
import WidgetHostStore

extension Daemon {
    /// Every plugin and instance at `now` (the `status` operation).
    func status(at now: Double) -> HostStatus {
        let plugins = configuration.plugins.compactMap { plugin -> PluginStatus? in
            guard let worker = workers[plugin.name] else { return nil }
            return PluginStatus(
                name: worker.name, path: worker.path, state: worker.state.rawValue,
                identifier: worker.description?.id, version: worker.description?.version,
                isolation: worker.state == .loaded ? worker.isolation : nil,
                kinds: worker.description?.kinds.map(\.id) ?? [], problem: worker.problem, crashes: worker.crashes,
                backoffUntil: worker.kindFailures.filter { $0.value.until > now }.mapValues(\.until))
        }
        let instances = scheduler.state.instances.map { s -> InstanceStatus in
            let id = s.instance.id
            let explanation = scheduler.explain(id, at: now)
            let entry = scheduler.displayedEntry(of: id, at: now)
            let shows = entry.map { (try? JSONValue.parse($0.contentJSON))?.compactText(limit: 80) ?? $0.contentJSON }
            let next = explanation?.next
            return InstanceStatus(
                id: id, plugin: s.instance.plugin, kind: s.instance.kind, family: s.instance.family.name,
                app: s.instance.app, visible: s.instance.isVisible, shows: shows, content: entry?.contentJSON,
                entryDate: entry?.date,
                policy: s.timeline.map { "\($0.policy)" }, budgetUsed: explanation?.countedInWindow ?? 0,
                budgetAllowance: explanation?.allowance ?? 0, tier: explanation?.tier.rawValue ?? "",
                nextReload: next?.time, nextReason: next.map(Self.reason), inFlight: s.inFlight != nil,
                lastReload: s.lastReloadAt, lastFailure: s.lastFailure?.reason,
                consecutiveFailures: s.consecutiveFailures, unavailable: unavailability(of: s.instance.plugin))
        }
        let quarantined = ((try? store.quarantined()) ?? []).map {
            QuarantinedPlugin(
                path: $0.file.path, size: $0.file.size, mtime: $0.file.mtime, reason: $0.reason, since: $0.since,
                crashes: $0.crashCount)
        }
        var status = HostStatus(time: now, plugins: plugins, instances: instances, quarantined: quarantined)
        status.storageProblem = storage.fault.map { "unavailable since \(Timestamp.iso8601(storage.since)): \($0)" }
        return status
    }

    /// Why an instance has or has not reloaded (the `explain` operation).
    func explanation(of id: String, at now: Double) -> InstanceExplanation? {
        guard let explanation = scheduler.explain(id, at: now), let s = scheduler.instanceState(id) else { return nil }
        var text = explanation.description
        let unavailable = unavailability(of: s.instance.plugin)
        if let unavailable { text += "\n  plugin \(s.instance.plugin) cannot be called: \(unavailable)" }
        if let worker = workers[s.instance.plugin], let until = worker.backoff(of: s.instance.kind, at: now) {
            text +=
                "\n  kind \(s.instance.kind) backs off until \(Timestamp.iso8601(until)) (\(Timestamp.relative(until, to: now))) after \(worker.kindFailures[s.instance.kind]?.count ?? 0) failed reloads in a row; its due reloads fail without calling the plugin until then"
        }
        if let worker = workers[s.instance.plugin], worker.crashes > 0, worker.state == .loaded {
            text +=
                "\n  plugin \(worker.name) crashed \(worker.crashes) times; quarantined at \(configuration.failurePolicy.quarantineAfterCrashes)"
        }
        return InstanceExplanation(
            instance: id, text: text, time: now, budgetUsed: explanation.countedInWindow,
            budgetAllowance: explanation.allowance, budgetAvailableAt: explanation.budgetAvailableAt,
            spacingAvailableAt: explanation.spacingAvailableAt, policyDue: explanation.policyDue,
            backoffUntil: explanation.backoffUntil, nextReload: explanation.next?.time,
            nextReason: explanation.next.map(Self.reason), unavailable: unavailable)
    }

    /// Why the plugin's instances cannot reload, or nil when they can.
    func unavailability(of plugin: String) -> String? {
        guard let worker = workers[plugin] else { return "plugin \(plugin) is not configured" }
        switch worker.state {
        case .loaded: return nil
        case .failed: return "the plugin failed to load: \(worker.problem ?? "unknown error")"
        case .quarantined: return worker.problem ?? "quarantined"
        }
    }

    static func reason(_ plan: PlannedReload) -> String {
        var text = "\(plan.trigger), \(plan.charge)"
        if let deferral = plan.deferral { text += ", deferred (\(deferral))" }
        return text
    }
}
