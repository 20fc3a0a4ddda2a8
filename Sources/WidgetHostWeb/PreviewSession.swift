import Dispatch
import WidgetHostIsolation
import WidgetHostModel

#if canImport(Glibc)
    import Glibc
#endif

/// What a preview asks of the plugin: which kinds and families, with which
/// configuration, where the plugin may write, and the clock.
public struct PreviewRequest: Sendable {
    public var kind: String?
    public var family: WidgetFamily?
    /// Parameter values (JSON literals by name) over the kinds' defaults.
    public var configuration: [String: String]
    public var locale: String
    public var dataDirectory: String
    /// `context->now` for the calls; nil: the real time at each build.
    public var now: Double?

    public init(
        kind: String? = nil, family: WidgetFamily? = nil, configuration: [String: String] = [:],
        locale: String = "en-US", dataDirectory: String, now: Double? = nil
    ) {
        self.kind = kind
        self.family = family
        self.configuration = configuration
        self.locale = locale
        self.dataDirectory = dataDirectory
        self.now = now
    }
}

/// The preview's calls to one plugin, through the one ``IsolationEngine``
/// (warm workers), made on a serial queue of their own: the engine's calls
/// block, and the web server's threads must not.
///
/// ```swift
/// let session = PreviewSession(plugin: "/path/libCountdownPlugin.so",
///                              request: PreviewRequest(dataDirectory: "/tmp/preview"))
/// let document = try await session.build()
/// ```
public final class PreviewSession: @unchecked Sendable {
    // @unchecked: `engine` is only touched on `queue`, one call at a time.
    private let engine: IsolationEngine
    private let queue = DispatchQueue(label: "widgethost.preview.calls")
    public let request: PreviewRequest
    public let pluginPath: String

    public init(plugin: String, request: PreviewRequest, options: IsolationOptions = IsolationOptions()) {
        self.engine = IsolationEngine(plugin: plugin, options: options, mode: .worker)
        self.pluginPath = engine.pluginPath
        self.request = request
    }

    /// Loads the plugin (again, if its file changed: the engine notices) and
    /// makes every call the request asks for.
    public func build() async throws(PreviewProblem) -> PreviewDocument {
        let result: Result<PreviewDocument, PreviewProblem> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.buildNow()) }
        }
        return try result.get()
    }

    /// Stops the engine's workers (on the calls' queue, after any call in flight).
    public func stop() {
        queue.sync { engine.stop() }
    }

    private func buildNow() -> Result<PreviewDocument, PreviewProblem> {
        let now = request.now ?? Self.wallClock()
        let plugin: PluginDescription
        switch engine.prepare(dataDirectory: request.dataDirectory, locale: request.locale) {
        case .failure(let failure):
            return .failure(PreviewProblem("\(pluginPath) did not load: \(failure)", isPluginFailure: true))
        case .success(let loaded): plugin = loaded
        }
        var kinds = plugin.kinds
        if let wanted = request.kind {
            guard let kind = plugin.kind(wanted) else {
                return .failure(
                    PreviewProblem(
                        "\(pluginPath) has no kind \"\(wanted)\"; it has: \(plugin.kinds.map(\.id).joined(separator: ", "))",
                        isPluginFailure: false))
            }
            kinds = [kind]
        }
        if let family = request.family, !kinds.contains(where: { $0.families.contains(family) }) {
            return .failure(
                PreviewProblem(
                    "no kind previewed supports \(family); they support: "
                        + Set(kinds.flatMap(\.families)).sorted { $0.rawValue < $1.rawValue }.map(\.name).joined(
                            separator: ", "), isPluginFailure: false))
        }
        var previews: [PreviewDocument.Kind] = []
        for kind in kinds {
            var families = kind.families
            if let family = request.family { families = families.filter { $0 == family } }
            guard !families.isEmpty else { continue }
            // With every kind shown, each takes the values of its own parameters;
            // with one (--kind), a value it does not know is an error.
            let configuration =
                request.kind == nil
                ? request.configuration.filter { name, _ in kind.parameters.contains { $0.name == name } }
                : request.configuration
            if case .failure(let problem) = ConfigurationBuilder.build(kind: kind, overrides: configuration) {
                return .failure(PreviewProblem("\(kind.id): \(problem)", isPluginFailure: false))
            }
            let answers = families.map { family in
                PreviewDocument.Family(
                    family: family,
                    placeholder: answer(
                        .placeholder, kind: kind, family: family, now: now, configuration: configuration),
                    snapshot: answer(.snapshot, kind: kind, family: family, now: now, configuration: configuration),
                    timeline: answer(.timeline, kind: kind, family: family, now: now, configuration: configuration))
            }
            previews.append(PreviewDocument.Kind(kind: kind, families: answers))
        }
        return .success(PreviewDocument(plugin: engine.plugin ?? plugin, now: now, kinds: previews))
    }

    private func answer(
        _ entryPoint: EntryPoint, kind: KindDescription, family: WidgetFamily, now: Double,
        configuration: [String: String]
    ) -> PreviewDocument.Answer {
        let call = PluginCall(
            entryPoint, kind: kind.id, family: family, isPreview: entryPoint == .snapshot, now: now,
            configuration: configuration, locale: request.locale, dataDirectory: request.dataDirectory,
            allowNetwork: kind.needsNetwork)
        let output = engine.call(call)
        if let failure = output.failure { return .failed("\(failure)") }
        guard let result = output.result else { return .failed("no answer") }
        return .entries(result.entries, policy: result.policy, seconds: output.timing.totalSeconds)
    }

    static func wallClock() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
