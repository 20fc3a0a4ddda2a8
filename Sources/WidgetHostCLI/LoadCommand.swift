import ArgumentParser
import WidgetHostControl
import WidgetHostIsolation
import WidgetHostModel
import WidgetHostStore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `widgethost load PLUGIN.so`: everything about a plugin.
struct LoadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Load a plugin in an isolated child and show everything about it.",
        discussion: """
            Shows the plugin's identity and ABI version, each kind with its families and
            parameters, and for each kind and family the placeholder, the snapshot (preview
            and not) and the timeline: entries (date relative to now, relevance, content),
            the reload policy, each call's latency, and warnings.

            Calls get a new temporary data directory, removed at exit, unless --data-dir
            names one.

            Exit status: 0 every call succeeded, 1 the plugin failed to load or a call
            failed, 2 a usage or configuration error (bad option, missing file, unknown
            kind or family, --config that does not fit), 3 a host fault (no runner).

            Examples:
              widgethost load .build/debug/libCharacterPlugin.so
              widgethost load samples/c/moonphase.so --family systemSmall --verbose
              widgethost load my.so --kind org.example.weather --json
            """
    )

    @Argument(help: ArgumentHelp("The plugin's shared object.", valueName: "plugin.so"))
    var plugin: String

    @Option(help: ArgumentHelp("Only this kind (default: every kind).", valueName: "id"))
    var kind: String?

    @Option(
        name: .customLong("family"),
        help: ArgumentHelp(
            "Only this family (default: every family the kind supports).",
            valueName: "family"))
    var familyArgument: FamilyArgument?

    var family: WidgetFamily? { familyArgument?.family }

    @OptionGroup var options: CallOptions

    @OptionGroup var mode: IsolationModeOption

    @Option(
        help: ArgumentHelp(
            "The daemon's state database, to say whether the file is quarantined (default: the daemon's).",
            valueName: "path"))
    var state: String = ControlPaths.state

    /// The daemon's quarantine entry for this exact file (path, size, mtime), if any.
    func quarantine(of path: String) -> QuarantineEntry? {
        guard FileManager.default.fileExists(atPath: state), let file = PluginFileIdentity.of(path: path) else {
            return nil
        }
        return try? StateStore(path: state).quarantineEntry(file)
    }

    func run() throws {
        InterruptCleanup.enable()
        let isolation = options.isolation()
        let loader = PluginCaller(plugin: plugin, mode: mode.isolation, options: isolation)
        let described = loader.describe()
        guard let description = described.plugin, described.failure == nil else {
            let failure =
                described.failure ?? PluginFailure(plugin: plugin, reason: .protocolViolation("no descriptor"))
            if options.json {
                print(JSONReport.encode(JSONReport.Load(ok: false, plugin: nil, failure: .init(failure), kinds: [])))
            } else {
                print(TextReport.failure(failure))
                if options.verbose {
                    for line in TextReport.logLines(described.log, indent: "  ") { print(line) }
                }
            }
            throw ExitStatus.of(failure)
        }
        let caller =
            mode.isolation == .inProcess
            ? loader : PluginCaller(plugin: description.path, mode: mode.isolation, options: isolation)
        var kinds = description.kinds
        if let kind {
            guard let selected = description.kind(kind) else {
                throw UsageError(
                    "\(description.path) has no kind \"\(kind)\"; it has: \(description.kinds.map(\.id).joined(separator: ", "))"
                )
            }
            kinds = [selected]
        }
        let configuration = try parseConfiguration(options.config)
        let now = options.now?.seconds ?? wallClockNow()
        let dataDirectory = try options.callDataDirectory(for: plugin)
        defer { dataDirectory.remove() }
        var failures: [PluginFailure] = []
        var jsonKinds: [JSONReport.Kind] = []

        if let family, !kinds.contains(where: { $0.families.contains(family) }) {
            throw UsageError(
                "no kind of \(description.path) supports \(family); the kinds support: "
                    + Set(kinds.flatMap(\.families)).sorted { $0.rawValue < $1.rawValue }.map(\.name).joined(
                        separator: ", "))
        }
        let quarantined = quarantine(of: description.path)
        if !options.json {
            print(TextReport.plugin(description, range: isolation.abiRange))
            print("Data     \(dataDirectory.summary)")
            if let quarantined {
                print(
                    "Quarantined by the daemon since \(Timestamp.iso8601(quarantined.since)) after \(quarantined.crashCount) crashes (\(quarantined.reason)); it will not call this file until it changes or `widgethost unquarantine \(description.path)`"
                )
            }
        }
        for kind in kinds {
            var families = kind.families
            if let family { families = families.filter { $0 == family } }
            if !options.json {
                print(TextReport.kindHeader(kind))
                if families.isEmpty, let family { print("  (\(family) is not among this kind's families: skipped)") }
            }
            var calls: [JSONReport.Call] = []
            for family in families {
                if !options.json { print("  \(family)") }
                let plan: [(EntryPoint, Bool)] = [
                    (.placeholder, false), (.snapshot, true), (.snapshot, false), (.timeline, false),
                ]
                for (entryPoint, preview) in plan {
                    let call = PluginCall(
                        entryPoint, kind: kind.id, family: family, isPreview: preview, now: now,
                        timeout: options.timeout?.seconds, configuration: configuration,
                        locale: options.locale, dataDirectory: dataDirectory.path,
                        // The describe step told us which kinds declare WH_KIND_NEEDS_NETWORK.
                        allowNetwork: kind.needsNetwork)
                    let output = caller.call(call)
                    if let failure = output.failure { failures.append(failure) }
                    if options.json {
                        calls.append(JSONReport.call(call, output))
                    } else {
                        print(TextReport.call(call, output, indent: "    ", verbose: options.verbose))
                    }
                }
            }
            jsonKinds.append(
                JSONReport.Kind(
                    id: kind.id, displayName: kind.displayName, description: kind.summary,
                    families: kind.families.map(\.name), needsNetwork: kind.needsNetwork,
                    deterministic: kind.isDeterministic, freshProcess: kind.needsFreshProcess,
                    acceptsPush: kind.acceptsPush,
                    entryPoints: kind.entryPoints.map(\.description),
                    parameters: kind.parameters.map {
                        .init(
                            name: $0.name, type: $0.type?.description ?? "unknown(\($0.rawType))",
                            defaultJSON: $0.defaultJSON, description: $0.summary, title: $0.title,
                            choices: $0.choices, optional: $0.isOptional)
                    },
                    calls: calls))
        }
        let allOK = failures.isEmpty
        if options.json {
            print(
                JSONReport.encode(
                    JSONReport.Load(
                        ok: allOK, plugin: JSONReport.plugin(description, range: isolation.abiRange), failure: nil,
                        kinds: jsonKinds, quarantine: quarantined.map(JSONReport.Quarantine.init),
                        isolation: JSONReport.Isolation(
                            mode: caller.mode, fallback: caller.fallbackReason, warmUp: caller.warmUp))))
        } else {
            print("")
            print("Isolation  \(caller.isolationSummary)")
            print(allOK ? "All calls succeeded." : "Some calls failed (see above).")
        }
        if !allOK { throw ExitStatus.of(failures) }
    }
}
