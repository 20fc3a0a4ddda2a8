import WidgetHostControl
import WidgetHostModel

/// Text forms of the daemon's answers.
enum DaemonReport {
    static func status(_ status: HostStatus, full: Bool = false) -> String {
        let now = status.time
        func at(_ time: Double) -> String { "\(Timestamp.iso8601(time)) (\(Timestamp.relative(time, to: now)))" }
        var lines = ["status at \(Timestamp.iso8601(now))"]
        if let problem = status.storageProblem {
            lines.append("STATE FILE NOT WRITABLE (\(problem)): reloads are paused, changes refused")
        }
        if let summary = status.summary {
            lines.append(
                "\(summary.instances) instances: \(summary.visible) visible, \(summary.inFlight) reloading, \(summary.failing) failing, \(summary.unavailable) unavailable"
            )
        }
        lines += ["", "plugins:"]
        for plugin in status.plugins {
            var line = "  \(plugin.name)  \(plugin.state)"
            if let identifier = plugin.identifier { line += "  \(identifier) \(plugin.version ?? "")" }
            if let isolation = plugin.isolation { line += "  isolation: \(isolation)" }
            if plugin.crashes > 0 { line += "  crashes: \(plugin.crashes)" }
            if plugin.calling == true { line += "  calling" }
            lines.append(line)
            lines.append("      \(plugin.path)")
            if let problem = plugin.problem { lines.append("      problem: \(problem)") }
            if plugin.fileChanged == true {
                lines.append(
                    "      the file changed on disk since it was loaded: what is shown is the loaded file's; it is loaded again at its next due reload"
                )
            }
            for (kind, until) in plugin.backoffUntil.sorted(by: { $0.key < $1.key }) {
                lines.append("      kind \(kind) backing off until \(at(until))")
            }
        }
        lines.append("")
        lines.append("instances:")
        if status.nextCursor != nil, let summary = status.summary {
            lines.append(
                "  (the first \(status.instances.count) of \(summary.instances); `widgethost status --all` for every one, or name them)"
            )
        }
        for instance in status.instances {
            lines.append(
                "  \(instance.id)  \(instance.plugin) \(instance.kind) \(instance.family)  app=\(instance.app)  \(instance.visible ? "visible" : "hidden")"
                    + (instance.origin == "runtime" ? "  (placed at run time)" : "")
                    + (instance.relevance.map {
                        $0 > 0 ? "  relevance \($0), #\(instance.stackRank ?? 1) of its stack" : ""
                    } ?? "")
            )
            if full, let content = instance.content {
                lines.append(
                    "      shows: \(content)"
                        + (instance.entryDate.map { "  (entry of \(Timestamp.iso8601($0)))" } ?? ""))
            } else if let shows = instance.shows {
                lines.append(
                    "      shows: \(shows)" + (instance.entryDate.map { "  (entry of \(Timestamp.iso8601($0)))" } ?? "")
                )
            } else {
                lines.append("      shows: nothing yet")
            }
            let left = max(0, instance.budgetAllowance - instance.budgetUsed)
            lines.append(
                "      budget: \(instance.budgetUsed) used, \(left) left of \(instance.budgetAllowance) in 24 h (\(instance.tier))"
                    + (instance.policy.map { "  policy: \($0)" } ?? ""))
            if instance.inFlight {
                lines.append("      reloading now")
            } else if let next = instance.nextReload {
                lines.append("      next reload: \(at(next)), \(instance.nextReason ?? "")")
            } else {
                lines.append("      next reload: none scheduled")
            }
            if let failure = instance.lastFailure {
                lines.append("      failing: \(instance.consecutiveFailures) in a row, last: \(failure)")
            }
            if let unavailable = instance.unavailable { lines.append("      unavailable: \(unavailable)") }
        }
        if !status.quarantined.isEmpty {
            lines.append("")
            lines.append("quarantined plugin files:")
            for entry in status.quarantined {
                lines.append(
                    "  \(entry.path) since \(Timestamp.iso8601(entry.since)) after \(entry.crashes) crashes (\(entry.reason)); `widgethost unquarantine \(entry.path)`"
                )
            }
        }
        return lines.joined(separator: "\n")
    }
}
