import ArgumentParser
import Foundation
import Histogram
import WidgetHostIsolation
import WidgetHostModel

#if canImport(Glibc)
    import Glibc
#endif

/// `--isolation` for bench: one mode, or every mode interleaved.
enum BenchIsolation: String, ExpressibleByArgument, CaseIterable {
    case worker
    case forkServer = "fork-server"
    case spawn
    case inProcess = "in-process"
    /// worker, fork-server and spawn (not in-process: debugging only)
    case all

    var modes: [IsolationMode] {
        switch self {
        case .worker: [.worker]
        case .forkServer: [.forkServer]
        case .spawn: [.spawn]
        case .inProcess: [.inProcess]
        case .all: [.worker, .forkServer, .spawn]
        }
    }
}

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure the latency of isolated calls of one entry point.",
        discussion: """
            Calls one kind's entry point N times per isolation mode and records each
            call's latency, as the host sees it (sending the call to having the
            validated answer), in an HdrHistogram: p50, p90, p99, p99.9, max, calls
            per second, failures by outcome and a histogram. With --isolation all the
            modes are measured in one run, interleaved call by call, and compared.
            The first call of each worker and mode (starting a fork server) is a
            warm-up and not recorded.

            By default each worker calls back to back (closed loop): that measures
            how fast the host can go more than the latency a host making a few calls
            a second sees. With --rate R the calls are started on a schedule (open
            loop): call k of the run is due at t0 + k/R, R being the total rate
            over the workers and modes (with --concurrency C a worker takes every
            C-th call; with --isolation all every call of either mode takes the
            next slot), t0 one interval after the warm-up. Latency counts from
            each call's scheduled start, so when the host falls behind, the wait
            is in the figures; the report gives the achieved rate and the calls
            that started more than one interval late, and warns when they are
            more than 1 %.

            Examples:
              widgethost bench .build/release/libCountdownPlugin.so --entry snapshot -n 2000 --isolation all
              widgethost bench .build/release/libCountdownPlugin.so --entry snapshot -n 400 --rate 200
              widgethost bench my.so --kind org.example.weather --concurrency 2 --json
            """
    )

    @Argument(help: ArgumentHelp("The plugin's shared object.", valueName: "plugin.so"))
    var plugin: String

    @Option(help: ArgumentHelp("The widget kind to call (default: the first with the entry point).", valueName: "id"))
    var kind: String?

    @Option(help: ArgumentHelp("The family to render for (default: the kind's first).", valueName: "family"))
    var family: WidgetFamily?

    @Option(
        help: ArgumentHelp("The entry point to call (default: snapshot).", valueName: "placeholder|snapshot|timeline"))
    var entry: EntryPoint?

    @Flag(help: "Call as WidgetKit does for the widget gallery (context.isPreview).")
    var preview = false

    @Option(name: .short, help: "Calls per isolation mode.")
    var n = 1000

    @Option(help: "Callers at the same time (each with its own engine: its own worker or fork server).")
    var concurrency = 1

    @Option(
        help: ArgumentHelp(
            "The isolation to measure (all: worker, fork-server and spawn, interleaved).",
            valueName: "worker|fork-server|spawn|in-process|all"))
    var isolation: BenchIsolation = .worker

    // .unconditional: `--rate -5` reaches validate() (and its message) instead of being taken for an option.
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Open loop: start this many calls per second in total, latency counted from each call's scheduled start (default: back to back).",
            valueName: "calls/s"))
    var rate: Double?

    @OptionGroup var options: CallOptions

    func validate() throws {
        guard (1...BenchLoad.maximumCalls).contains(n) else {
            throw ValidationError("-n must be from 1 to \(BenchLoad.maximumCalls) calls per mode (got \(n))")
        }
        guard (1...BenchLoad.maximumConcurrency).contains(concurrency) else {
            throw ValidationError(
                "--concurrency must be from 1 to \(BenchLoad.maximumConcurrency) callers (got \(concurrency)): each caller has a worker or fork server of its own"
            )
        }
        if let rate, !(rate >= BenchLoad.minimumRate && rate <= BenchLoad.maximumRate) {
            throw ValidationError(
                "--rate must be calls per second, from \(BenchLoad.minimumRate) (one call per \(Int(1 / BenchLoad.minimumRate)) s) to \(Int(BenchLoad.maximumRate)) (got \(BenchReport.rate(rate)))"
            )
        }
    }

    func run() throws {
        InterruptCleanup.enable()
        let entry = entry ?? .snapshot
        let isolationOptions = options.isolation()
        if isolation == .inProcess { FileHandleOutput.standardError(InProcessPlugin.warning) }
        let described = IsolatedRunner.run(plugin: plugin, options: isolationOptions)
        guard let description = described.plugin, described.failure == nil else {
            // Its exit status and, with --json, its error document: the
            // command line's handler (``WidgetHostCommand``) renders it.
            throw described.failure ?? PluginFailure(plugin: plugin, reason: .protocolViolation("no descriptor"))
        }
        let selected: KindDescription
        if let kind {
            guard let found = description.kind(kind) else {
                throw UsageError(
                    "\(description.path) has no kind \"\(kind)\"; it has: \(description.kinds.map(\.id).joined(separator: ", "))"
                )
            }
            selected = found
        } else {
            guard let found = description.kinds.first(where: { $0.entryPoints.contains(entry) }) else {
                throw UsageError("no kind of \(description.path) has a \(entry) entry point")
            }
            selected = found
        }
        guard let chosenFamily = family ?? selected.families.first else {
            throw UsageError("the kind \(selected.id) supports no family")
        }
        // As every call command's: a temporary folder unless --data-dir,
        // never the daemon's plugin data.
        let dataDirectory = try options.callDataDirectory(for: plugin)
        defer { dataDirectory.remove() }
        let call = PluginCall(
            entry, kind: selected.id, family: chosenFamily, isPreview: preview,
            now: options.now?.seconds ?? wallClockNow(), timeout: options.timeout?.seconds,
            configuration: try options.configuration(for: selected, plugin: description.path),
            locale: options.locale,
            dataDirectory: dataDirectory.path, allowNetwork: selected.needsNetwork)
        let bench = Bench(
            plugin: plugin, call: call, modes: isolation.modes, calls: n, concurrency: concurrency,
            load: rate.map { .open(callsPerSecond: $0) } ?? .closed, options: isolationOptions,
            showProgress: isatty(2) == 1 && !options.json)
        let results = bench.run()
        if options.json {
            print(JSONReport.encode(BenchReport.json(results, call: call, plugin: description.path, bench: bench)))
            if let warning = BenchReport.keepUpWarning(results.schedule) {
                FileHandleOutput.standardError(warning + "\n")
            }
        } else {
            print(BenchReport.text(results, call: call, plugin: description.path, bench: bench))
        }
    }
}

