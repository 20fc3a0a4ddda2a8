import WidgetHostModel
import WidgetHostScheduler

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `widgethost simulate --json`, written as the run goes: one document
/// (schema in docs/simulate.md) whose `reloads` go to the output as they
/// happen, one record a line; `events` and `display`, which come after them
/// in the document, wait in anonymous temporary files, not in memory. The
/// summary is written from the per-instance accumulators at the end.
final class SimulationJSONWriter {
    private let out: ReportStream
    private let events: ReportStream
    private let display: ReportStream
    private let encoder: JSONEncoder
    private var reloadCount = 0
    private var eventCount = 0
    private var displayCount = 0

    init(_ out: ReportStream) throws(ReportStream.WriteError) {
        self.out = out
        events = try ReportStream.spool()
        display = try ReportStream.spool()
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    }

    private func encode(_ value: some Encodable) -> String {
        guard let data = try? encoder.encode(value) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The document's first members, up to the opening of `reloads`.
    func begin(_ scenario: Scenario, end: Double) {
        out.line("{")
        out.line("  \"schemaVersion\": \(JSONReport.schemaVersion),")
        out.line("  \"scenario\": \(encode(scenario.file)),")
        out.line("  \"start\": \(encode(Timestamp.iso8601(scenario.start))),")
        out.line("  \"end\": \(encode(Timestamp.iso8601(end))),")
        if let seed = scenario.seed { out.line("  \"seed\": \(seed),") }
        out.line("  \"developerMode\": \(scenario.configuration.developerMode),")
        out.write("  \"reloads\": [")
    }

    /// One record of the run, as it happens.
    func write(_ record: ScenarioSimulator.Record) {
        switch record {
        case .reload(let reload):
            out.write(reloadCount == 0 ? "\n    " : ",\n    ")
            out.write(encode(SimulationReport.json(reload)))
            reloadCount += 1
        case .event(let event):
            events.write(eventCount == 0 ? "\n    " : ",\n    ")
            events.write(encode(SimulationReport.json(event)))
            eventCount += 1
        case .display(let change):
            display.write(displayCount == 0 ? "\n    " : ",\n    ")
            display.write(encode(SimulationReport.json(change)))
            displayCount += 1
        }
    }

    /// The rest of the document, after the last record.
    func finish(_ result: ScenarioSimulator.Result, fleet: FleetReport?) throws(ReportStream.WriteError) {
        out.line(reloadCount == 0 ? "]," : "\n  ],")
        out.write("  \"events\": [")
        out.append(contentsOf: events)
        out.line(eventCount == 0 ? "]," : "\n  ],")
        out.write("  \"display\": [")
        out.append(contentsOf: display)
        out.line(displayCount == 0 ? "]," : "\n  ],")
        out.write("  \"stacks\": [")
        for (index, sample) in result.stacks.enumerated() {
            out.write((index == 0 ? "\n    " : ",\n    ") + encode(SimulationReport.json(sample)))
        }
        out.line(result.stacks.isEmpty ? "]," : "\n  ],")
        out.line("  \"pluginCalls\": \(result.pluginCalls),")
        out.line("  \"memoizedCalls\": \(result.memoizedCalls),")
        out.write("  \"summary\": [")
        for index in result.summaries.indices {
            out.write((index == 0 ? "\n    " : ",\n    ") + encode(SimulationReport.json(result.summary(index))))
        }
        out.write(result.summaries.isEmpty ? "]" : "\n  ]")
        if let fleet { out.write(",\n  \"fleet\": " + encode(fleet)) }
        out.line("\n}")
        try out.finish()
    }
}
