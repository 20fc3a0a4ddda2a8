import HTTPTypes
import Hummingbird
import NIOCore
import WidgetHostControl
import WidgetHostModel

/// The dashboard of `widgethost run --http`, on the ``WebServer``'s router
/// (behind the same ``WebSecurity`` middleware as `preview`):
///
/// - `GET /`: every instance at its family's size, its budget, strips and badges;
/// - `GET /events`: server-sent events, `event: card` with `{"id","html"}`
///   each time an instance changes (an empty `html`: it was removed), and
///   `event: stack` with `{"family","order"}` when a stack's order by
///   relevance changes (the page shows one section per stack, top first);
/// - `POST /api/instances` (`{"id","plugin","kind","family","configuration"}`)
///   and `DELETE /api/instances/ID`: the daemon's own `instances.add` and
///   `instances.remove` (the middleware checks the token and the origin);
/// - `POST /push/KIND` with `Authorization: Bearer PUSH-TOKEN`: the daemon's
///   `push` request (WidgetKit's push updates, sent by the server behind the
///   widgets, which holds the kind's push token and not the page's token);
///   202 with the instances that will reload, 403 for a wrong token, 404 for a
///   kind that does not accept pushes, 503 while the state cannot be written;
/// - `GET /metrics`: Prometheus text (``DashboardMetrics``);
/// - `GET /healthz`: `ok`.
///
/// Everything but `/healthz` needs the token (as Jupyter does): in the URL
/// (`?token=`), the `X-Widgethost-Token` header or `Authorization: Bearer`,
/// because the page shows what every widget shows.
///
/// ```swift
/// let routes = DashboardRoutes(source: daemonSource, security: server.security)
/// routes.add(to: server.router)
/// Task { await routes.hub.follow(daemonSource.events()) }
/// ```
public struct DashboardRoutes: Sendable {
    public let source: any DashboardSource
    public let security: WebSecurity
    public let hub: DashboardHub
    public let page: DashboardPage

    public init(source: any DashboardSource, security: WebSecurity, page: DashboardPage = DashboardPage()) {
        self.source = source
        self.security = security
        self.hub = DashboardHub()
        self.page = page
    }

    /// Whether `request` carries the token.
    func authorized(_ request: Request) -> Bool {
        let presented =
            request.uri.queryParameters.get("token")
            ?? request.headers[HTTPField.Name(WebSecurity.tokenHeader)!]
            ?? request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        guard let presented else { return false }
        return WebSecurity.constantTimeEqual(presented, security.token)
    }

    static func text(_ status: HTTPResponse.Status, _ body: String, type: String = "text/plain; charset=utf-8")
        -> Response
    {
        Response(
            status: status, headers: [.contentType: type], body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    static var refused: Response {
        text(.forbidden, "this page needs the token printed at start: open the URL with ?token=\n")
    }

    /// Adds the routes to `router`.
    public func add(to router: Router<BasicRequestContext>) {
        let routes = self
        router.get("/healthz") { _, _ -> String in "ok\n" }
        router.get("/") { request, _ -> Response in
            guard routes.authorized(request) else { return Self.refused }
            let snapshot = await routes.source.snapshot(instances: nil)
            let history = await routes.hub.history
            let nonce = WebSecurity.newNonce()
            return .page(routes.page.html(snapshot, history: history, nonce: nonce), nonce: nonce)
        }
        router.get("/metrics") { request, _ -> Response in
            guard routes.authorized(request) else { return Self.refused }
            let snapshot = await routes.source.snapshot(instances: nil)
            let text = routes.hub.metrics.exposition(snapshot, listeners: await routes.hub.listenerCount)
            return Self.text(.ok, text, type: "text/plain; version=0.0.4; charset=utf-8")
        }
        router.get("/events") { request, _ -> Response in
            guard routes.authorized(request) else { return Self.refused }
            let (id, stream) = await routes.hub.listen()
            return Response(
                status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
                body: ResponseBody { writer in
                    do {
                        try await writer.write(ByteBuffer(string: "retry: 1000\n: following the daemon's events\n\n"))
                        for await batch in stream {
                            try await writer.write(ByteBuffer(string: await routes.cards(for: batch)))
                        }
                    } catch {
                        // The page went away.
                    }
                    await routes.hub.stopListening(id)
                    try? await writer.finish(nil)
                })
        }
        router.post("/api/instances") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 64 * 1024)
            let spec: InstanceSpec
            switch Self.instanceSpec(String(buffer: body)) {
            case .success(let value): spec = value
            case .failure(let problem): return Self.answer(ok: false, message: problem.description, status: .badRequest)
            }
            var add = ControlRequest(.instancesAdd, id: 1)
            add.widget = spec
            return Self.answer(await routes.source.perform(add))
        }
        router.post("/push/:kind") { request, context -> Response in
            var push = ControlRequest(.push, id: 1, kind: context.parameters.get("kind") ?? "")
            push.pushToken = request.headers[.authorization].flatMap {
                $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil
            }
            guard push.pushToken?.isEmpty == false else {
                return Self.answer(
                    ok: false,
                    message: "a push needs the kind's push token (shown by `widgethost status`) in "
                        + "an Authorization: Bearer header", status: .unauthorized)
            }
            return Self.answer(await routes.source.perform(push), accepted: .accepted)
        }
        router.delete("/api/instances/:id") { _, context -> Response in
            let id = context.parameters.get("id") ?? ""
            return Self.answer(await routes.source.perform(ControlRequest(.instancesRemove, id: 1, instance: id)))
        }
    }

