import WidgetHostModel

/// What became of a plugin's warm-up in a fork server (`ForkServer.warmUp`).
///
/// A plugin may export a `warm_up` function (SDK 1.1, `wh_warm_up_fn`): the
/// fork server runs it once after loading, before forking call children, so
/// every call starts from the warmed state (docs/isolation.md, "Warm-up").
///
/// ```swift
/// let server = ForkServer(plugin: path)
/// _ = server.call(call)
/// if case .failed(let reason) = server.warmUp { print("warm-up failed: \(reason)") }
/// ```
public enum WarmUpOutcome: Sendable, Equatable {
    /// The plugin has no `warm_up` (or the server was not started yet).
    case none
    /// It ran in the server in this many seconds; calls start warm.
    case ran(seconds: Double)
    /// It crashed, hung past the load timeout or started threads: the server
    /// was started again without it (or, for threads, calls spawn a fresh
    /// runner). The text says what happened.
    case failed(String)

    /// `none`, `ran` or `failed`, for JSON reports.
    public var state: String {
        switch self {
        case .none: "none"
        case .ran: "ran"
        case .failed: "failed"
        }
    }

    /// Seconds it took, when it ran.
    public var seconds: Double? {
        if case .ran(let seconds) = self { return seconds }
        return nil
    }

    /// What went wrong, when it failed.
    public var failure: String? {
        if case .failed(let reason) = self { return reason }
        return nil
    }

    /// One line for people, e.g. "ran once in the fork server in 850 µs; ...".
    public var summary: String {
        switch self {
        case .none: "none (the plugin exports no warm_up)"
        case .ran(let seconds):
            "ran once in \(Timestamp.duration(seconds)), before the first call (in each worker, or in the fork server)"
        case .failed(let reason): "FAILED: \(reason)"
        }
    }
}
