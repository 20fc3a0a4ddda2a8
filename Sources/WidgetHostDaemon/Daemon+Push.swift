import WidgetHostControl
import WidgetHostModel
import WidgetHostScheduler
import WidgetHostStore

#if canImport(Glibc)
    import Glibc
#endif

/// Push updates (WidgetKit's widget push notifications), the daemon's side:
/// a per-installation token per kind, and the `push` request that reloads
/// the kind's instances with reason `push` (docs/control-protocol.md, "Push").
extension Daemon {
    /// The push token of every loaded kind that accepts pushes
    /// (`WH_KIND_PUSH`): read once from the state database; a kind without
    /// one gets a new one (32 random bytes, hex), stored before it is shown
    /// or handed to the plugin (`context->push_token` of its calls). While
    /// the state cannot be written, a kind without a stored token has none
    /// (it is made when the state takes writes).
    func pushTokens() -> [String: String] {
        if pushTokenCache == nil { pushTokenCache = try? store.pushTokens() }
        // Every stored token stays cached (a plugin still loading keeps its
        // kinds' tokens); only those of loaded push kinds are answered.
        guard var tokens = pushTokenCache else { return [:] }
        var kinds: Set<String> = []
        for worker in workers.values {
            kinds.formUnion(worker.description?.kinds.filter(\.acceptsPush).map(\.id) ?? [])
        }
        let missing = kinds.subtracting(tokens.keys).sorted()
        if !missing.isEmpty, storage.isAvailable {
            var made: [String: String] = [:]
            for kind in missing { made[kind] = Self.newPushToken() }
            let now = clock.now()
            let stored = commit("\(made.count) push tokens") { tx in
                for (kind, token) in made.sorted(by: { $0.key < $1.key }) {
                    try tx.savePushToken(token, kind: kind, at: now)
                }
            }
            if stored { tokens.merge(made) { old, _ in old } }
            pushTokenCache = tokens
        }
        return tokens.filter { kinds.contains($0.key) }
    }

    /// 32 bytes from the system's cryptographic generator, as hex.
    static func newPushToken() -> String { SecretToken.random(bytes: 32) }

    /// Compares two tokens in time that depends on their length only.
    static func sameToken(_ a: String, _ b: String) -> Bool { SecretToken.matches(a, b) }

    /// `push`: with the kind's token, a reload of each of its instances with
    /// reason `push` (free for the timeline budget; the scheduler counts it
    /// against the instance's push budget and defers, never drops, what is
    /// over it). Committed with the batch; the loop issues the reloads in the
    /// same turn.
    func push(_ request: ControlRequest, at now: Double) -> ControlResponse {
        guard let kind = request.kind, !kind.isEmpty else {
            return .failure(id: request.id, .badArgument, "\"kind\" is required", field: "kind")
        }
        guard let given = request.pushToken, !given.isEmpty else {
            return .failure(
                id: request.id, .badArgument, "\"pushToken\" is required (the kind's token, shown by `status`)",
                field: "pushToken")
        }
        let tokens = pushTokens()
        guard let token = tokens[kind] else {
            let declared = workers.values.contains { $0.description?.kind(kind) != nil }
            return .failure(
                id: request.id, .unknownKind,
                declared
                    ? "kind \"\(kind)\" does not accept push updates: declare WH_KIND_PUSH in its wh_kind.flags "
                        + "(Swift: .pushHandler(_:); Rust: Kind::push()); kinds that do: "
                        + (tokens.isEmpty ? "none" : tokens.keys.sorted().joined(separator: ", "))
                    : "no plugin declares kind \"\(kind)\"; kinds that accept pushes: "
                        + (tokens.isEmpty ? "none" : tokens.keys.sorted().joined(separator: ", ")),
                field: "kind")
        }
        guard Self.sameToken(token, given) else {
            return .failure(id: request.id, .badPushToken, "not the push token of \(kind)", field: "pushToken")
        }
        guard let scheduled = apply([.push(kind: kind, plugin: nil)], at: now, kind: "push", message: kind) else {
            return storageUnavailable(id: request.id)
        }
        var response = ControlResponse(id: request.id)
        response.scheduled = scheduled
        let deferred = scheduled.compactMap { id -> String? in
            guard let plan = scheduler.plannedReload(of: id, at: now), plan.time > now + 1 else { return nil }
            return "\(id) at \(Timestamp.iso8601(plan.time))\(plan.deferral.map { " (\($0))" } ?? "")"
        }
        response.message =
            "push for \(kind): \(scheduled.count) instances will reload"
            + (deferred.isEmpty ? "" : "; deferred: \(deferred.joined(separator: ", "))")
        return response
    }
}
