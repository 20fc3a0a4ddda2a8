import WidgetHostControl

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
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
        (try send(ControlRequest(.configurations, app: app)).configurations ?? []).map {
            WidgetInfo(
                id: $0.id, kind: $0.kind, family: $0.family, configuration: $0.configuration,
                dataDirectory: $0.dataDirectory)
        }
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

/// A placed widget, as ``WidgetCenter/getCurrentConfigurations(_:)`` reports it.
public struct WidgetInfo: Sendable, Hashable {
    /// The instance id.
    public var id: String
    public var kind: String
    /// `systemSmall`, `accessoryCircular`, ...
    public var family: String
    /// The instance's configuration (its parameter values) as JSON.
    public var configuration: String
    /// The widget's data directory (its plugin's): write new data there,
    /// then call ``WidgetCenter/reloadTimelines(ofKind:)``.
    public var dataDirectory: String?
}

/// Why a ``WidgetCenter`` request failed.
public enum WidgetCenterError: Error, Sendable, CustomStringConvertible {
    /// The daemon answered with an error.
    case refused(ControlErrorBody)

    public var description: String {
        switch self {
        case .refused(let error): "the widgethost daemon refused the request: \(error)"
        }
    }
}
