import ArgumentParser
import WidgetHostIsolation
import WidgetHostModel
import WidgetHostScheduler

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `widgethost simulate`: a scenario in virtual time, with real plugins.
struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Run a scenario of widget instances and events in virtual time.",
        discussion: """
            The scheduler runs on a virtual clock; every reload calls the real plugin through
            the isolation layer with the virtual time as context->now. Prints every reload
            (time, instance, reason, counted or free, deferred from when and why) and a
            summary per instance. The scenario format is in docs/simulate.md; one example
            per scheduler rule is in samples/scenarios/.

            Plugins named in the scenario are looked up relative to the scenario file, in
            --plugin-dir, and next to the widgethost executable (.build/debug).

            Examples:
              widgethost simulate --config samples/scenarios/03-budget.json --days 2
              widgethost simulate --config my.json --days 7 --seed 42 --json
            """
    )

    @Option(help: ArgumentHelp("The scenario file (JSON).", valueName: "file"))
    var config: String

    @Option(help: "Virtual days to run (default: the scenario's \"days\", else 1).")
    var days: Double?

    @Option(help: "Seed for the scenario's random events (randomViews).")
    var seed: UInt64?

    @Option(help: ArgumentHelp("A directory to look for plugins in.", valueName: "path"))
    var pluginDir: String?

    @Option(
        help: ArgumentHelp(
            "Data directory root; each plugin gets a subdirectory (default: a fresh temporary one).", valueName: "path")
    )
    var dataDir: String?

    @OptionGroup var isolationMode: IsolationModeOption

    @Flag(help: "Print the scripted events as well as the reloads.")
    var events = false

    @Flag(help: "Print every change of what an instance shows (each entry's date).")
    var display = false

    @Flag(help: "Print JSON for machines instead of text (schema: docs/simulate.md).")
    var json = false

    @Flag(
        help: "Call the plugin for every reload, even when a deterministic kind was just asked the same question.")
    var noMemo = false

    @Option(
        help: ArgumentHelp(
            "Report the requests per minute a server would see from this many devices running the scenario, with and without jitter.",
            valueName: "devices"))
    var fleet: Int?

    @Option(
        help: ArgumentHelp(
            "Also write a self-contained HTML page with an SVG plot per instance (reloads, budget, entry changes).",
            valueName: "file"))
    var html: String?

    func validate() throws {
        if let days, !(days > 0 && days <= Scenario.maximumDays) {
            throw ValidationError(
                "--days must be above 0 and at most \(Int(Scenario.maximumDays)), got \(days)")
        }
        if let html {
            // Written over at the end: a device, a directory or a socket there is refused now.
            var info = stat()
            if stat(html, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG {
                throw ValidationError(
                    "--html \(html) exists and is not a regular file; name a file to write the page to")
            }
        }
        if let fleet, !(1...1_000_000).contains(fleet) {
            throw ValidationError("--fleet must be between 1 and 1000000 devices, got \(fleet)")
        }
    }

    func run() throws {
        InterruptCleanup.enable()
        let scenario: Scenario
        do {
            scenario = try ScenarioParser.load(config, seed: seed, days: days)
        } catch {
            throw UsageError(error.description)
        }
        let isolation = IsolationOptions()
        let (paths, configurations, deterministic, networked) = try resolvePlugins(scenario, isolation: isolation)
        let root = try dataDir.map(CallOptions.checkedDataDirectory) ?? Self.temporaryRoot()
        // A temporary root is the run's own: it goes when the run ends, or
        // when the run is interrupted.
        if dataDir == nil { InterruptCleanup.removeOnInterrupt(root) }
        defer { if dataDir == nil { DataDirectory.removeTree(root) } }
        var simulator = ScenarioSimulator(
            scenario: scenario, pluginPaths: paths, configurations: configurations,
            dataDirectory: { plugin in DataDirectory.defaultPath(forPlugin: plugin, root: root) },
            isolation: isolation)
        simulator.trackDisplay = display || html != nil
        simulator.mode = isolationMode.isolation
        if !noMemo { simulator.deterministicKinds = deterministic }
        simulator.networkKinds = networked
        let runDays = days ?? scenario.days ?? 1
        let bar = SimulationProgress.stderrIsTerminal ? SimulationProgress(start: scenario.start, days: runDays) : nil
        if let bar { simulator.progress = { now, reloads in bar.update(now: now, reloads: reloads) } }
        // The report is written as the run goes: nothing keeps every reload.
        let end = scenario.start + runDays * 86_400
        let out = try reportWriter { () throws(ReportStream.WriteError) in try ReportStream.standardOutput() }
        let jsonWriter =
            json ? try reportWriter { () throws(ReportStream.WriteError) in try SimulationJSONWriter(out) } : nil
        let textWriter = json ? nil : SimulationTextWriter(out, showEvents: events, showDisplay: display)
        let herd = fleet.map { FleetReport.Accumulator(scenario, end: end, devices: $0) }
        let page = html.map { _ in SimulationHTML.Collector(scenario) }
        jsonWriter?.begin(scenario, end: end)
        textWriter?.begin(scenario, end: end)
        simulator.record = { record in
            jsonWriter?.write(record)
            textWriter?.write(record)
            page?.add(record)
            if let herd, case .reload(let reload) = record { herd.add(reload) }
        }
        let result = simulator.run(days: runDays)
        bar?.finish()
        if let html, let page {
            do {
                try SimulationHTML.page(result, page).write(toFile: html, atomically: true, encoding: .utf8)
            } catch {
                throw UsageError("could not write the HTML report to \(html): \(error)")
            }
        }
        let fleetReport = herd?.report()
        try reportWriter { () throws(ReportStream.WriteError) in
            try jsonWriter?.finish(result, fleet: fleetReport)
            try textWriter?.finish(result, fleet: fleetReport)
        }
    }

    /// Runs a step of the report; a write that fails (a full disk, no
    /// temporary file) is a host fault.
    private func reportWriter<T>(_ body: () throws(ReportStream.WriteError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw HostFault(error.description)
        }
    }

    static func temporaryRoot() -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        return base + "/widgethost-simulate-\(ProcessInfo.processInfo.processIdentifier)"
    }

    /// Finds each plugin file and checks that it has the kinds and families the
    /// scenario uses, before any virtual time passes.
    /// Returns each plugin's path, and each instance's configuration JSON.
    func resolvePlugins(
        _ scenario: Scenario, isolation: IsolationOptions
    ) throws -> (
        paths: [String: String], configurations: [String: String], deterministicKinds: Set<String>,
        networkKinds: Set<String>
    ) {
        var configurations: [String: String] = [:]
        let absolute = IsolatedRunnerPath.absolute(config)
        let scenarioDirectory = absolute.lastIndex(of: "/").map { String(absolute[..<$0]) } ?? "."
        var directories = [scenarioDirectory]
        if let pluginDir { directories.insert(IsolatedRunnerPath.absolute(pluginDir), at: 0) }
        if let executable = RunnerLocator.executableDirectory() { directories.append(executable) }
        var paths: [String: String] = [:]
        var descriptions: [String: PluginDescription] = [:]
        var deterministic: Set<String> = []
        var networked: Set<String> = []
        for instance in scenario.instances {
            let name = instance.plugin
            if paths[name] == nil {
                let candidates = name.hasPrefix("/") ? [name] : directories.map { $0 + "/" + name }
                guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
                    throw UsageError(
                        scenario.fail(
                            "\(instance.field).plugin",
                            "plugin \"\(name)\" (instance \(instance.id)) was not found; looked in: \(candidates.joined(separator: ", ")). Build it (`swift build`) or pass --plugin-dir"
                        ).description)
                }
                let loaded = IsolatedRunner.run(plugin: found, options: isolation)
                guard let description = loaded.plugin, loaded.failure == nil else {
                    throw UsageError(
                        scenario.fail(
                            "\(instance.field).plugin",
                            "plugin \"\(name)\" does not load: \(loaded.failure?.message ?? "unknown error")"
                        ).description)
                }
                paths[name] = found
                descriptions[name] = description
            }
            let description = descriptions[name]!
            guard let kind = description.kind(instance.kind) else {
                throw UsageError(
                    scenario.fail(
                        "\(instance.field).kind",
                        "instance \(instance.id): plugin \(name) has no kind \"\(instance.kind)\"; it has: \(description.kinds.map(\.id).joined(separator: ", "))"
                    ).description)
            }
            guard kind.families.contains(instance.family) else {
                throw UsageError(
                    scenario.fail(
                        "\(instance.field).family",
                        "instance \(instance.id): kind \(kind.id) does not support \(instance.family); it supports: \(kind.families.map(\.name).joined(separator: ", "))"
                    ).description)
            }
            if kind.isDeterministic { deterministic.insert(name + "\u{0}" + kind.id) }
            if kind.needsNetwork { networked.insert(name + "\u{0}" + kind.id) }
            switch ConfigurationBuilder.build(kind: kind, overrides: instance.configuration) {
            case .success(let json): configurations[instance.id] = json
            case .failure(let problem):
                throw UsageError(
                    scenario.fail("\(instance.field).configuration", "instance \(instance.id): \(problem)").description)
            }
        }
        return (paths, configurations, deterministic, networked)
    }
}
