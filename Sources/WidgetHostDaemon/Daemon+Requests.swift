import WidgetHostControl
import WidgetHostModel
import WidgetHostScheduler
import WidgetHostStore

#if canImport(Glibc)
    import Glibc
#endif

/// The changes made by the requests of one turn of the loop, committed together.
struct RequestBatch {
    var events: [(kind: String, message: String)] = []
    /// Further writes of the batch's requests (runtime instances and their events).
    var writes: [(StateTransaction) throws -> Void] = []
    /// Changes so far (events and writes), to tell which requests changed something.
    var count: Int { events.count + writes.count }
}

extension Daemon {
    /// Answers the requests read in one turn of the loop with one commit
    /// (group commit: one `synchronous=FULL` transaction for every change
    /// they made), then sends the answers, so an `ok` is never sent before
    /// its change is on disk. When the commit fails, every change of the
    /// batch is undone and the requests that made one are answered
    /// `storage-unavailable`.
    func answer(_ incoming: [ControlServer.Incoming], on server: ControlServer) {
        for answer in answers(to: incoming) { server.reply(to: answer.connection, with: answer.response) }
    }

    /// ``answer(_:on:)`` without the sending: the web dashboard's requests take this same path.
    func answers(to incoming: [ControlServer.Incoming]) -> [(connection: Int32, response: ControlResponse)] {
        scheduler.beginJournal()
        let savedConfiguration = configuration
        let savedInstances = instances
        requestBatch = RequestBatch()
        var answers: [(connection: Int32, response: ControlResponse, changed: Bool)] = []
        for request in incoming {
            let changes = requestBatch?.count ?? 0
            let response = respond(to: request)
            answers.append((request.connection, response, (requestBatch?.count ?? 0) > changes))
        }
        let batch = requestBatch ?? RequestBatch()
        requestBatch = nil
        if batch.count > 0 && !commitChanges(at: clock.now(), events: batch.events, also: batch.writes) {
            scheduler.rollBackJournal()
            configuration = savedConfiguration
            instances = savedInstances
            // An instance placed or removed is undone too: what was counted
            // of the instances (apps and kinds in use, the stacks) is made again.
            instanceSetChanged(.replaced)
            answers = answers.map {
                $0.changed ? ($0.connection, storageUnavailable(id: $0.response.id), true) : $0
            }
        } else {
            scheduler.endJournal()
        }
        return answers.map { ($0.connection, $0.response) }
    }

    /// Answers one control request. Never throws: a bad request gets an error
    /// response and the daemon goes on.
    func respond(to incoming: ControlServer.Incoming) -> ControlResponse {
        switch incoming.request {
        case .failure(let error):
            var response = ControlResponse(id: incoming.id, ok: false)
            response.error = error
            return response
        case .success(let request):
            guard ControlProtocol.supportedVersions.contains(request.v) else {
                return .failure(
                    id: request.id, .unsupportedVersion,
                    "protocol version \(request.v) is not supported; this daemon speaks \(ControlProtocol.supportedVersions)"
                )
            }
            // The answer speaks the request's version.
            var response = answer(request, on: incoming.connection)
            response.v = request.v
            return response
        }
    }

    private func answer(_ request: ControlRequest, on connection: Int32) -> ControlResponse {
        let known = ControlOperation.allCases.filter { $0.since <= request.v }
        guard let operation = ControlOperation(rawValue: request.op), operation.since <= request.v else {
            return .failure(
                id: request.id, .unknownOperation,
                "unknown operation \"\(request.op)\" in protocol version \(request.v)\(ControlOperation(rawValue: request.op).map { " (it needs version \($0.since))" } ?? ""); known: \(known.map(\.rawValue).joined(separator: ", "))"
            )
        }
        if server?.isWatching(connection) == true {
            return .failure(
                id: request.id, .badRequest,
                "this connection is watching (it carries events only); send requests on another connection")
        }
        if stopping && operation != .hello && operation != .status && operation != .instance {
            return .failure(id: request.id, .shuttingDown, "the daemon is shutting down")
        }
        switch operation {
        case .watch: return startWatch(request, connection: connection)
        case .instancesAdd: return addInstance(request, at: clock.now())
        case .instancesRemove: return removeInstance(request, at: clock.now())
        case .instancesUpdate: return updateInstance(request, at: clock.now())
        case .push: return push(request, at: clock.now())
        case .instance:
            guard let id = request.instance, !id.isEmpty else {
                return .failure(id: request.id, .badArgument, "\"instance\" is required", field: "instance")
            }
            guard let detail = instanceDetail(of: id, at: clock.now()) else {
                return .failure(
                    id: request.id, .unknownInstance,
                    unknownInstanceMessage(id), field: "instance")
            }
            var response = ControlResponse(id: request.id)
            response.instance = detail
            return response
        default: return perform(operation, request)
        }
    }