/// What one mode measured.
struct ModeResult {
    var mode: IsolationMode
    var histogram = Histogram<UInt64>(highestTrackableValue: 3_600_000_000_000, numberOfSignificantValueDigits: .three)
    var failures: [String: Int] = [:]
    /// Nanoseconds spent in this mode's calls, summed over the workers.
    var busyNanoseconds: UInt64 = 0
    var calls = 0
    var fallback: String?
    /// The warm-up of the worker or fork server.
    var warmUp: WarmUpOutcome?
    /// The first call of each caller (loading the plugin, starting a worker
    /// or fork server), in ns: not in the histogram.
    var cold = Histogram<UInt64>(highestTrackableValue: 3_600_000_000_000, numberOfSignificantValueDigits: .three)
    /// The entry point alone, measured in the child (successful calls), in ns.
    var provider = Histogram<UInt64>(highestTrackableValue: 3_600_000_000_000, numberOfSignificantValueDigits: .three)
    /// Calls made right after a failed call of the same caller, in ns: what a
    /// timeout or crash costs the next call (a warm standby should keep it
    /// near the median).
    var afterFailure = Histogram<UInt64>(
        highestTrackableValue: 3_600_000_000_000, numberOfSignificantValueDigits: .three)
    /// Fork server timeouts: deadline to SIGKILL of the child's group, in ns.
    var lateness = Histogram<UInt64>(highestTrackableValue: 3_600_000_000_000, numberOfSignificantValueDigits: .three)
    /// What the calls cost in CPU time, by process.
    var cpu = BenchCPU()

