import WidgetHostModel

/// Why a reload's plugin was not called (``ReloadOutcome/notCalled(reason:retryAt:)``):
/// the reason its own log line and event give, and the subject of the one
/// line logged for the reloads held for the same cause (``HeldReloadLog``).
enum HoldCause: Hashable, Sendable {
    /// The plugin is not configured, did not load, or is quarantined.
    case pluginUnusable(plugin: String, problem: String)
    /// The kind backs off until `until` after `failures` failed reloads in a row.
    case kindBackingOff(plugin: String, kind: String, failures: Int, until: Double)
    /// The host could not make the call (no runner, out of descriptors,
    /// memory or processes): not the plugin's fault.
    case hostFault(plugin: String, message: String)
    /// The reload waited for a load of a plugin that a SIGHUP replaced.
    case reconfigured(plugin: String)

    /// The reason in the reload's own line and event (`held`).
    var reason: String {
        switch self {
        case .pluginUnusable(let plugin, let problem):
            "plugin \(plugin) cannot be called: \(problem)"
        case .kindBackingOff(_, let kind, let failures, let until):
            "kind \(kind) is backing off until \(Timestamp.iso8601(until)) after \(failures) failed reloads in a row"
        case .hostFault(_, let message):
            message
        case .reconfigured(let plugin):
            "plugin \(plugin) was reconfigured"
        }
    }

    /// What the summary line says first: the plugin or kind, and why.
    var subject: String {
        switch self {
        case .pluginUnusable(let plugin, let problem):
            "plugin \(plugin) cannot be called (\(problem))"
        case .kindBackingOff(let plugin, let kind, let failures, _):
            "kind \(kind) of plugin \(plugin) is backing off (\(failures) failed reloads in a row)"
        case .hostFault(let plugin, let message):
            "host fault calling \(plugin) (\(message); not counted against the plugin)"
        case .reconfigured(let plugin):
            "plugin \(plugin) was reconfigured"
        }
    }

    /// A fault of the host's own: its summary is an error, the others warnings.
    var isHostFault: Bool {
        if case .hostFault = self { return true }
        return false
    }
}

/// The reloads held (not called) and not yet logged, gathered per cause,
/// so that the instances of a plugin that cannot be called, held until one
/// shared time and tried again together, log one line a retry, not one per
/// instance (100,000 instances logged 100,000 lines a retry). A retry
/// issued over several turns of the loop (128 reloads a turn) is gathered
/// until the turn that leaves none due (``take(all:at:)``).
struct HeldReloadLog {
    /// The reloads held for one cause.
    struct Summary {
        var cause: HoldCause
        var count = 0
        /// The latest end of their holds.
        var until: Double
        /// The first instances held, which the line names.
        var named: [String] = []
        /// When the first was held (monotonic seconds).
        var since: Double

        /// `plugin broken cannot be called (…): held 5 reloads (not charged,
        /// not counted as failures) until 2026-11-28T22:05:09.504Z: i1, i2, i3 and 2 more`.
        var line: String {
            let more = count > named.count ? " and \(count - named.count) more" : ""
            return
                "\(cause.subject): held \(count) reload\(count == 1 ? "" : "s") (not charged, not counted as failures) until \(Timestamp.iso8601(until)): \(named.joined(separator: ", "))\(more)"
        }
    }

    /// How many instances a line names.
    static let namedInstances = 3
    /// The longest a summary waits for more reloads of its cause (seconds):
    /// a storm of turns logs at most one line per cause a second.
    static let longestWait = 1.0

    private var summaries: [HoldCause: Summary] = [:]
    /// The causes in the order their first reload was held.
    private var order: [HoldCause] = []

    /// Whether no reload waits to be logged.
    var isEmpty: Bool { order.isEmpty }

    /// Counts the reload of `id`, held for `cause` until `until`, at
    /// `monotonic` seconds.
    mutating func add(_ id: String, cause: HoldCause, until: Double, at monotonic: Double) {
        var summary = summaries[cause] ?? Summary(cause: cause, until: until, since: monotonic)
        if summaries[cause] == nil { order.append(cause) }
        summary.count += 1
        summary.until = max(summary.until, until)
        if summary.named.count < Self.namedInstances { summary.named.append(id) }
        summaries[cause] = summary
    }

    /// The summaries to log now, in the order they began, and forgotten:
    /// all of them when `all`, otherwise those that have waited
    /// ``longestWait`` at `monotonic` seconds.
    mutating func take(all: Bool, at monotonic: Double) -> [Summary] {
        var taken: [Summary] = []
        order.removeAll { cause in
            guard let summary = summaries[cause], all || monotonic - summary.since >= Self.longestWait else {
                return false
            }
            taken.append(summary)
            summaries[cause] = nil
            return true
        }
        return taken
    }
}
