import Logging
import WidgetHostControl
import WidgetHostIsolation
import WidgetHostModel
import WidgetHostScheduler
import WidgetHostStore

/// Where an instance comes from.
public enum InstanceOrigin: String, Sendable, Hashable {
    /// The configuration file (the declarative base).
    case configuration
    /// `instances.add` at run time, kept in the state database.
    case runtime
}

extension Daemon {
    // MARK: Runtime instances at start and SIGHUP

    /// Appends the stored runtime instances to `configuration` (after the
    /// file's own). The file wins a collision: a runtime instance whose id
    /// the file now uses is not placed, and its id is returned so that the
    /// commit applying the configuration deletes it (docs/control-protocol.md).
    /// One whose plugin no longer has its kind, family or parameters is not
    /// placed and is kept, logged, for when the plugin has them again.
    static func addRuntimeInstances(
        to configuration: inout DaemonConfiguration, store: StateStore, workers: [String: PluginWorker],
        logger: Logger
    ) -> [String] {
        let records: [RuntimeInstanceRecord]
        do {
            records = try store.runtimeInstances()
        } catch {
            logger.error("runtime instances could not be read (none placed): \(error)")
            return []
        }
        let configured = Set(configuration.instances.map(\.id))
        var shadowed: [String] = []
        for record in records {
            if configured.contains(record.id) {
                logger.notice(
                    "instance \(record.id) placed at run time is now in the configuration file: the file's instance replaces it"
                )
                shadowed.append(record.id)
                continue
            }
            switch placement(of: record, configuration: configuration, workers: workers) {
            case .success(let placed): configuration.instances.append(placed.instance)
            case .failure(let error):
                logger.error(
                    "instance \(record.id) placed at run time is not placed: \(error.message); it is kept and placed again when its plugin allows"
                )
            }
        }
        return shadowed
    }

    /// Checks a runtime instance against the configuration's plugins (its
    /// kind, family and parameters when the plugin is loaded), and builds it.
    static func placement(
        of record: RuntimeInstanceRecord, configuration: DaemonConfiguration, workers: [String: PluginWorker],
        requireLoaded: Bool = false
    ) -> Result<(instance: DaemonConfiguration.Instance, widget: WidgetInstance), ControlErrorBody> {
        guard configuration.plugins.contains(where: { $0.name == record.plugin }), let worker = workers[record.plugin]
        else {
            return .failure(
                ControlErrorBody(
                    .unknownPlugin,
                    "no plugin \"\(record.plugin)\" in the configuration; plugins: \(configuration.plugins.map(\.name).joined(separator: ", "))",
                    field: "widget.plugin"))
        }
        guard let family = WidgetFamily(name: record.family) else {
            return .failure(
                ControlErrorBody(
                    .badArgument,
                    "\"\(record.family)\" is not a widget family; families: \(WidgetFamily.allCases.map(\.name).joined(separator: ", "))",
                    field: "widget.family"))
        }
        var json = JSONValue.objectText(record.configuration)
        if let description = worker.description {
            guard let kind = description.kind(record.kind) else {
                return .failure(
                    ControlErrorBody(
                        .unknownKind,
                        "plugin \(record.plugin) has no kind \"\(record.kind)\"; it has: \(description.kinds.map(\.id).joined(separator: ", "))",
                        field: "widget.kind"))
            }
            guard kind.families.contains(family) else {
                return .failure(
                    ControlErrorBody(
                        .badArgument,
                        "kind \(kind.id) does not support \(family.name); it supports: \(kind.families.map(\.name).joined(separator: ", "))",
                        field: "widget.family"))
            }
            switch ConfigurationBuilder.build(kind: kind, overrides: record.configuration) {
            case .success(let text): json = text
            case .failure(let problem):
                let names = kind.parameters.map(\.name) + record.configuration.keys.sorted()
                let name = names.first { problem.description.contains("\"\($0)\"") }
                return .failure(
                    ControlErrorBody(
                        .badArgument, problem.description,
                        field: name.map { "widget.configuration.\($0)" } ?? "widget.configuration"))
            }
        } else if requireLoaded {
            return .failure(
                ControlErrorBody(
                    .unknownPlugin,
                    "plugin \(record.plugin) is not loaded (\(worker.problem ?? worker.state.rawValue)): its kinds cannot be checked; fix the plugin first",
                    field: "widget.plugin"))
        }
        var instance = DaemonConfiguration.Instance(
            id: record.id, plugin: record.plugin, kind: record.kind, family: family, app: record.app,
            configuration: record.configuration, visible: record.visible, usesLocation: record.usesLocation,
            timeout: record.timeout, field: "runtime instance \"\(record.id)\"")
        instance.origin = .runtime
        let widget = WidgetInstance(
            id: record.id, plugin: record.plugin, kind: record.kind, family: family, configuration: json,
            app: record.app, isVisible: record.visible, usesLocation: record.usesLocation)
        return .success((instance, widget))
    }