    /// The answer for an id no instance has: how many there are and the
    /// ten nearest ids (``nearest(to:in:count:)``), not every id (at
    /// 100,000 instances that line would pass the clients' 4 MiB limit).
    func unknownInstanceMessage(_ id: String) -> String {
        let ids = scheduler.instanceIDs
        guard !ids.isEmpty else { return "no instance \"\(id)\": the daemon has none" }
        let names = Self.nearest(to: id, in: ids).sorted().joined(separator: ", ")
        return "no instance \"\(id)\" (of \(ids.count)\(ids.count > 10 ? "; the nearest" : "")): \(names)"
    }

    /// The `count` ids of `ids` with the most leading bytes in common with
    /// `id` (ties in order of id), nearest first; one pass over `ids`.
    static func nearest(to id: String, in ids: [String], count: Int = 10) -> [String] {
        let wanted = Array(id.utf8)
        /// More leading bytes in common first, then in order of id.
        func before(_ a: (shared: Int, id: String), _ b: (shared: Int, id: String)) -> Bool {
            a.shared != b.shared ? a.shared > b.shared : a.id < b.id
        }
        var nearest: [(shared: Int, id: String)] = []
        for other in ids {
            let candidate = (shared: zip(wanted, other.utf8).prefix { $0 == $1 }.count, id: other)
            guard nearest.count < count || before(candidate, nearest[nearest.count - 1]) else { continue }
            nearest.append(candidate)
            nearest.sort(by: before)
            if nearest.count > count { nearest.removeLast() }
        }
        return nearest.map(\.id)
    }