    mutating func add(_ other: ModeResult) {
        histogram.add(other.histogram)
        cold.add(other.cold)
        afterFailure.add(other.afterFailure)
        lateness.add(other.lateness)
        provider.add(other.provider)
        for (code, count) in other.failures { failures[code, default: 0] += count }
        busyNanoseconds += other.busyNanoseconds
        calls += other.calls
        fallback = fallback ?? other.fallback
        warmUp = warmUp ?? other.warmUp
        cpu.add(other.cpu)
    }
}

/// Runs the measurement: `concurrency` workers, each making its share of the
/// calls of every mode, interleaved call by call: back to back (closed loop),
/// or, in an open loop, each call at its slot of the schedule.
struct Bench: Sendable {
    var plugin: String
    var call: PluginCall
    var modes: [IsolationMode]
    var calls: Int
    var concurrency: Int
    /// Back to back, or open loop at a fixed rate.
    var load: BenchLoad = .closed
    var options: IsolationOptions
    var showProgress: Bool

    func run() -> BenchResults {
        let lock = NSLock()
        nonisolated(unsafe) var merged = modes.map { ModeResult(mode: $0) }
        nonisolated(unsafe) var done = 0
        let total = calls * modes.count
        let workers = concurrency
        let plugin = plugin
        let call = call
        let modes = modes
        let options = options
        let calls = calls
        let load = load
        let showProgress = showProgress
        // Slot 0 is due one interval after the last worker's warm-up: the first
        // call finds the fork server as rested as the others do.
        let startLine = BenchStartLine(workers: workers, lead: load.intervalNanoseconds)
        nonisolated(unsafe) var schedule: ScheduleResult?
        let work: @Sendable (Int) -> Void = { worker in
            var results = modes.map { ModeResult(mode: $0) }
            // One engine per mode and caller: the code every other command runs.
            let engines = modes.map { IsolationEngine(plugin: plugin, options: options, mode: $0) }
            func once(_ index: Int) -> CallOutput { engines[index].call(call) }
            var lastFailed = modes.map { _ in false }
            /// Records one call: `latency` goes into the histogram, `busy` is the call alone.
            func record(_ index: Int, latency: UInt64, busy: UInt64, hostCPU: Double, _ output: CallOutput) {
                _ = results[index].histogram.record(latency)
                if lastFailed[index] { _ = results[index].afterFailure.record(latency) }
                lastFailed[index] = output.failure != nil
                results[index].cpu.record(hostSeconds: hostCPU, output)
                results[index].busyNanoseconds += busy
                results[index].calls += 1
                if let seconds = output.timing.providerSeconds {
                    _ = results[index].provider.record(UInt64(max(0, seconds) * 1e9))
                }
                if let failure = output.failure {
                    results[index].failures[failure.code, default: 0] += 1
                    if case .timedOut = failure.reason, let late = engines[index].lastTimeoutLateness {
                        _ = results[index].lateness.record(UInt64(max(0, late) * 1e9))
                    }
                }
            }
            func progressed(by count: Int) {
                guard showProgress else { return }
                lock.lock()
                done += count
                let now = done
                lock.unlock()
                if now % max(1, total / 200) < count || now == total {
                    BenchReport.progress(done: now, total: total)
                }
            }
            // The first call of each mode starts its worker or fork server:
            // measured as the cold call, not recorded with the others.
            for index in modes.indices {
                let start = DispatchTime.now().uptimeNanoseconds
                _ = once(index)
                _ = results[index].cold.record(DispatchTime.now().uptimeNanoseconds - start)
            }
            let serverCPUBefore = engines.map { $0.forkServerCPU }
            let workerCPUBefore = engines.map { $0.workerCPUSeconds }
            switch load {
            case .closed:
                let share = calls / workers + (worker < calls % workers ? 1 : 0)
                for _ in 0..<share {
                    for index in modes.indices {
                        let cpuStart = CPUUsage.currentThreadSeconds()
                        let start = DispatchTime.now().uptimeNanoseconds
                        let output = once(index)
                        let nanoseconds = DispatchTime.now().uptimeNanoseconds - start
                        let hostCPU = CPUUsage.currentThreadSeconds() - cpuStart
                        record(index, latency: nanoseconds, busy: nanoseconds, hostCPU: hostCPU, output)
                    }
                    progressed(by: modes.count)
                }
            case .open(let rate):
                // Slot k (every call of every mode, in order) is due at t0 + k / rate;
                // worker w takes slots w, w + C, w + 2C, ... and slot k calls mode k mod M.
                let plan = BenchSchedule(callsPerSecond: rate, start: startLine.arrive())
                var kept = ScheduleResult(offeredPerSecond: rate, firstDue: plan.start)
                var slot = worker
                while slot < total {
                    let due = plan.due(slot)
                    MonotonicClock.sleep(until: due)
                    let cpuStart = CPUUsage.currentThreadSeconds()
                    let start = MonotonicClock.now()
                    let output = once(slot % modes.count)
                    let end = MonotonicClock.now()
                    let hostCPU = CPUUsage.currentThreadSeconds() - cpuStart
                    record(
                        slot % modes.count, latency: end - min(due, end), busy: end - min(start, end),
                        hostCPU: hostCPU, output)
                    kept.calls += 1
                    if start > due, start - due > plan.intervalNanoseconds { kept.lateStarts += 1 }
                    kept.lastStart = max(kept.lastStart, start)
                    progressed(by: 1)
                    slot += workers
                }
                lock.lock()
                if schedule == nil { schedule = kept } else { schedule?.add(kept) }
                lock.unlock()
            }
            for index in modes.indices {
                let engine = engines[index]
                if let after = engine.forkServerCPU, let before = serverCPUBefore[index] {
                    results[index].cpu.forkServer = after - before
                }
                if modes[index] == .worker {
                    results[index].cpu.workerSeconds = engine.workerCPUSeconds - workerCPUBefore[index]
                    results[index].cpu.workerCalls = results[index].calls
                }
                if modes[index] == .forkServer, engine.isolationSummary != "fork-server" {
                    results[index].fallback = engine.isolationSummary
                }
                if modes[index] == .worker || modes[index] == .forkServer { results[index].warmUp = engine.warmUp }
                engine.stop()
            }
            lock.lock()
            for index in modes.indices { merged[index].add(results[index]) }
            lock.unlock()
        }
        switch load {
        case .closed: DispatchQueue.concurrentPerform(iterations: workers, execute: work)
        case .open: runOnThreads(workers, work)
        }
        if showProgress { FileHandleOutput.standardError("\r\u{1B}[K") }
        return BenchResults(modes: merged, schedule: schedule)
    }
}