    // MARK: Requests

    /// The stored form of a placed runtime instance.
    static func record(of instance: DaemonConfiguration.Instance) -> RuntimeInstanceRecord {
        RuntimeInstanceRecord(
            id: instance.id, plugin: instance.plugin, kind: instance.kind, family: instance.family.name,
            app: instance.app, configuration: instance.configuration, visible: instance.visible,
            usesLocation: instance.usesLocation, timeout: instance.timeout)
    }

    /// Checks the numbers and texts of a spec (``Bounds``); the message names the field.
    static func check(_ spec: InstanceSpec) -> ControlErrorBody? {
        func bad(_ field: String, _ message: String) -> ControlErrorBody {
            ControlErrorBody(.badArgument, message, field: "widget.\(field)")
        }
        if spec.id.isEmpty || spec.id.utf8.count > 256
            || spec.id.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f })
        {
            return bad("id", "\"id\" must be 1-256 bytes without control characters; got \(JSONValue.quote(spec.id))")
        }
        for (field, value) in [("plugin", spec.plugin), ("kind", spec.kind), ("app", spec.app)] {
            if let value, value.isEmpty || value.utf8.count > 1024 {
                return bad(field, "\"\(field)\" must be 1-1024 bytes; got \(JSONValue.quote(value))")
            }
        }
        if let timeout = spec.timeout {
            do {
                _ = try Bounds.callTimeout(timeout, field: "widget.timeout")
            } catch {
                return bad("timeout", error.description)
            }
        }
        if let configuration = spec.configuration, !configuration.isObject {
            return bad(
                "configuration",
                "\"configuration\" must be a JSON object of parameter values; got a \(configuration.typeName)")
        }
        return nil
    }

    /// `instances.add`: places a widget. Its first timeline is a free reload
    /// (`instanceAdded`); it is stored with the batch's commit.
    func addInstance(_ request: ControlRequest, at now: Double) -> ControlResponse {
        guard let spec = request.widget else {
            return .failure(id: request.id, .badArgument, "\"widget\" is required", field: "widget")
        }
        if let problem = Self.check(spec) { return failure(request, problem) }
        if let existing = instances[spec.id] {
            return .failure(
                id: request.id, .instanceExists,
                "an instance \"\(spec.id)\" exists (from \(existing.origin == .runtime ? "instances.add" : configuration.file)); remove it first or pick another id",
                field: "widget.id")
        }
        var missing: [String] = []
        if spec.plugin == nil { missing.append("plugin") }
        if spec.kind == nil { missing.append("kind") }
        if let first = missing.first {
            return .failure(
                id: request.id, .badArgument, "\"widget\" needs \(missing.map { "\"\($0)\"" }.joined(separator: ", "))",
                field: "widget.\(first)")
        }
        let record = RuntimeInstanceRecord(
            id: spec.id, plugin: spec.plugin!, kind: spec.kind!, family: spec.family ?? WidgetFamily.systemSmall.name,
            app: spec.app ?? "default", configuration: Self.parameters(spec.configuration),
            visible: spec.visible ?? true,
            usesLocation: spec.usesLocation ?? false, timeout: spec.timeout)
        let placed: (instance: DaemonConfiguration.Instance, widget: WidgetInstance)
        switch Self.placement(of: record, configuration: configuration, workers: workers, requireLoaded: true) {
        case .failure(let error): return failure(request, error)
        case .success(let value): placed = value
        }
        // The scheduler puts a new instance after every other, as the
        // configuration's list below: the stacks append it in place.
        let appended = scheduler.add(placed.widget, at: now)
        instanceSetChanged(appended ? .appended(id: record.id, family: placed.widget.family) : .replaced)
        instances[record.id] = placed.instance
        configuration.instances.append(placed.instance)
        let details = instanceEventDetails(placed.instance)
        requestBatch?.writes.append { tx in
            try tx.saveRuntimeInstance(record, at: now)
            try tx.appendEvent(
                time: now, instanceID: record.id, kind: WatchEventType.instanceAdded.rawValue,
                message: "placed \(record.kind) (\(record.family)) of \(record.plugin) for \(record.app)",
                data: details)
        }
        var response = ControlResponse(id: request.id)
        response.scheduled = [record.id]
        response.instance = instanceDetail(of: record.id, at: now)
        response.message = "placed \(record.id); its first timeline is on its way (a free reload: instanceAdded)"
        return response
    }

    /// `instances.remove`: removes a widget placed at run time.
    func removeInstance(_ request: ControlRequest, at now: Double) -> ControlResponse {
        let id: String
        switch runtimeInstance(request, field: "instance", id: request.instance) {
        case .failure(let error): return failure(request, error)
        case .success(let instance): id = instance.id
        }
        let removed = scheduler.remove(id)
        instanceSetChanged(removed ? .removed(id: id) : .replaced)
        instances[id] = nil
        configuration.instances.removeAll { $0.id == id }
        requestBatch?.writes.append { tx in
            try tx.removeInstance(id)
            try tx.removeRuntimeInstance(id)
            try tx.appendEvent(
                time: now, instanceID: id, kind: WatchEventType.instanceRemoved.rawValue, message: "removed")
        }
        var response = ControlResponse(id: request.id)
        response.message = "removed \(id)"
        return response
    }

    /// `instances.update`: changes a widget placed at run time. A new
    /// configuration (kind, family, parameters, app) gets one free reload, as
    /// a reconfigured widget does; the budget already used stays.
    func updateInstance(_ request: ControlRequest, at now: Double) -> ControlResponse {
        guard let spec = request.widget else {
            return .failure(id: request.id, .badArgument, "\"widget\" is required", field: "widget")
        }
        if let problem = Self.check(spec) { return failure(request, problem) }
        let current: DaemonConfiguration.Instance
        switch runtimeInstance(request, field: "widget.id", id: spec.id) {
        case .failure(let error): return failure(request, error)
        case .success(let instance): current = instance
        }
        var record = Self.record(of: current)
        record.plugin = spec.plugin ?? record.plugin
        record.kind = spec.kind ?? record.kind
        record.family = spec.family ?? record.family
        record.app = spec.app ?? record.app
        if let configuration = spec.configuration { record.configuration = Self.parameters(configuration) }
        record.usesLocation = spec.usesLocation ?? record.usesLocation
        record.timeout = spec.timeout ?? record.timeout
        let placed: (instance: DaemonConfiguration.Instance, widget: WidgetInstance)
        switch Self.placement(of: record, configuration: configuration, workers: workers, requireLoaded: true) {
        case .failure(let error): return failure(request, error)
        case .success(let value): placed = value
        }
        guard let position = scheduler.instancePosition(of: record.id) else {
            return .failure(id: request.id, .unknownInstance, "no instance \"\(record.id)\"", field: "widget.id")
        }
        var changed = placed.widget
        changed.isVisible = scheduler.isVisible(at: position)
        var instance = placed.instance
        let reconfigured = scheduler.reconfigure(record.id, as: changed, at: now)
        if reconfigured { instanceSetChanged(.reconfigured(id: record.id, family: changed.family)) }
        if let visible = spec.visible, visible != changed.isVisible {
            scheduler.handle(visible ? .instanceShown(record.id) : .instanceHidden(record.id), at: now)
        }
        instance.visible = spec.visible ?? changed.isVisible
        record.visible = instance.visible
        instances[record.id] = instance
        if let index = configuration.instances.firstIndex(where: { $0.id == record.id }) {
            configuration.instances[index] = instance
        }
        let details = instanceEventDetails(instance)
        let stored = record
        requestBatch?.writes.append { tx in
            try tx.saveRuntimeInstance(stored, at: now)
            try tx.appendEvent(
                time: now, instanceID: stored.id, kind: WatchEventType.instanceUpdated.rawValue,
                message: "changed: \(stored.kind) (\(stored.family)) of \(stored.plugin) for \(stored.app)",
                data: details)
        }
        var response = ControlResponse(id: request.id)
        response.scheduled = reconfigured ? [record.id] : []
        response.instance = instanceDetail(of: record.id, at: now)
        response.message = "changed \(record.id)"
        return response
    }

    /// The runtime instance a request names; a configuration file's instance
    /// is refused (edit the file instead).
    private func runtimeInstance(_ request: ControlRequest, field: String, id: String?) -> Result<
        DaemonConfiguration.Instance, ControlErrorBody
    > {
        guard let id, !id.isEmpty else {
            return .failure(ControlErrorBody(.badArgument, "\"\(field)\" is required", field: field))
        }
        guard let instance = instances[id] else {
            return .failure(
                ControlErrorBody(
                    .unknownInstance,
                    unknownInstanceMessage(id), field: field))
        }
        guard instance.origin == .runtime else {
            return .failure(
                ControlErrorBody(
                    .configuredInstance,
                    "instance \"\(id)\" comes from the configuration file \(configuration.file) (\(instance.field)): edit the file and send SIGHUP (`systemctl --user reload widgethost`)",
                    field: field))
        }
        return .success(instance)
    }

    private func failure(_ request: ControlRequest, _ error: ControlErrorBody) -> ControlResponse {
        .failure(id: request.id, error.code, error.message, field: error.field)
    }

    /// Parameter name → JSON text, from a configuration object.
    static func parameters(_ value: JSONValue?) -> [String: String] {
        var parameters: [String: String] = [:]
        for (name, member) in value?.objectMembers ?? [] { parameters[name] = member.compactText(limit: .max) }
        return parameters
    }

    func instanceEventDetails(_ instance: DaemonConfiguration.Instance) -> String? {
        var details = WatchEventDetails()
        details.plugin = instance.plugin
        details.kind = instance.kind
        details.family = instance.family.name
        details.app = instance.app
        details.origin = instance.origin.rawValue
        return EventLog.data(details)
    }

    // MARK: instance

    /// `instance`: one instance in full.
    func instanceDetail(of id: String, at now: Double) -> InstanceDetail? {
        guard let s = scheduler.instanceState(id) else { return nil }
        let origin = instances[id]?.origin ?? .configuration
        var detail = InstanceDetail(
            id: id, plugin: s.instance.plugin, kind: s.instance.kind, family: s.instance.family.name,
            app: s.instance.app, origin: origin.rawValue,
            configuration: (try? JSONValue.parse(s.instance.configuration)) ?? .object([]),
            visible: s.instance.isVisible)
        if let entry = scheduler.displayedEntry(of: id, at: now) {
            detail.content = (try? JSONValue.parse(entry.contentJSON)) ?? .string(entry.contentJSON)
            detail.entryDate = entry.date
            detail.entryRelevance = entry.relevance.map { EntryRelevance(score: $0.score, duration: $0.duration) }
        }
        detail.nextEntryDate = scheduler.nextEntryChange(of: id, after: now)
        detail.entries = s.timeline?.entries.count ?? 0
        detail.policy = s.timeline.map { "\($0.policy)" }
        detail.policyDue = s.policyDue
        if let explanation = scheduler.explain(id, at: now) {
            detail.budgetUsed = explanation.countedInWindow
            detail.budgetAllowance = explanation.allowance
            detail.tier = explanation.tier.rawValue
            detail.nextReload = explanation.next?.time
            detail.nextReason = explanation.next.map(Self.reason)
        }
        detail.budgetWindow = configuration.scheduler.budgetWindow
        detail.lastReload = s.lastReloadAt
        if s.consecutiveFailures > 0 {
            detail.lastOutcome = s.lastFailure?.reason ?? "failed"
        } else if s.lastReloadAt != nil && !s.isInFlight || s.timeline != nil {
            detail.lastOutcome = "ok"
        }
        detail.consecutiveFailures = s.consecutiveFailures
        detail.inFlight = s.isInFlight
        detail.relevance = scheduler.relevanceScore(of: id, at: now)
        let stack = stackRank(of: id)
        detail.stackRank = stack?.rank ?? 1
        detail.stackSize = stack?.size ?? 1
        detail.unavailable = unavailability(of: s.instance.plugin)
        return detail
    }
}
