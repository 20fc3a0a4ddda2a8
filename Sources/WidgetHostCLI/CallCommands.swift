import ArgumentParser
import WidgetHostIsolation
import WidgetHostModel

/// The arguments of a single entry-point call.
struct SingleCallArguments: ParsableArguments {
    @Argument(help: ArgumentHelp("The plugin's shared object.", valueName: "plugin.so"))
    var plugin: String

    @Option(help: ArgumentHelp("The widget kind to call (see `widgethost load`).", valueName: "id"))
    var kind: String

    @Option(
        name: .customLong("family"),
        help: ArgumentHelp("The family to render for.", valueName: "family"))
    var familyArgument = FamilyArgument(.systemSmall)

    var family: WidgetFamily { familyArgument.family }

    @Flag(help: "Call as WidgetKit does for the widget gallery (context.isPreview).")
    var preview = false

    @Flag(
        name: .customLong("allow-network"),
        help:
            "Let the call use the network (for a kind that declares WH_KIND_NEEDS_NETWORK; `load` decides this itself)."
    )
    var allowNetwork = false

    @OptionGroup var options: CallOptions

    @OptionGroup var mode: IsolationModeOption

    func run(_ entryPoint: EntryPoint) throws {
        InterruptCleanup.enable()
        let isolation = options.isolation()
        let now = options.now?.seconds ?? wallClockNow()
        let dataDirectory = try options.callDataDirectory(for: plugin)
        defer { dataDirectory.remove() }
        let call = PluginCall(
            entryPoint, kind: kind, family: family, isPreview: preview, now: now,
            timeout: options.timeout?.seconds, configuration: try parseConfiguration(options.config),
            locale: options.locale, dataDirectory: dataDirectory.path, allowNetwork: allowNetwork)
        let output = PluginCaller(plugin: plugin, mode: mode.isolation, options: isolation).call(call)
        if options.json {
            print(
                JSONReport.encode(
                    JSONReport.Single(
                        plugin: output.plugin.map { JSONReport.plugin($0, range: isolation.abiRange) },
                        call: JSONReport.call(call, output))))
        } else {
            if let plugin = output.plugin {
                print(
                    TerminalText.escaped("\(plugin.name) \(plugin.version) (\(plugin.id)), kind \(kind), \(family)"))
            }
            print(TextReport.call(call, output, indent: "", verbose: options.verbose))
        }
        if let failure = output.failure { throw ExitStatus.of(failure) }
    }
}

struct PlaceholderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "placeholder",
        abstract: "Call a kind's placeholder entry point once.",
        discussion:
            "Exit status: 0 ok, 1 the plugin failed, 2 usage or configuration (unknown kind, unsupported family, bad --config), 3 host fault. Calls get a temporary data directory unless --data-dir names one.\n\nExample:\n  widgethost placeholder .build/debug/libCharacterPlugin.so --kind com.widgethost.character-detail"
    )
    @OptionGroup var arguments: SingleCallArguments
    func run() throws { try arguments.run(.placeholder) }
}

struct SnapshotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Call a kind's snapshot entry point once.",
        discussion:
            "Exit status: 0 ok, 1 the plugin failed, 2 usage or configuration (unknown kind, unsupported family, bad --config), 3 host fault. Calls get a temporary data directory unless --data-dir names one.\n\nExample:\n  widgethost snapshot .build/debug/libCharacterPlugin.so --kind com.widgethost.character-detail --preview"
    )
    @OptionGroup var arguments: SingleCallArguments
    func run() throws { try arguments.run(.snapshot) }
}

struct TimelineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline",
        abstract: "Call a kind's timeline entry point once.",
        discussion:
            "Exit status: 0 ok, 1 the plugin failed, 2 usage or configuration (unknown kind, unsupported family, bad --config), 3 host fault. Calls get a temporary data directory unless --data-dir names one.\n\nExample:\n  widgethost timeline .build/debug/libCountdownPlugin.so --kind com.widgethost.countdown --config '{\"title\":\"Launch\"}' --timeout 2s"
    )
    @OptionGroup var arguments: SingleCallArguments
    func run() throws { try arguments.run(.timeline) }
}