    private func perform(_ operation: ControlOperation, _ request: ControlRequest) -> ControlResponse {
        var response = ControlResponse(id: request.id)
        let now = clock.now()
        func fail(_ code: ControlErrorCode, _ message: String) -> ControlResponse {
            .failure(id: request.id, code, message)
        }
        func instance() -> Result<String, ControlErrorBody> {
            guard let id = request.instance, !id.isEmpty else {
                return .failure(ControlErrorBody(.badArgument, "\"instance\" is required"))
            }
            guard scheduler.instanceState(id) != nil else {
                return .failure(
                    ControlErrorBody(
                        .unknownInstance, unknownInstanceMessage(id)))
            }
            return .success(id)
        }
        switch operation {
        case .hello:
            response.server = ServerInfo(
                name: "widgethost 0.1.0", protocolVersions: ControlProtocol.supportedVersions, pid: getpid(),
                configuration: configuration.file, state: options.statePath, startedAt: startedAt)
        case .reload:
            let apps = request.app.map { [$0] } ?? appsInUse()
            let events: [SchedulerEvent]
            if let kind = request.kind {
                // A kind no plugin declares is a mistake (a typo); a declared kind the
                // app has no placed widget of is not (as in WidgetKit, the app cannot
                // know what the user placed): the message says so.
                var declared = kindsInUse(app: nil)
                for worker in workers.values { declared.formUnion(worker.description?.kinds.map(\.id) ?? []) }
                guard declared.contains(kind) else {
                    return fail(
                        .unknownKind,
                        "no plugin declares kind \"\(kind)\"; kinds: \(declared.sorted().joined(separator: ", "))")
                }
                let used = kindsInUse(app: request.app)
                if !used.contains(kind) {
                    let kinds = used.sorted()
                    let whose = request.app.map { "app \($0) has" } ?? "there is"
                    response.message =
                        "\(whose) no instance of kind \"\(kind)\"; \(request.app == nil ? "kinds in use" : "its kinds"): \(kinds.isEmpty ? "none" : kinds.joined(separator: ", "))"
                }
                events = apps.map { .reloadTimelines(ofKind: kind, app: $0) }
            } else {
                events = apps.map { .reloadAllTimelines(app: $0) }
            }
            guard
                let scheduled = apply(
                    events, at: now, kind: "request",
                    message:
                        "\(request.kind.map { "reloadTimelines(ofKind: \($0))" } ?? "reloadAllTimelines()") by \(request.app ?? "every app")"
                )
            else { return storageUnavailable(id: request.id) }
            response.scheduled = scheduled
        case .event:
            guard let name = request.event, let event = ControlEvent(rawValue: name) else {
                return fail(
                    .badArgument,
                    "\"event\" must be one of \(ControlEvent.allCases.map(\.rawValue).joined(separator: ", ")); got \(request.event ?? "nothing")"
                )
            }
            let schedulerEvent: SchedulerEvent
            switch event.subject {
            case .app:
                guard let app = request.app, !app.isEmpty else {
                    return fail(.badArgument, "the \(name) event needs \"app\"")
                }
                var session = SessionKind.audio
                if event == .sessionStart || event == .sessionEnd, let text = request.session {
                    guard let kind = SessionKind(rawValue: text) else {
                        return fail(.badArgument, "\"session\" must be audio or navigation; got \(text)")
                    }
                    session = kind
                }
                switch event {
                case .appForeground: schedulerEvent = .appForeground(app)
                case .appBackground: schedulerEvent = .appBackground(app)
                case .sessionStart: schedulerEvent = .sessionStarted(app: app, kind: session)
                default: schedulerEvent = .sessionEnded(app: app, kind: session)
                }
            case .instance:
                switch instance() {
                case .failure(let error): return fail(error.code, error.message)
                case .success(let id): schedulerEvent = .appIntent(instance: id)
                }
            case .none:
                switch event {
                case .localeChanged: schedulerEvent = .systemChange(.locale)
                case .accessibilityChanged: schedulerEvent = .systemChange(.accessibility)
                case .timezoneChanged: schedulerEvent = .systemChange(.timeZone)
                default: schedulerEvent = .significantLocationChange
                }
            }
            let subject = request.app ?? request.instance
            guard
                let scheduled = apply(
                    [schedulerEvent], at: now, kind: "event", message: name + (subject.map { " \($0)" } ?? ""))
            else { return storageUnavailable(id: request.id) }
            response.scheduled = scheduled
            response.message = "\(name): \(response.scheduled?.count ?? 0) instances will reload"
        case .view:
            guard let visible = request.visible else {
                return fail(.badArgument, "\"visible\" (true or false) is required")
            }
            switch instance() {
            case .failure(let error): return fail(error.code, error.message)
            case .success(let id):
                guard
                    apply(
                        [visible ? .instanceShown(id) : .instanceHidden(id)], at: now, kind: "view",
                        message: "\(id) \(visible ? "shown" : "hidden")") != nil
                else { return storageUnavailable(id: request.id) }
                response.message = "\(id) is now \(visible ? "visible" : "hidden")"
                if let next = scheduler.plannedReload(of: id, at: now) {
                    response.message! += "; next reload \(Timestamp.relative(next.time, to: now)) (\(next.trigger))"
                }
            }
        case .status:
            switch status(at: now, limit: request.limit, after: request.after, only: request.instances) {
            case .success(var status):
                decorate(&status, at: now)
                let tokens = pushTokens()
                for index in status.plugins.indices {
                    let mine = tokens.filter { status.plugins[index].kinds.contains($0.key) }
                    status.plugins[index].pushTokens = mine.isEmpty ? nil : mine
                }
                response.status = status
            case .failure(let error): return fail(error.code, error.message)
            }
        case .explain:
            switch instance() {
            case .failure(let error): return fail(error.code, error.message)
            case .success(let id): response.explanation = explanation(of: id, at: now)
            }
        case .configurations:
            // An instance's settings (which may hold a plugin's secrets) go to
            // its app only: a request that names no app gets `{}` for each.
            response.configurations = scheduler.getCurrentConfigurations(app: request.app).map {
                WidgetConfiguration(
                    id: $0.id, kind: $0.kind, family: $0.family.name, app: $0.app, plugin: $0.plugin,
                    configuration: request.app == $0.app ? $0.configuration : "{}",
                    dataDirectory: workers[$0.plugin]?.dataDirectory)
            }
            if request.app == nil {
                response.message = "settings are shown to each instance's app only: pass \"app\" to see them"
            }
        case .watch, .instance, .instancesAdd, .instancesRemove, .instancesUpdate, .push:
            // Answered by ``answer(_:on:)`` before this.
            return fail(.internalError, "\(operation.rawValue) reached the wrong handler")
        case .unquarantine:
            guard let path = request.path, !path.isEmpty else { return fail(.badArgument, "\"path\" is required") }
            let worker = workers.values.first { $0.path == path || $0.name == path }
            let file = worker?.path ?? path
            var removed = false
            guard
                commit(
                    "the end of the quarantine of \(file)",
                    { tx in
                        removed = try tx.unquarantine(path: file)
                        if removed {
                            try tx.appendEvent(time: now, instanceID: nil, kind: "unquarantine", message: file)
                        }
                    })
            else { return storageUnavailable(id: request.id) }
            guard removed || worker?.state == .quarantined else {
                return fail(.unknownPlugin, "\(file) is not quarantined")
            }
            if let worker {
                // Loaded off the loop: `status` shows it loading, then loaded (or why not).
                if worker.state != .loading { loadAgain(worker) }
                response.message =
                    "\(worker.name) is no longer quarantined and is loading again (`widgethost status` shows when it has loaded)"
            } else {
                response.message = "\(file) is no longer quarantined"
            }
        }
        return response
    }

    /// The answer to a request whose change could not be stored (it was undone).
    func storageUnavailable(id: Int?) -> ControlResponse {
        .failure(
            id: id, .storageUnavailable,
            "the daemon cannot write its state (\(storage.fault ?? "unknown")); nothing was changed: retry when storage is back (`widgethost status` shows it)"
        )
    }
}
