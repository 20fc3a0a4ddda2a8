import Foundation
import Testing

/// `widgethost bench`: the structure of its output, never its timings.
@Suite("Bench command")
struct BenchCommandTests {
    @Test func allModesJSONHasTheDocumentedStructure() throws {
        let result = try CLI.run([
            "bench", CLI.fixtures + "/good.so", "--entry", "timeline", "-n", "5", "--isolation", "all", "--json",
            "--data-dir", CLI.dataDirectory,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["kind"] as? String == "test.fixture")
        #expect(object["entryPoint"] as? String == "timeline")
        #expect(object["callsPerMode"] as? Int == 5)
        #expect(object["concurrency"] as? Int == 1)
        let modes = try #require(object["modes"] as? [[String: Any]])
        #expect(modes.compactMap { $0["mode"] as? String } == ["fork-server", "spawn"])
        for mode in modes {
            #expect(mode["calls"] as? Int == 5)
            #expect(mode["failed"] as? Int == 0)
            let latency = try #require(mode["latencyMicroseconds"] as? [String: Double])
            #expect(Set(latency.keys) == ["p50", "p90", "p99", "p99.9", "max", "mean"])
            #expect((latency["p50"] ?? 0) > 0)
            #expect((latency["p50"] ?? 0) <= (latency["max"] ?? 0))
            let histogram = try #require(mode["histogram"] as? [[String: Any]])
            #expect(histogram.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == 5)
            #expect((mode["callsPerSecond"] as? Double ?? 0) > 0)
        }
        let ratios = try #require(object["ratios"] as? [[String: Any]])
        #expect(ratios.count == 2)
    }

    @Test func textShowsTheTableAndCountsFailuresByOutcome() throws {
        let result = try CLI.run([
            "bench", CLI.fixtures + "/crash_segv.so", "--entry", "timeline", "-n", "3", "--isolation", "fork-server",
            "--data-dir", CLI.dataDirectory,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("p99.9 µs"))
        #expect(result.stdout.contains("failures (fork-server): crashed 3"))
        #expect(result.stdout.contains("latency histogram"))
    }
}
