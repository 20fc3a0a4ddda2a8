import WidgetHostControl
// What `import WidgetKit` gives app code on Apple's platforms comes with
// WidgetCenter: WidgetFamily, WidgetInfo, the intents (for
// `widgetConfigurationIntent(of:)`) and Foundation.
@_exported import WidgetHostKit

#if canImport(Glibc)
    import Glibc
#endif

/// WidgetKit's `WidgetCenter` for apps on Linux: asks the running
/// `widgethost run` daemon to reload an app's widgets, and lists them.
///
/// ```swift
/// import WidgetHostCenter
///
/// try saveScores(to: sharedDataDirectory)        // new data for the widget
/// WidgetCenter.shared.reloadTimelines(ofKind: "com.example.leaderboard")
///
/// WidgetCenter.shared.getCurrentConfigurations { result in
///     if case .success(let widgets) = result { print(widgets.map(\.kind)) }
/// }
/// ```
///
/// As in WidgetKit, a reload request is a request: the daemon's scheduler
/// decides when it happens (free while the app is in the foreground, counted
/// against each widget's daily budget otherwise; docs/scheduler.md).
/// `shared` identifies the app by `$WIDGETHOST_APP`, else by the executable's
/// name; the socket is ``ControlPaths/socket`` (`$WIDGETHOST_SOCKET` overrides it).
public final class WidgetCenter: Sendable {
    /// The app this process speaks for.
    public let app: String
    /// The daemon's control socket.
    public let socketPath: String

    /// The center of this process's app.
    public static let shared = WidgetCenter()

    /// A center speaking for `app` to the daemon at `socketPath`.
    public init(app: String? = nil, socketPath: String = ControlPaths.socket) {
        self.app = app ?? Self.defaultApp()
        self.socketPath = socketPath
    }

    /// Reloads the timelines of every widget of this app with `kind`. Like
    /// WidgetKit's, it does not throw; a daemon that cannot be reached is
    /// reported on stderr. Use ``requestReload(ofKind:)`` to handle errors.
    public func reloadTimelines(ofKind kind: String) {
        report { try requestReload(ofKind: kind) }
    }

    /// Reloads the timelines of every widget of this app.
    public func reloadAllTimelines() {
        report { try requestReload(ofKind: nil) }
    }

    /// The widgets of this app that are placed now (WidgetKit's `getCurrentConfigurations`).
    public func getCurrentConfigurations(_ completion: @escaping @Sendable (Result<[WidgetInfo], Error>) -> Void) {
        completion(Result { try configurations() })
    }

    /// The same, for `async` code.
    public func currentConfigurations() async throws -> [WidgetInfo] { try configurations() }

    /// Asks for the reload and returns the ids of the instances that will
    /// reload; throws ``WidgetCenterError`` when the daemon is unreachable or refuses.
    @discardableResult
    public func requestReload(ofKind kind: String?) throws -> [String] {
        try send(ControlRequest(.reload, kind: kind, app: app)).scheduled ?? []
    }

    /// The widgets of this app, synchronously.
    public func configurations() throws -> [WidgetInfo] {
        try (send(ControlRequest(.configurations, app: app)).configurations ?? []).map { widget in
            guard let family = WidgetFamily(rawValue: widget.family) else {
                throw WidgetCenterError.unknownFamily(widget.family, instance: widget.id)
            }
            return WidgetInfo(
                id: widget.id, kind: widget.kind, family: family, configuration: widget.configuration,
                dataDirectory: widget.dataDirectory)
        }
    }

    /// Asks the system to ask the widgets' providers for their
    /// recommendations again (WidgetKit's). widgethost has no
    /// recommendation UI: it reloads this app's widgets instead.
    public func invalidateConfigurationRecommendations() {
        reloadAllTimelines()
    }

    private func send(_ request: ControlRequest) throws -> ControlResponse {
        var client = try ControlClient.connect(to: socketPath)
        defer { client.close() }
        let response = try client.send(request)
        if let error = response.error { throw WidgetCenterError.refused(error) }
        return response
    }

    private func report(_ body: () throws -> [String]) {
        do {
            _ = try body()
        } catch {
            let line = "WidgetCenter (\(app)): \(error)\n"
            _ = line.withCString { Glibc.write(2, $0, strlen($0)) }
        }
    }

    static func defaultApp() -> String {
        let process = ProcessInfo.processInfo
        if let app = process.environment["WIDGETHOST_APP"], !app.isEmpty { return app }
        return process.processName
    }
}

/// Why a ``WidgetCenter`` request failed.
public enum WidgetCenterError: Error, Sendable, CustomStringConvertible {
    /// The daemon answered with an error.
    case refused(ControlErrorBody)
    /// The daemon named a family this SDK does not know.
    case unknownFamily(String, instance: String)

    public var description: String {
        switch self {
        case .refused(let error): "the widgethost daemon refused the request: \(error)"
        case .unknownFamily(let family, let instance):
            "the widgethost daemon reports instance \(instance) in family \"\(family)\", which this WidgetHostCenter does not know: update the SDK"
        }
    }
}
