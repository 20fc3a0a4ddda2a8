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
        #expect(modes.compactMap { $0["mode"] as? String } == ["worker", "fork-server", "spawn"])
        #expect(object["schemaVersion"] as? Int == 2)
        for mode in modes {
            #expect((mode["coldCallMicroseconds"] as? Double ?? 0) > 0, "the first call is measured apart")
            #expect(mode["calls"] as? Int == 5)
            #expect(mode["failed"] as? Int == 0)
            let latency = try #require(mode["latencyMicroseconds"] as? [String: Double])
            #expect(Set(latency.keys) == ["p50", "p90", "p99", "p99.9", "max", "mean"])
            #expect((latency["p50"] ?? 0) > 0)
            #expect((latency["p50"] ?? 0) <= (latency["max"] ?? 0))
            let histogram = try #require(mode["histogram"] as? [[String: Any]])
            #expect(histogram.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == 5)
            #expect((mode["callsPerSecond"] as? Double ?? 0) > 0)
            let cpu = try #require(mode["cpuMicrosecondsPerCall"] as? [String: Any])
            let host = try #require(cpu["host"] as? Double)
            let total = try #require(cpu["total"] as? Double)
            #expect(host > 0)
            #expect(total >= host)
            #expect((cpu["processors"] as? Int ?? 0) >= 1)
            #expect((cpu["callsPerSecondBound"] as? Double ?? 0) > 0)
            let parts = ["host", "runner", "forkServer", "callChild", "worker"].compactMap { cpu[$0] as? Double }
            #expect(abs(parts.reduce(0, +) - total) < 0.01, "total is the sum of the parts: \(cpu)")
            if mode["mode"] as? String == "spawn" {
                // Each runner is reaped within its call: always known.
                #expect((cpu["runner"] as? Double ?? 0) > 0)
                #expect(cpu["callChild"] == nil)
                #expect(cpu["forkServer"] == nil)
            } else if mode["mode"] as? String == "worker" {
                // The worker's process CPU clock, read after the calls.
                #expect((cpu["worker"] as? Double ?? 0) > 0, "\(cpu)")
                #expect(cpu["runner"] == nil && cpu["callChild"] == nil && cpu["forkServer"] == nil)
            } else {
                #expect(cpu["runner"] == nil)
                // Children are reaped after their calls: both figures come
                // once one was, each more than nothing.
                #expect((cpu["forkServer"] == nil) == (cpu["callChild"] == nil), "\(cpu)")
                for key in ["forkServer", "callChild"] {
                    if let value = cpu[key] as? Double { #expect(value > 0, "\(key)") }
                }
            }
        }
        let ratios = try #require(object["ratios"] as? [[String: Any]])
        #expect(ratios.count == 6, "each mode against each other")
        // Without --rate: back to back, and the load object says so (and nothing else).
        let load = try #require(object["load"] as? [String: Any])
        #expect(load["mode"] as? String == "closed")
        #expect(Set(load.keys) == ["mode"])
    }

    /// Without `--data-dir`, bench's calls get a temporary data directory,
    /// removed when it ends, as every call command's: never the daemon's
    /// plugin data under `$XDG_DATA_HOME/widgethost/plugins`.
    @Test func withoutADataDirectoryBenchWritesNothingOfTheDaemons() throws {
        let home = CLI.temporaryDirectory("bench-data-home")
        let temporary = CLI.temporaryDirectory("bench-tmp")
        try? FileManager.default.removeItem(atPath: home + "/widgethost")
        for leftover in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? [] {
            try? FileManager.default.removeItem(atPath: temporary + "/" + leftover)
        }
        let result = CLI.shell(
            "XDG_DATA_HOME='\(home)' TMPDIR='\(temporary)' '\(CLI.executable)' bench '\(CLI.fixtures)/good.so'"
                + " --entry timeline -n 3 --json")
        #expect(result.status == 0, "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: home + "/widgethost/plugins"), "the daemon's plugin data")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
        #expect(left.allSatisfy { !$0.hasPrefix("widgethost-load.") }, "the temporary data directory stays: \(left)")
    }

    /// A plugin that does not load ends bench with its failure's exit
    /// status (a refused plugin 1, a missing file 2) and, with `--json`, the
    /// error document on standard output, as every command's.
    @Test(arguments: [("bad_magic.so", Int32(1), "abiMismatch"), ("no_such_plugin.so", Int32(2), "fileNotFound")])
    func aPluginThatDoesNotLoadEndsBenchWithItsStatusAndJSON(file: String, status: Int32, code: String) throws {
        let result = try CLI.run([
            "bench", CLI.fixtures + "/" + file, "-n", "2", "--json", "--data-dir", CLI.dataDirectory,
        ])
        #expect(result.status == status, "\(result.stderr)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
        #expect(object["ok"] as? Bool == false)
        #expect((object["failure"] as? [String: Any])?["code"] as? String == code)
        #expect(result.stderr.hasPrefix("error: "))
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
        #expect(result.stdout.contains("closed loop (back to back)"))
        #expect(result.stdout.contains("cpu per call (fork-server): host "))
        #expect(!result.stdout.contains("open loop"))
    }

    /// `--rate`: calls start on a schedule, so the run lasts at least as long as
    /// the schedule (only lower bounds on time: the machine may be busy).
    @Test func openLoopKeepsToTheSchedule() throws {
        var result: CLI.Result?
        let elapsed = try ContinuousClock().measure {
            result = try CLI.run([
                "bench", CLI.fixtures + "/good.so", "--entry", "timeline", "-n", "40", "--rate", "200", "--json",
                "--data-dir", CLI.dataDirectory,
            ])
        }
        let run = try #require(result)
        #expect(run.status == 0, "\(run.stderr)")
        // 40 calls at 200/s: the last is due 39 intervals of 5 ms after the first.
        #expect(elapsed >= .milliseconds(195), "\(elapsed)")
        let object = try CLI.json(run.stdout)
        let load = try #require(object["load"] as? [String: Any])
        #expect(load["mode"] as? String == "open")
        #expect(load["offeredPerSecond"] as? Double == 200)
        let late = try #require(load["lateStarts"] as? Int)
        #expect(late >= 0 && late <= 40)
        // No call starts before it is due, so the achieved rate never exceeds the offered one.
        let achieved = try #require(load["achievedPerSecond"] as? Double)
        #expect(achieved > 0 && achieved <= 200 * 1.000_001, "\(achieved)")
        let modes = try #require(object["modes"] as? [[String: Any]])
        #expect(modes.count == 1)
        let mode = try #require(modes.first)
        #expect(mode["mode"] as? String == "worker", "the default mode")
        #expect(mode["calls"] as? Int == 40)
        let histogram = try #require(mode["histogram"] as? [[String: Any]])
        #expect(histogram.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == 40)
        // Every existing field stays.
        #expect(object["callsPerMode"] as? Int == 40)
        #expect(mode["latencyMicroseconds"] is [String: Double])
        #expect(mode["callsPerSecond"] is Double)
    }

    /// With --isolation all and several workers, every call of either mode takes the next slot.
    @Test func openLoopInterleavesModesOverWorkers() throws {
        let result = try CLI.run([
            "bench", CLI.fixtures + "/good.so", "--entry", "timeline", "-n", "6", "--rate", "400", "--isolation",
            "all", "--concurrency", "2", "--json", "--data-dir", CLI.dataDirectory,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try CLI.json(result.stdout)
        let modes = try #require(object["modes"] as? [[String: Any]])
        #expect(modes.compactMap { $0["mode"] as? String } == ["worker", "fork-server", "spawn"])
        #expect(modes.compactMap { $0["calls"] as? Int } == [6, 6, 6])
        let load = try #require(object["load"] as? [String: Any])
        #expect(load["mode"] as? String == "open")
        #expect(load["offeredPerSecond"] as? Double == 400)
    }

    @Test func openLoopTextSaysHowLatencyIsCounted() throws {
        let result = try CLI.run([
            "bench", CLI.fixtures + "/good.so", "--entry", "timeline", "-n", "10", "--rate", "500",
            "--data-dir", CLI.dataDirectory,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("open loop at 500 calls/s: latency counted from each call's scheduled start"))
        #expect(result.stdout.contains("schedule: achieved "))
        #expect(result.stdout.contains("of 10 calls started more than one interval (2.0 ms) late"))
        #expect(!result.stdout.contains("closed loop"))
        #expect(result.stdout.contains("p99.9 µs"))
    }

    /// A rate near 0 put the first call centuries away, and a million
    /// callers a million sandboxed workers: both hung. Refused before any
    /// call, as usage errors (a bounded run: the helper kills a hang).
    @Test(arguments: [
        (["--rate", "1e-320"], "--rate must be calls per second, from 0.01"),
        (["--rate", "0.001"], "--rate must be calls per second, from 0.01"),
        (["--rate", "nan"], "--rate must be"),
        (["--concurrency", "1000000"], "--concurrency must be from 1 to 256 callers (got 1000000)"),
        (["--concurrency", "0"], "--concurrency must be from 1 to 256"),
        (["-n", "9223372036854775807", "--isolation", "all"], "-n must be from 1 to 100000000"),
    ])
    func rateAndConcurrencyThatWouldHangAreUsageErrors(_ flags: [String], _ expected: String) throws {
        let result = try CLI.run(["bench", CLI.fixtures + "/good.so", "--data-dir", CLI.dataDirectory] + flags)
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains(expected), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    /// A --config that timeline refuses (a parameter the kind lacks) bench
    /// refuses too, with the same message and exit status, before its first
    /// call (it measured 1000 failed calls and exited 0).
    @Test func aConfigurationTimelineRefusesBenchRefuses() throws {
        let arguments = [
            CLI.fixtures + "/good.so", "--kind", "test.fixture", "--config", #"{"nope": 1}"#, "--data-dir",
            CLI.dataDirectory,
        ]
        let timeline = try CLI.run(["timeline"] + arguments)
        let bench = try CLI.run(["bench", "-n", "3"] + arguments)
        let message = #"has no parameter "nope""#
        #expect(timeline.status == 2, "\(timeline.stdout)\(timeline.stderr)")
        #expect((timeline.stdout + timeline.stderr).contains(message), "\(timeline.stdout)\(timeline.stderr)")
        #expect(bench.status == 2, "\(bench.stdout)\(bench.stderr)")
        #expect(bench.stderr.contains("bad configuration for"), "\(bench.stderr)")
        #expect(bench.stderr.contains(message), "\(bench.stderr)")
        #expect(!bench.stdout.contains("calls per mode"), "\(bench.stdout)")
    }

    @Test(arguments: ["0", "-5", "1000001", "fast"])
    func badRateIsAUsageError(_ rate: String) throws {
        let result = try CLI.run([
            "bench", CLI.fixtures + "/good.so", "--rate", rate, "--data-dir", CLI.dataDirectory,
        ])
        #expect(result.status == 2, "\(result.stdout)")
        #expect(result.stderr.contains("--rate"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }
}
