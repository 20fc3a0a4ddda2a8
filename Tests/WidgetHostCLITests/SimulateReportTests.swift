import Foundation
import Testing
import WidgetHostModel
import WidgetHostScheduler

@testable import WidgetHostCLI

/// The streamed report of `widgethost simulate` (issue 17: peak memory): the
/// summary accumulated reload by reload equals the one computed over the
/// whole run, and the document written piece by piece is one valid JSON
/// document holding every record.
@Suite("widgethost simulate: the streamed report")
struct SimulateReportTests {
    /// The summary's window figures over the whole list of counted times, as
    /// the report computed them before it streamed.
    static func wholeRun(_ counted: [Double], window: Double) -> (max: Int, spacing: Double?) {
        var most = 0
        var spacing: Double?
        var low = 0
        for high in counted.indices {
            while counted[high] - counted[low] >= window { low += 1 }
            most = max(most, high - low + 1)
            if high > 0 {
                let gap = counted[high] - counted[high - 1]
                spacing = min(spacing ?? gap, gap)
            }
        }
        return (most, spacing)
    }

    static func reload(at time: Double, counted: Bool, deferredFrom: Double?, visible: Bool) -> ScenarioSimulator.Reload
    {
        let decision = ReloadDecision(
            instanceID: "w", plugin: "p", kind: "k", time: time, trigger: .policy,
            charge: counted ? .counted : .free(.appForeground), attempt: 0,
            deferral: deferredFrom.map { Deferral(from: $0, until: time, cause: .budget) })
        return ScenarioSimulator.Reload(
            decision: decision, outcome: "ok", entries: 1, policy: .atEnd, visible: visible, failure: nil)
    }

    @Test func summaryAccumulatedReloadByReloadMatchesTheWholeRun() {
        var random = SplitMix64(seed: 17)
        for round in 0..<200 {
            let window = [3_600.0, 86_400][round % 2]
            var time = 1_795_000_000.0
            var summary = SimulationSummary(instance: "w")
            var counted: [Double] = []
            var free = 0
            var longestStale = 0.0
            for _ in 0..<(Int(random.unit() * 300)) {
                // Gaps from 0 (a burst at one moment) to 3 h, fractional seconds included.
                time += (random.unit() < 0.2 ? 0 : random.unit() * 10_800)
                let isCounted = random.unit() < 0.7
                let deferredFrom = random.unit() < 0.3 ? time - random.unit() * 7_200 : nil
                let visible = random.unit() < 0.5
                summary.add(
                    Self.reload(at: time, counted: isCounted, deferredFrom: deferredFrom, visible: visible),
                    window: window)
                if isCounted { counted.append(time) } else { free += 1 }
                if visible, let deferredFrom { longestStale = max(longestStale, time - deferredFrom) }
            }
            let expected = Self.wholeRun(counted, window: window)
            #expect(summary.counted == counted.count)
            #expect(summary.free == free)
            #expect(summary.maxCountedIn24h == expected.max, "round \(round)")
            #expect(summary.shortestCountedSpacing == expected.spacing, "round \(round)")
            #expect(summary.longestVisibleStale == longestStale)
        }
    }

    @Test func streamedJSONIsOneDocumentWithEveryRecord() throws {
        let path = CLI.repositoryRoot + "/samples/scenarios/07-visibility.json"
        let result = try CLI.run([
            "simulate", "--config", path, "--json", "--events", "--display", "--fleet", "3", "--plugin-dir",
            CLI.buildDirectory, "--data-dir", CLI.temporaryDirectory("streamed-json"),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let document = try CLI.json(result.stdout)
        let reloads = document["reloads"] as? [[String: Any]] ?? []
        let summary = document["summary"] as? [[String: Any]] ?? []
        #expect(!reloads.isEmpty)
        // Every reload is in exactly one instance's summary line.
        let summed = summary.reduce(0) { $0 + ($1["counted"] as? Int ?? 0) + ($1["free"] as? Int ?? 0) }
        #expect(summed == reloads.count)
        #expect(!(document["events"] as? [[String: Any]] ?? []).isEmpty)
        #expect(!(document["display"] as? [[String: Any]] ?? []).isEmpty)
        #expect(document["fleet"] as? [String: Any] != nil)
        #expect(document["pluginCalls"] as? Int == reloads.count - (document["memoizedCalls"] as? Int ?? 0))
        // Written as it happened: one reload a line, in time order.
        let lines = result.stdout.split(separator: "\n").filter {
            $0.contains("\"timeSeconds\"") && $0.contains("\"counted\"")
        }
        #expect(lines.count == reloads.count)
        let times = reloads.compactMap { $0["timeSeconds"] as? Double }
        #expect(times == times.sorted())
    }

    @Test func emptySectionsAreEmptyArrays() throws {
        // 01-policies has no events and no stacks; without --display no display changes.
        let path = CLI.repositoryRoot + "/samples/scenarios/01-policies.json"
        let result = try CLI.run([
            "simulate", "--config", path, "--json", "--plugin-dir", CLI.buildDirectory, "--data-dir",
            CLI.temporaryDirectory("streamed-empty"),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let document = try CLI.json(result.stdout)
        #expect((document["reloads"] as? [Any])?.isEmpty == false)
        for section in ["events", "display", "stacks"] {
            #expect((document[section] as? [Any])?.isEmpty == true, "\(section)")
        }
        #expect(document["fleet"] == nil)
    }
}
