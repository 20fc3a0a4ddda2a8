import WidgetHostControl
import WidgetHostModel
import WidgetHostScheduler
import WidgetHostStore

extension Daemon {
    /// The `status` operation at `now`: every plugin (and whether its file
    /// changed since it was loaded), the summary, and one
    /// page of instances in configuration order: at most `limit`, after the
    /// cursor `after`, only `only` when given, and never more than
    /// ``ControlProtocol/statusPageBytes`` of them (an instance whose
    /// content alone is larger is sent without `content`). `nextCursor` is
    /// set when more follow. Only the page's instances are computed, so a
    /// page costs the same with 100 or 100,000 instances.
    func status(at now: Double, limit: Int?, after: String?, only: [String]?) -> Result<HostStatus, ControlErrorBody> {
        let pageSize = limit ?? ControlProtocol.defaultStatusPage
        guard (1...10_000).contains(pageSize) else {
            return .failure(ControlErrorBody(.badArgument, "\"limit\" must be from 1 to 10000; got \(pageSize)"))
        }
        let boottime = clock.boottime()
        let window = configuration.failurePolicy.crashWindow
        let plugins = configuration.plugins.compactMap { plugin -> PluginStatus? in
            guard let worker = workers[plugin.name] else { return nil }
            var entry = PluginStatus(
                name: worker.name, path: worker.path, state: worker.state.rawValue,
                identifier: worker.description?.id, version: worker.description?.version,
                isolation: worker.state == .loaded ? worker.isolation : nil,
                kinds: worker.description?.kinds.map(\.id) ?? [], problem: worker.problem,
                crashes: worker.crashes(within: window, at: boottime),
                backoffUntil: worker.kindFailures.filter { $0.value.until > now }.mapValues(\.until))
            // One stat per plugin (never a read of the file): what was
            // loaded is reported as such once the file is replaced.
            if worker.fileChanged { entry.fileChanged = true }
            if worker.isCalling { entry.calling = true }
            return entry
        }
        let count = scheduler.instanceCount
        var start = 0
        if let after {
            guard let index = scheduler.instancePosition(of: after) else {
                return .failure(
                    ControlErrorBody(
                        .badArgument, "\"after\": no instance \"\(after)\" (it was removed?); start again without it"))
            }
            start = index + 1
        }
        // The instances asked for, by position: a few looked up, not a scan of all.
        var chosen: [Int]?
        if let only {
            var positions: [Int] = []
            for id in only {
                guard let position = scheduler.instancePosition(of: id) else {
                    return .failure(ControlErrorBody(.unknownInstance, "no instance \"\(id)\""))
                }
                if position >= start { positions.append(position) }
            }
            chosen = Array(Set(positions)).sorted()
        }
        let summary = statusSummary()
        var page: [InstanceStatus] = []
        var bytes = 0
        var next: String?
        var cursor = 0
        var index = start
        while true {
            if let chosen {
                guard cursor < chosen.count else { break }
                index = chosen[cursor]
                cursor += 1
            } else {
                guard index < count else { break }
            }
            let s = scheduler.instanceState(at: index)
            index += 1
            if page.count == pageSize {
                next = page.last?.id
                break
            }
            var entry = instanceStatus(s, at: now)
            var size = (try? ControlCoding.encode(entry).count) ?? 0
            if size > ControlProtocol.statusPageBytes / 2 {
                entry.content = nil  // `shows` still has its start
                size = (try? ControlCoding.encode(entry).count) ?? 0
            }
            if !page.isEmpty && bytes + size > ControlProtocol.statusPageBytes {
                next = page.last?.id
                break
            }
            page.append(entry)
            bytes += size
        }
        let quarantined = ((try? store.quarantined()) ?? []).map {
            QuarantinedPlugin(
                path: $0.file.path, size: $0.file.size, mtime: $0.file.mtime, reason: $0.reason, since: $0.since,
                crashes: $0.crashCount)
        }
        var status = HostStatus(time: now, plugins: plugins, instances: page, quarantined: quarantined)
        status.storageProblem = storage.fault.map { "unavailable since \(Timestamp.iso8601(storage.since)): \($0)" }
        status.summary = summary
        status.nextCursor = next
        return .success(status)
    }

    /// The kinds of the placed instances: of `app`, or of every app when
    /// nil (from a map rebuilt only when the instances change, for `reload`).
    func kindsInUse(app: String?) -> Set<String> {
        let use = instanceUse()
        guard let app else { return use.allKinds }
        return use.kindsByApp[app] ?? []
    }

    /// The apps that have placed instances, sorted.
    func appsInUse() -> [String] { instanceUse().kindsByApp.keys.sorted() }

    func instanceUse() -> InstanceUse {
        if let cached = usage, cached.generation == instanceSetGeneration { return cached }
        var use = InstanceUse(generation: instanceSetGeneration)
        scheduler.forEachInstance { _, instance in
            use.kindsByApp[instance.app, default: []].insert(instance.kind)
            use.allKinds.insert(instance.kind)
            use.instancesByPlugin[instance.plugin, default: 0] += 1
        }
        usage = use
        return use
    }

    /// The counts of `status`'s summary: one pass over the instances per
    /// change of state (``stateGeneration``),
    /// then served from memory; the unavailable count from the instances
    /// per plugin (counted when the instances change) and the plugins' states.
    func statusSummary() -> StatusSummary {
        if summaryCache?.generation != stateGeneration {
            summaryCache = (stateGeneration, scheduler.instanceCounts())
        }
        let counts = summaryCache!.counts
        var unavailable = 0
        for (plugin, count) in instanceUse().instancesByPlugin where unavailability(of: plugin) != nil {
            unavailable += count
        }
        return StatusSummary(
            instances: counts.instances, visible: counts.visible, inFlight: counts.inFlight,
            failing: counts.failing, unavailable: unavailable)
    }

    /// One instance as `status` shows it.
    func instanceStatus(_ s: InstanceState, at now: Double) -> InstanceStatus {
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
            nextReload: next?.time, nextReason: next.map(Self.reason), inFlight: s.isInFlight,
            lastReload: s.lastReloadAt, lastFailure: s.lastFailure?.reason,
            consecutiveFailures: s.consecutiveFailures, unavailable: unavailability(of: s.instance.plugin))
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
        let policy = configuration.failurePolicy
        if let worker = workers[s.instance.plugin], worker.state == .loaded {
            let crashes = worker.crashes(within: policy.crashWindow, at: clock.boottime())
            if crashes > 0 {
                text +=
                    "\n  plugin \(worker.name) crashed \(crashes) times in the last \(Timestamp.duration(policy.crashWindow)); quarantined at \(policy.quarantineAfterCrashes) within that window"
            }
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
        case .loading: return "the plugin is loading; its due reloads wait for it"
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

/// The counts behind `status`'s summary.
/// Which kinds each app has placed (``Daemon/kindsInUse(app:)``).
struct InstanceUse {
    /// ``Daemon/instanceSetGeneration`` when it was counted.
    var generation: Int
    var kindsByApp: [String: Set<String>] = [:]
    var allKinds: Set<String> = []
    var instancesByPlugin: [String: Int] = [:]
}
