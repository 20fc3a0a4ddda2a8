import WidgetHostIsolation
import WidgetHostModel
import WidgetHostScheduler

/// Renders a simulation: the reload log and the per-instance summary.
enum SimulationReport {
    static func text(_ result: ScenarioSimulator.Result, showEvents: Bool) -> String {
        let scenario = result.scenario
        var lines: [String] = []
        let days = (result.end - scenario.start) / 86_400
        lines.append(
            "Scenario \(scenario.file): \(scenario.instances.count) instance(s), \(Timestamp.duration(days * 86_400)) from \(Timestamp.iso8601(scenario.start))"
                + (scenario.seed.map { ", seed \($0)" } ?? "")
                + (scenario.configuration.developerMode ? ", developer mode" : ""))
        if !scenario.summary.isEmpty { lines.append(scenario.summary) }
        lines.append("")
        lines.append(
            "TIME".padding(toLength: 22) + "INSTANCE".padding(toLength: 14) + "CHARGE".padding(toLength: 28)
                + "RESULT".padding(toLength: 44) + "REASON")
        // Reloads and (optionally) events, merged in time order.
        var rows: [(time: Double, order: Int, text: String)] = []
        for (index, reload) in result.reloads.enumerated() {
            let decision = reload.decision
            var charge = decision.charge.description
            if let allowance = decision.allowance, let used = decision.countedInWindow {
                charge += " \(used)/\(allowance)"
            }
            var outcome = reload.outcome
            if reload.failure == nil {
                outcome = "\(reload.entries) entr\(reload.entries == 1 ? "y" : "ies")"
                if let policy = reload.policy { outcome += ", \(policy)" }
            }
            var text =
                Timestamp.iso8601(decision.time).padding(toLength: 22) + decision.instanceID.padding(toLength: 14)
                + charge.padding(toLength: 28) + outcome.padding(toLength: 44) + decision.trigger.description
            if let deferral = decision.deferral {
                text +=
                    "\n" + String(repeating: " ", count: 36)
                    + "deferred \(Timestamp.duration(decision.time - deferral.from)) from \(Timestamp.iso8601(deferral.from)) (\(deferral.cause.rawValue))"
            }
            if let would = decision.wouldHaveBeenDeferred {
                let until = would.until.map { Timestamp.iso8601($0) } ?? "when shown"
                text +=
                    "\n" + String(repeating: " ", count: 36)
                    + "developer mode: would have been deferred to \(until) (\(would.cause.rawValue))"
            }
            if let failure = reload.failure {
                text += "\n" + String(repeating: " ", count: 36) + failure.message
            }
            rows.append((decision.time, index * 2 + 1, text))
        }
        if showEvents {
            for (index, event) in result.events.enumerated() {
                rows.append(
                    (
                        event.time, index * 2,
                        Timestamp.iso8601(event.time).padding(toLength: 22) + "event: \(event.label)"
                    ))
            }
        }
        for (index, change) in result.display.enumerated() {
            rows.append(
                (
                    change.time, index * 2 + 1,
                    Timestamp.iso8601(change.time).padding(toLength: 22) + change.instance.padding(toLength: 14)
                        + "shows the entry of \(Timestamp.iso8601(change.entryDate)): \(change.content)"
                ))
        }
        for row in rows.sorted(by: { ($0.time, $0.order) < ($1.time, $1.order) }) { lines.append(row.text) }

        if !result.stacks.isEmpty {
            lines.append("")
            lines.append("Stacks (top instance by relevance)")
            var previous: [String: String?] = [:]
            for sample in result.stacks where previous[sample.stack] != .some(sample.top) {
                previous[sample.stack] = .some(sample.top)
                lines.append("  \(Timestamp.iso8601(sample.time))  \(sample.stack): \(sample.top ?? "none")")
            }
        }

        lines.append("")
        lines.append(
            "Summary (\(result.pluginCalls) plugin calls"
                + (result.memoizedCalls > 0 ? ", \(result.memoizedCalls) answers reused (deterministic kinds)" : "")
                + ")")
        lines.append(
            "INSTANCE".padding(toLength: 14) + "COUNTED".padding(toLength: 9) + "FREE".padding(toLength: 6)
                + "DEFERRED".padding(toLength: 10) + "FAILED".padding(toLength: 8) + "MAX/24H".padding(toLength: 9)
                + "ALLOWANCE".padding(toLength: 11) + "MIN SPACING".padding(toLength: 13) + "LONGEST STALE")
        for summary in result.summaries {
            lines.append(
                summary.instance.padding(toLength: 14) + "\(summary.counted)".padding(toLength: 9)
                    + "\(summary.free)".padding(toLength: 6) + "\(summary.deferrals)".padding(toLength: 10)
                    + "\(summary.failures)".padding(toLength: 8) + "\(summary.maxCountedIn24h)".padding(toLength: 9)
                    + "\(summary.allowanceAtEnd)".padding(toLength: 11)
                    + (summary.shortestCountedSpacing.map { Timestamp.duration($0) } ?? "-").padding(toLength: 13)
                    + (summary.longestVisibleStale > 0 ? Timestamp.duration(summary.longestVisibleStale) : "0"))
        }
        return lines.joined(separator: "\n")
    }