/// What `Bench.run` measured: each mode's calls, and for an open loop how well it kept to the schedule.
struct BenchResults {
    var modes: [ModeResult]
    /// nil for a closed loop.
    var schedule: ScheduleResult?
}

/// Text, JSON and the progress bar of `widgethost bench`.
enum BenchReport {
    static let percentiles: [(name: String, value: Double)] = [
        ("p50", 50), ("p90", 90), ("p99", 99), ("p99.9", 99.9),
    ]

    static func micro(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1000 }

    static func callsPerSecond(_ result: ModeResult, concurrency: Int) -> Double {
        guard result.busyNanoseconds > 0 else { return 0 }
        return Double(result.calls) * Double(concurrency) * 1e9 / Double(result.busyNanoseconds)
    }

    /// Back to back, when the calls' CPU time (every mode's, every process's)
    /// kept the CPUs 80 % busy or more, the run was bound by CPU: latency
    /// includes waiting for a CPU (the previous calls' forks and
    /// teardowns), which an open loop at a lower rate does not. Says so;
    /// nil otherwise. `concurrency` workers shared the time spent in calls.
    static func cpuBoundNote(_ run: BenchResults, concurrency: Int) -> String? {
        guard run.schedule == nil else { return nil }
        var cpuSeconds = 0.0
        var wallSeconds = 0.0
        var processors = 1
        for result in run.modes {
            guard let cpu = result.cpu.perCall else { return nil }
            cpuSeconds += cpu.total / 1e6 * Double(result.calls)
            wallSeconds += Double(result.busyNanoseconds) / 1e9 / Double(max(concurrency, 1))
            processors = cpu.processors
        }
        guard wallSeconds > 0 else { return nil }
        let busy = cpuSeconds / (wallSeconds * Double(processors))
        guard busy >= 0.8 else { return nil }
        return
            "note: back to back, the calls kept the \(processors) CPU\(processors == 1 ? "" : "s") \(Int((min(busy, 1) * 100).rounded())) % busy: latency includes waiting for a CPU; --rate R measures a call's latency at R calls/s (docs/performance.md)"
    }

