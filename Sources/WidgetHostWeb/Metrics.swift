import WidgetHostModel

/// The dashboard's figures for `/metrics`, in Prometheus' text exposition
/// format (version 0.0.4): reloads by reason and outcome, reload latency as
/// a histogram, budget use per instance, workers, pages following.
///
/// ```text
/// widgethost_reloads_total{reason="policy",outcome="ok"} 12
/// widgethost_reload_seconds_bucket{le="0.1"} 9
/// widgethost_budget_used{instance="desk"} 3
/// ```
public struct DashboardMetrics: Sendable {
    /// Upper bounds of the latency histogram's buckets, in seconds.
    public static let buckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

    /// (reason, outcome) → finished reloads.
    public private(set) var reloads: [String: [String: Int]] = [:]
    /// Reloads per bucket (not cumulative), then the overflow bucket.
    public private(set) var latencyCounts = [Int](repeating: 0, count: Self.buckets.count + 1)
    public private(set) var latencySum = 0.0
    public private(set) var latencyCount = 0
    /// Events the dashboard took from the daemon's log.
    public var events = 0

    public init() {}

    /// Counts a finished reload; `seconds` from its start (nil: its start was not seen).
    mutating func reloadFinished(reason: String, outcome: String, seconds: Double?) {
        reloads[reason, default: [:]][outcome, default: 0] += 1
        guard let seconds, seconds.isFinite else { return }
        let bucket = Self.buckets.firstIndex { seconds <= $0 } ?? Self.buckets.count
        latencyCounts[bucket] += 1
        latencySum += seconds
        latencyCount += 1
    }

    /// The text exposition of these figures and of `snapshot`'s gauges.
    public func exposition(_ snapshot: DashboardSnapshot, listeners: Int) -> String {
        var out = ""
        out += "# HELP widgethost_reloads_total Reloads finished, by reason and outcome.\n"
        out += "# TYPE widgethost_reloads_total counter\n"
        for reason in reloads.keys.sorted() {
            for (outcome, count) in reloads[reason]!.sorted(by: { $0.key < $1.key }) {
                out +=
                    "widgethost_reloads_total{reason=\"\(Self.label(reason))\",outcome=\"\(Self.label(outcome))\"} \(count)\n"
            }
        }
        out += "# HELP widgethost_reload_seconds Time from a reload's start to its timeline or failure.\n"
        out += "# TYPE widgethost_reload_seconds histogram\n"
        var cumulative = 0
        for (index, bound) in Self.buckets.enumerated() {
            cumulative += latencyCounts[index]
            out += "widgethost_reload_seconds_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        out += "widgethost_reload_seconds_bucket{le=\"+Inf\"} \(latencyCount)\n"
        out += "widgethost_reload_seconds_sum \(latencySum)\n"
        out += "widgethost_reload_seconds_count \(latencyCount)\n"
        out += "# HELP widgethost_budget_used Counted reloads in the rolling budget window.\n"
        out += "# TYPE widgethost_budget_used gauge\n"
        for widget in snapshot.widgets {
            out += "widgethost_budget_used{instance=\"\(Self.label(widget.id))\"} \(widget.budgetUsed ?? 0)\n"
        }
        out += "# HELP widgethost_budget_allowance Counted reloads allowed in the window.\n"
        out += "# TYPE widgethost_budget_allowance gauge\n"
        for widget in snapshot.widgets {
            out += "widgethost_budget_allowance{instance=\"\(Self.label(widget.id))\"} \(widget.budgetAllowance ?? 0)\n"
        }
        out += "# HELP widgethost_instances Widget instances.\n# TYPE widgethost_instances gauge\n"
        out += "widgethost_instances \(snapshot.widgets.count)\n"
        out += "# HELP widgethost_workers Plugins loaded (one worker each).\n# TYPE widgethost_workers gauge\n"
        out += "widgethost_workers \(snapshot.pluginsLoaded)\n"
        out += "# HELP widgethost_calls_running Plugin calls running now.\n# TYPE widgethost_calls_running gauge\n"
        out += "widgethost_calls_running \(snapshot.callsRunning)\n"
        out += "# HELP widgethost_dashboard_pages Pages following /events.\n# TYPE widgethost_dashboard_pages gauge\n"
        out += "widgethost_dashboard_pages \(listeners)\n"
        out += "# HELP widgethost_dashboard_events_total Events taken from the daemon's log.\n"
        out += "# TYPE widgethost_dashboard_events_total counter\n"
        out += "widgethost_dashboard_events_total \(events)\n"
        return out
    }

    /// A label value with `\`, `"` and newlines escaped (the format's rule).
    static func label(_ value: String) -> String {
        var out = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }
}
