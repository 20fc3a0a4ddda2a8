import WidgetHostModel
import WidgetHostScheduler

/// `widgethost simulate`'s text report, written as the run goes: the header,
/// then a line per reload (and per event with `--events`, per display change
/// with `--display`) in the order they happen, then the stacks and the
/// summary per instance at the end.
final class SimulationTextWriter {
    private let out: ReportStream
    private let showEvents: Bool
    private let showDisplay: Bool
    private static let indent = String(repeating: " ", count: 36)

    init(_ out: ReportStream, showEvents: Bool, showDisplay: Bool) {
        self.out = out
        self.showEvents = showEvents
        self.showDisplay = showDisplay
    }

    /// The scenario line and the column titles.
    func begin(_ scenario: Scenario, end: Double) {
        let days = (end - scenario.start) / 86_400
        out.line(
            "Scenario \(scenario.file): \(scenario.instances.count) instance(s), \(Timestamp.duration(days * 86_400)) from \(Timestamp.iso8601(scenario.start))"
                + (scenario.seed.map { ", seed \($0)" } ?? "")
                + (scenario.configuration.developerMode ? ", developer mode" : ""))
        if !scenario.summary.isEmpty { out.line(scenario.summary) }
        out.line("")
        out.line(
            "TIME".padding(toLength: 22) + "INSTANCE".padding(toLength: 14) + "CHARGE".padding(toLength: 28)
                + "RESULT".padding(toLength: 44) + "REASON")
    }

    /// One record of the run, as it happens.
    func write(_ record: ScenarioSimulator.Record) {
        switch record {
        case .reload(let reload): out.line(Self.line(reload))
        case .event(let event):
            guard showEvents else { return }
            out.line(Timestamp.iso8601(event.time).padding(toLength: 22) + "event: \(event.label)")
        case .display(let change):
            guard showDisplay else { return }
            out.line(
                Timestamp.iso8601(change.time).padding(toLength: 22) + change.instance.padding(toLength: 14)
                    + "shows the entry of \(Timestamp.iso8601(change.entryDate)): \(change.content)")
        }
    }

    static func line(_ reload: ScenarioSimulator.Reload) -> String {
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
                "\n" + indent
                + "deferred \(Timestamp.duration(decision.time - deferral.from)) from \(Timestamp.iso8601(deferral.from)) (\(deferral.cause.rawValue))"
        }
        if let would = decision.wouldHaveBeenDeferred {
            let until = would.until.map { Timestamp.iso8601($0) } ?? "when shown"
            text += "\n" + indent + "developer mode: would have been deferred to \(until) (\(would.cause.rawValue))"
        }
        if let failure = reload.failure {
            text += "\n" + indent + failure.message
        }
        return text
    }

    /// The stacks and the summary, after the last record.
    func finish(_ result: ScenarioSimulator.Result, fleet: FleetReport?) throws(ReportStream.WriteError) {
        if !result.stacks.isEmpty {
            out.line("")
            out.line("Stacks (top instance by relevance)")
            var previous: [String: String?] = [:]
            for sample in result.stacks where previous[sample.stack] != .some(sample.top) {
                previous[sample.stack] = .some(sample.top)
                out.line("  \(Timestamp.iso8601(sample.time))  \(sample.stack): \(sample.top ?? "none")")
            }
        }
        out.line("")
        out.line(
            "Summary (\(result.pluginCalls) plugin calls"
                + (result.memoizedCalls > 0 ? ", \(result.memoizedCalls) answers reused (deterministic kinds)" : "")
                + ")")
        out.line(
            "INSTANCE".padding(toLength: 14) + "COUNTED".padding(toLength: 9) + "FREE".padding(toLength: 6)
                + "DEFERRED".padding(toLength: 10) + "FAILED".padding(toLength: 8) + "MAX/24H".padding(toLength: 9)
                + "ALLOWANCE".padding(toLength: 11) + "MIN SPACING".padding(toLength: 13) + "LONGEST STALE")
        for index in result.summaries.indices {
            let summary = result.summary(index)
            out.line(
                summary.instance.padding(toLength: 14) + "\(summary.counted)".padding(toLength: 9)
                    + "\(summary.free)".padding(toLength: 6) + "\(summary.deferrals)".padding(toLength: 10)
                    + "\(summary.failures)".padding(toLength: 8) + "\(summary.maxCountedIn24h)".padding(toLength: 9)
                    + "\(summary.allowanceAtEnd)".padding(toLength: 11)
                    + (summary.shortestCountedSpacing.map { Timestamp.duration($0) } ?? "-").padding(toLength: 13)
                    + (summary.longestVisibleStale > 0 ? Timestamp.duration(summary.longestVisibleStale) : "0"))
        }
        if let fleet { out.line("\n" + fleet.text) }
        try out.finish()
    }
}