    static func progress(done: Int, total: Int) {
        let width = 30
        let filled = total > 0 ? done * width / total : width
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        FileHandleOutput.standardError("\r[\(bar)] \(done * 100 / max(total, 1))% \(done)/\(total) calls")
    }

    /// Log-spaced buckets between the smallest and largest latency.
    static func buckets(_ histogram: Histogram<UInt64>, count: Int = 12) -> [(upTo: UInt64, count: UInt64)] {
        guard histogram.totalCount > 0 else { return [] }
        let low = Double(max(histogram.min, 1))
        let high = Double(max(histogram.max, histogram.min + 1))
        let ratio = pow(high / low, 1 / Double(count))
        // Counts come from cumulative counts (values up to each bound): a
        // value sits in exactly one bucket even where HdrHistogram's
        // equivalent-value ranges straddle a bound, so the buckets add up to
        // the number of calls.
        var result: [(UInt64, UInt64)] = []
        var lower = UInt64(0)
        var countedSoFar = UInt64(0)
        for step in 1...count {
            let upper = step == count ? histogram.max : min(UInt64(low * pow(ratio, Double(step))), histogram.max)
            guard upper >= lower else { continue }
            let cumulative =
                step == count ? histogram.totalCount : min(histogram.count(within: 0...upper), histogram.totalCount)
            result.append((upper, cumulative - min(countedSoFar, cumulative)))
            countedSoFar = max(countedSoFar, cumulative)
            lower = upper + 1
        }
        return result
    }

    /// A rate as typed: `200`, `0.5`, `33.333`.
    static func rate(_ callsPerSecond: Double) -> String {
        guard callsPerSecond.isFinite, abs(callsPerSecond) < 1e15 else { return "\(callsPerSecond)" }
        if callsPerSecond == callsPerSecond.rounded() { return String(Int(callsPerSecond)) }
        var text = String(format: "%.3f", callsPerSecond)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }

    /// How the calls were started, for the text report: one line, two for an open loop.
    static func loadLines(_ schedule: ScheduleResult?) -> [String] {
        guard let schedule else { return ["closed loop (back to back)"] }
        let interval = 1000 / schedule.offeredPerSecond
        let achieved = schedule.achievedPerSecond.map { String(format: "%.1f", $0) } ?? "-"
        return [
            "open loop at \(rate(schedule.offeredPerSecond)) calls/s: latency counted from each call's scheduled start",
            "schedule: achieved \(achieved) calls/s; \(schedule.lateStarts) of \(schedule.calls) calls started more "
                + "than one interval (\(format(interval)) ms) late",
        ]
    }

    /// The warning when more than 1 % of an open loop's calls started late; nil otherwise.
    static func keepUpWarning(_ schedule: ScheduleResult?) -> String? {
        guard let schedule, schedule.fellBehind else { return nil }
        let share = String(format: "%.1f", Double(schedule.lateStarts) * 100 / Double(max(schedule.calls, 1)))
        return "warning: the host could not keep up with \(rate(schedule.offeredPerSecond)) calls/s: "
            + "\(schedule.lateStarts) of \(schedule.calls) calls (\(share) %) started more than one interval late, "
            + "and the latencies include that wait"
    }