    struct JSONDeferral: Encodable {
        var from: String
        var fromSeconds: Double
        var until: String?
        var cause: String
    }

    struct JSONReload: Encodable {
        var time: String
        var timeSeconds: Double
        var instance: String
        var plugin: String
        var kind: String
        var reason: String
        var counted: Bool
        var freeReason: String?
        var budgetUsed: Int?
        var allowance: Int?
        var attempt: Int
        var deferred: JSONDeferral?
        var wouldHaveBeenDeferred: JSONDeferral?
        var outcome: String
        var entries: Int
        var policy: JSONReport.Policy?
        var failure: JSONReport.Failure?
    }

    struct JSONSummary: Encodable {
        var instance: String
        var counted: Int
        var free: Int
        var deferrals: Int
        var failures: Int
        var maxCountedIn24h: Int
        var allowanceAtEnd: Int
        var shortestCountedSpacingSeconds: Double?
        var longestVisibleStaleSeconds: Double
        var showsAtEnd: String?
    }

    struct JSONEvent: Encodable {
        var time: String
        var timeSeconds: Double
        var event: String
    }

    struct JSONDisplay: Encodable {
        var time: String
        var instance: String
        var entryDate: String
        var content: String
    }

    struct JSONStack: Encodable {
        var stack: String
        var time: String
        var top: String?
    }

    struct Document: Encodable {
        var schemaVersion = JSONReport.schemaVersion
        var scenario: String
        var start: String
        var end: String
        var seed: UInt64?
        var developerMode: Bool
        var pluginCalls: Int
        var memoizedCalls: Int
        var reloads: [JSONReload]
        var events: [JSONEvent]
        var stacks: [JSONStack]
        var display: [JSONDisplay]
        var summary: [JSONSummary]
        /// `--fleet N`: the requests a server would see from N devices.
        var fleet: FleetReport?
    }

    static func deferral(_ value: Deferral?) -> JSONDeferral? {
        value.map {
            JSONDeferral(
                from: Timestamp.iso8601($0.from), fromSeconds: $0.from, until: $0.until.map(Timestamp.iso8601),
                cause: $0.cause.rawValue)
        }
    }

    static func json(_ result: ScenarioSimulator.Result) -> Document {
        Document(
            scenario: result.scenario.file, start: Timestamp.iso8601(result.scenario.start),
            end: Timestamp.iso8601(result.end), seed: result.scenario.seed,
            developerMode: result.scenario.configuration.developerMode, pluginCalls: result.pluginCalls,
            memoizedCalls: result.memoizedCalls,
            reloads: result.reloads.map { reload in
                let d = reload.decision
                var freeReason: String?
                if case .free(let reason) = d.charge { freeReason = reason.rawValue }
                return JSONReload(
                    time: Timestamp.iso8601(d.time), timeSeconds: d.time, instance: d.instanceID, plugin: d.plugin,
                    kind: d.kind, reason: d.trigger.description, counted: d.charge.isCounted, freeReason: freeReason,
                    budgetUsed: d.countedInWindow, allowance: d.allowance, attempt: d.attempt,
                    deferred: deferral(d.deferral), wouldHaveBeenDeferred: deferral(d.wouldHaveBeenDeferred),
                    outcome: reload.outcome, entries: reload.entries, policy: reload.policy.map(JSONReport.Policy.init),
                    failure: reload.failure.map(JSONReport.Failure.init))
            },
            events: result.events.map {
                JSONEvent(time: Timestamp.iso8601($0.time), timeSeconds: $0.time, event: $0.label)
            },
            stacks: result.stacks.map { JSONStack(stack: $0.stack, time: Timestamp.iso8601($0.time), top: $0.top) },
            display: result.display.map {
                JSONDisplay(
                    time: Timestamp.iso8601($0.time), instance: $0.instance, entryDate: Timestamp.iso8601($0.entryDate),
                    content: $0.content)
            },
            summary: result.summaries.map {
                JSONSummary(
                    instance: $0.instance, counted: $0.counted, free: $0.free, deferrals: $0.deferrals,
                    failures: $0.failures, maxCountedIn24h: $0.maxCountedIn24h, allowanceAtEnd: $0.allowanceAtEnd,
                    shortestCountedSpacingSeconds: $0.shortestCountedSpacing,
                    longestVisibleStaleSeconds: $0.longestVisibleStale, showsAtEnd: $0.shows)
            })
    }
}