    /// The `card` events of the instances `batch` touched, then a `stack`
    /// event (`{"family","order"}`, the top of the stack by relevance) for
    /// each stack whose order changed.
    func cards(for batch: [WatchEvent]) async -> String {
        var ids: [String] = []
        var seen = Set<String>()
        var stacks = ""
        for event in batch {
            if let id = event.instance, seen.insert(id).inserted { ids.append(id) }
            if event.type == WatchEventType.stack.rawValue, let family = event.details?.family,
                let order = event.details?.order
            {
                let data = JSONValue.object([("family", .string(family)), ("order", .array(order.map { .string($0) }))])
                stacks += "id: \(event.id)\nevent: stack\ndata: \(data.compactText(limit: .max))\n\n"
            }
        }
        guard !ids.isEmpty else { return ": \(batch.count) events\n\n" }
        let snapshot = await source.snapshot(instances: ids)
        let history = await hub.history
        var drawn: [String: String] = [:]
        for widget in snapshot.widgets {
            drawn[widget.id] = page.card(widget, history: history[widget.id] ?? [], now: snapshot.now)
        }
        var out = ""
        for id in ids {
            let data = JSONValue.object([("id", .string(id)), ("html", .string(drawn[id] ?? ""))])
            out += "id: \(batch.last?.id ?? 0)\nevent: card\ndata: \(data.compactText(limit: .max))\n\n"
        }
        return out + stacks
    }

    /// The add form's JSON as an ``InstanceSpec``; the daemon checks the rest.
    static func instanceSpec(_ text: String) -> Result<InstanceSpec, DashboardRequestProblem> {
        let value: JSONValue
        do {
            value = try JSONValue.parse(text)
        } catch {
            return .failure(DashboardRequestProblem(description: "body: expected a JSON object, \(error.description)"))
        }
        guard let members = value.objectMembers else {
            return .failure(
                DashboardRequestProblem(description: "body: expected a JSON object, found \(value.typeName)"))
        }
        var fields: [String: JSONValue] = [:]
        for (name, member) in members { fields[name] = member }
        func string(_ name: String) -> String? {
            if case .string(let text)? = fields[name] { return text }
            return nil
        }
        guard let id = string("id"), !id.isEmpty else {
            return .failure(DashboardRequestProblem(description: "id: expected a non-empty string"))
        }
        return .success(
            InstanceSpec(
                id: id, plugin: string("plugin"), kind: string("kind"), family: string("family"), app: string("app"),
                configuration: fields["configuration"]))
    }

    /// A control answer as JSON (`ok`, `message`, and `code` and `scheduled`
    /// when the daemon gave them), with the status its error code maps to.
    static func answer(_ response: ControlResponse, accepted: HTTPResponse.Status = .ok) -> Response {
        if response.ok {
            return answer(
                ok: true, message: response.message ?? "done", status: accepted, scheduled: response.scheduled)
        }
        let error = response.error
        let field = error?.field.map { "\($0): " } ?? ""
        let status: HTTPResponse.Status =
            switch error?.code {
            case .storageUnavailable: .serviceUnavailable
            case .badPushToken: .forbidden
            case .unknownKind, .unknownInstance: .notFound
            default: .badRequest
            }
        return answer(
            ok: false, message: field + (error?.message ?? "refused"), status: status, code: error?.code.rawValue)
    }

    static func answer(
        ok: Bool, message: String, status: HTTPResponse.Status, code: String? = nil, scheduled: [String]? = nil
    ) -> Response {
        var members: [(String, JSONValue)] = [("ok", .bool(ok)), ("message", .string(message))]
        if let code { members.append(("code", .string(code))) }
        if let scheduled { members.append(("scheduled", .array(scheduled.map { .string($0) }))) }
        return text(status, JSONValue.object(members).compactText(limit: .max) + "\n", type: "application/json")
    }
}

/// A dashboard request the web side refuses before asking the daemon.
public struct DashboardRequestProblem: Error, Sendable, CustomStringConvertible {
    public var description: String
}