    static func text(_ run: BenchResults, call: PluginCall, plugin: String, bench: Bench) -> String {
        let results = run.modes
        var lines: [String] = []
        lines.append(
            "widgethost bench: \((plugin as NSString).lastPathComponent), kind \(call.kind), \(call.family), \(call.entryPoint)\(call.isPreview ? " (preview)" : ""), \(bench.calls) calls per mode, concurrency \(bench.concurrency)"
        )
        lines += loadLines(run.schedule)
        if let warning = keepUpWarning(run.schedule) { lines.append(warning) }
        func pad(_ text: String, _ width: Int) -> String {
            String(repeating: " ", count: max(0, width - text.count)) + text
        }
        lines.append(
            "mode        " + pad("calls", 7) + pad("failed", 8)
                + percentiles.map { pad("\($0.name) µs", 11) }.joined() + pad("max µs", 11) + pad("calls/s", 10))
        for result in results {
            let failed = result.failures.values.reduce(0, +)
            var line = result.mode.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)
            line += pad("\(result.calls)", 7) + pad("\(failed)", 8)
            for (_, value) in percentiles {
                line += pad(format(micro(result.histogram.valueAtPercentile(value))), 11)
            }
            line += pad(format(micro(result.histogram.max)), 11)
            line += pad(String(Int(callsPerSecond(result, concurrency: bench.concurrency).rounded())), 10)
            lines.append(line)
        }
        for result in results where result.afterFailure.totalCount > 0 {
            let after = result.afterFailure.valueAtPercentile(50)
            let median = max(result.histogram.valueAtPercentile(50), 1)
            lines.append(
                "after a failure (\(result.mode.rawValue)): the next call p50 \(format(micro(after))) µs, \(format(Double(after) / Double(median)))× the median (\(result.afterFailure.totalCount) calls)"
            )
        }
        for result in results where result.cold.totalCount > 0 {
            lines.append(
                "first call (\(result.mode.rawValue)): cold, starting its worker or server: \(format(micro(result.cold.valueAtPercentile(50)))) µs (not in the figures above)"
            )
        }
        for result in results where !result.failures.isEmpty {
            lines.append(
                "failures (\(result.mode.rawValue)): "
                    + result.failures.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(
                        separator: ", "))
        }
        for result in results where result.provider.totalCount > 0 {
            lines.append(
                "provider (\(result.mode.rawValue)): the entry point alone, in the child: p50 \(format(micro(result.provider.valueAtPercentile(50)))) µs, p99 \(format(micro(result.provider.valueAtPercentile(99)))) µs"
            )
        }
        for result in results {
            if let cpu = result.cpu.perCall { lines.append("cpu per call (\(result.mode.rawValue)): \(cpu.summary)") }
        }
        if let note = cpuBoundNote(run, concurrency: bench.concurrency) { lines.append(note) }
        for result in results where result.lateness.totalCount > 0 {
            lines.append(
                "timeouts (\(result.mode.rawValue)): SIGKILL sent p50 \(format(micro(result.lateness.valueAtPercentile(50)))) µs, p99 \(format(micro(result.lateness.valueAtPercentile(99)))) µs, max \(format(micro(result.lateness.max))) µs after the deadline"
            )
        }
        for result in results {
            if let fallback = result.fallback { lines.append("note (\(result.mode.rawValue)): \(fallback)") }
            if let warmUp = result.warmUp, result.fallback == nil {
                lines.append("warm-up (\(result.mode.rawValue)): \(warmUp.summary)")
            }
        }
        for ratio in ratios(results) {
            lines.append(
                "\(ratio.mode) vs \(ratio.other): p50 \(format(ratio.p50))×, p99 \(format(ratio.p99))× (\(ratio.other) latency ÷ \(ratio.mode) latency)"
            )
        }
        for result in results {
            lines.append("")
            lines.append("\(result.mode.rawValue) latency histogram (µs, calls):")
            let rows = buckets(result.histogram)
            let most = rows.map(\.count).max() ?? 1
            for row in rows {
                let bar = String(
                    repeating: "#", count: most > 0 ? Int((Double(row.count) * 40 / Double(most)).rounded(.up)) : 0)
                lines.append("  ≤ \(pad(format(micro(row.upTo)), 10)) \(pad("\(row.count)", 7)) \(bar)")
            }
        }
        return lines.joined(separator: "\n")
    }

    struct Ratio: Encodable {
        var mode: String
        var other: String
        /// other's p50 ÷ this mode's p50 (how many times faster this mode is).
        var p50: Double
        var p99: Double
    }

    static func ratios(_ results: [ModeResult]) -> [Ratio] {
        var ratios: [Ratio] = []
        for a in results {
            for b in results where a.mode != b.mode {
                let a50 = max(a.histogram.valueAtPercentile(50), 1)
                let a99 = max(a.histogram.valueAtPercentile(99), 1)
                ratios.append(
                    Ratio(
                        mode: a.mode.rawValue, other: b.mode.rawValue,
                        p50: Double(b.histogram.valueAtPercentile(50)) / Double(a50),
                        p99: Double(b.histogram.valueAtPercentile(99)) / Double(a99)))
            }
        }
        return ratios
    }

    static func format(_ value: Double) -> String {
        value >= 100 ? String(Int(value.rounded())) : String(format: "%.1f", value)
    }

    struct JSON: Encodable {
        /// The version of this document's shape.
        var schemaVersion = 2
        var plugin: String
        var kind: String
        var family: String
        var entryPoint: String
        var preview: Bool
        var callsPerMode: Int
        var concurrency: Int
        var modes: [Mode]
        var ratios: [Ratio]
        var load: Load
    }

    /// How the calls were started: `{"mode": "closed"}`, or `"open"` with the
    /// offered and achieved rates and the calls that started more than one
    /// interval late (achievedPerSecond absent with fewer than two calls).
    struct Load: Encodable {
        var mode: String
        var offeredPerSecond: Double?
        var achievedPerSecond: Double?
        var lateStarts: Int?

        init(_ schedule: ScheduleResult?) {
            mode = schedule == nil ? "closed" : "open"
            offeredPerSecond = schedule?.offeredPerSecond
            achievedPerSecond = schedule?.achievedPerSecond
            lateStarts = schedule?.lateStarts
        }
    }

    struct Mode: Encodable {
        var mode: String
        var calls: Int
        var failed: Int
        var failures: [String: Int]
        var latencyMicroseconds: [String: Double]
        var callsPerSecond: Double
        var histogram: [Bucket]
        var fallback: String?
        /// The fork server's warm-up: "none", "ran" or "failed: why" (fork-server mode only).
        var warmUp: String?
        /// The entry point alone, measured in the child, µs (p50, p99); absent if no call answered.
        var providerMicroseconds: [String: Double]?
        /// Fork server timeouts: deadline to SIGKILL, µs (p50, p99, max); absent without timeouts.
        var timeoutKillLatenessMicroseconds: [String: Double]?
        /// CPU time per call by process, µs, and the calls/s the CPUs allow at most.
        var cpuMicrosecondsPerCall: BenchCPU.PerCall?
        /// The first call of each caller (starting its worker or server), µs: not in the latencies.
        var coldCallMicroseconds: Double?
        /// The calls right after a failed call (p50, p99, count), µs; absent without failures.
        var afterFailureMicroseconds: [String: Double]?
    }

    struct Bucket: Encodable {
        var upToMicroseconds: Double
        var count: UInt64
    }

    static func json(_ run: BenchResults, call: PluginCall, plugin: String, bench: Bench) -> JSON {
        let results = run.modes
        return JSON(
            plugin: plugin, kind: call.kind, family: call.family.name, entryPoint: "\(call.entryPoint)",
            preview: call.isPreview, callsPerMode: bench.calls, concurrency: bench.concurrency,
            modes: results.map { result in
                var latency: [String: Double] = [:]
                for (name, value) in percentiles { latency[name] = micro(result.histogram.valueAtPercentile(value)) }
                latency["max"] = micro(result.histogram.max)
                latency["mean"] = result.histogram.mean / 1000
                return Mode(
                    mode: result.mode.rawValue, calls: result.calls, failed: result.failures.values.reduce(0, +),
                    failures: result.failures, latencyMicroseconds: latency,
                    callsPerSecond: callsPerSecond(result, concurrency: bench.concurrency),
                    histogram: buckets(result.histogram).map {
                        Bucket(upToMicroseconds: micro($0.upTo), count: $0.count)
                    },
                    fallback: result.fallback,
                    warmUp: result.warmUp.map { warmUp in warmUp.failure.map { "failed: \($0)" } ?? warmUp.state },
                    providerMicroseconds: result.provider.totalCount == 0
                        ? nil
                        : [
                            "p50": micro(result.provider.valueAtPercentile(50)),
                            "p99": micro(result.provider.valueAtPercentile(99)),
                        ],
                    timeoutKillLatenessMicroseconds: result.lateness.totalCount == 0
                        ? nil
                        : [
                            "p50": micro(result.lateness.valueAtPercentile(50)),
                            "p99": micro(result.lateness.valueAtPercentile(99)), "max": micro(result.lateness.max),
                        ],
                    cpuMicrosecondsPerCall: result.cpu.perCall,
                    coldCallMicroseconds: result.cold.totalCount == 0 ? nil : micro(result.cold.valueAtPercentile(50)),
                    afterFailureMicroseconds: result.afterFailure.totalCount == 0
                        ? nil
                        : [
                            "p50": micro(result.afterFailure.valueAtPercentile(50)),
                            "p99": micro(result.afterFailure.valueAtPercentile(99)),
                            "count": Double(result.afterFailure.totalCount),
                        ])
            },
            ratios: ratios(results), load: Load(run.schedule))
    }
}
