import ArgumentParser
import WidgetHostIsolation
import WidgetHostModel

#if canImport(Glibc)
    import Glibc
#endif

/// Options shared by every command that calls a plugin.
struct CallOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Seconds the entry point may take, e.g. 250ms, 2s (default per entry point: placeholder 500ms, snapshot 2s or 1s in preview, timeline 15s).",
            valueName: "duration"))
    var timeout: DurationArgument?

    @Option(
        help: ArgumentHelp("Seconds loading may take (dlopen, constructors, entry function).", valueName: "duration"))
    var loadTimeout: DurationArgument = DurationArgument(argument: "5s")!

    @Option(help: ArgumentHelp("The instance configuration, a JSON object of parameter values.", valueName: "json"))
    var config: String?

    @Option(
        help: ArgumentHelp(
            "The locale passed to the plugin: a BCP 47 tag (en-US) or a POSIX name (en_US.UTF-8).",
            valueName: "locale"))
    var locale = "en-US"

    @Option(
        help: ArgumentHelp(
            "The plugin's data directory, created if missing (default: a new temporary one, removed at exit).",
            valueName: "path"))
    var dataDir: String?

    @Option(
        // .unconditional: `--now -30m` is a value, not an option.
        parsing: .unconditional,
        help: ArgumentHelp(
            "The time the plugin sees as now: ISO 8601, seconds since the epoch, or an offset such as +1h or -2d (default: the real time).",
            valueName: "time"))
    var now: TimeArgument?

    @Flag(name: .shortAndLong, help: "Show what the plugin printed (stdout and stderr) and timing details.")
    var verbose = false

    @Flag(help: "Print JSON for machines instead of text (schema: docs/cli.md).")
    var json = false

    func validate() throws {
        if let timeout, !Bounds.isCallTimeout(timeout.seconds) {
            throw ValidationError(
                "--timeout must be \(Bounds.callTimeoutRange), as a scenario's or the daemon's timeout (got \(Timestamp.duration(timeout.seconds)))"
            )
        }
        try LocaleCheck.validate(locale)
    }

    /// `--config` as member name → JSON text, checked against `kind`'s
    /// parameters as every call checks it (``ConfigurationBuilder``): a
    /// configuration `timeline` refuses, `bench` refuses too, before its
    /// first call, with the same message and exit status (2).
    func configuration(for kind: KindDescription, plugin: String) throws -> [String: String] {
        let configuration = try parseConfiguration(config)
        if case .failure(let problem) = ConfigurationBuilder.build(kind: kind, overrides: configuration) {
            let reason = PluginFailure.Reason.badConfiguration(problem.description)
            let failure = PluginFailure(plugin: plugin, reason: reason)
            throw UsageError("\(failure.message). \(failure.hint)")
        }
        return configuration
    }

    func isolation() -> IsolationOptions {
        IsolationOptions(loadTimeout: loadTimeout.seconds)
    }

    /// The data directory the calls get: `--data-dir` (checked: a directory
    /// or nothing yet), or a new temporary one of this command's own, so
    /// that testing a plugin never writes where the daemon keeps its data and
    /// two plugins with the same file name never share a folder.
    /// `--data-dir` made absolute; a usage error when it names something
    /// that is not a directory (every command that takes `--data-dir`).
    static func checkedDataDirectory(_ dataDir: String) throws -> String {
        let path = IsolatedRunnerPath.absolute(dataDir)
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFDIR {
            throw UsageError(
                "--data-dir \(path) is a file, expected a directory (it is created if missing); pass a directory")
        }
        return path
    }

    func callDataDirectory(for plugin: String) throws -> CommandDataDirectory {
        if let dataDir {
            return CommandDataDirectory(path: try Self.checkedDataDirectory(dataDir), temporaryRoot: nil)
        }
        guard let root = DataDirectory.makeTemporary() else {
            throw HostFault(
                "cannot create a temporary data directory under $TMPDIR or /tmp (\(String(cString: strerror(errno)))); pass --data-dir"
            )
        }
        return CommandDataDirectory(path: DataDirectory.defaultPath(forPlugin: plugin, root: root), temporaryRoot: root)
    }

}

/// The data directory of one command's calls.
struct CommandDataDirectory {
    var path: String
    /// The temporary folder to remove at the end, when there is one.
    var temporaryRoot: String?

    /// For the text report: the path, and whether it goes away.
    var summary: String {
        temporaryRoot == nil ? path : path + " (temporary, removed at exit; --data-dir keeps one)"
    }

    func remove() {
        if let temporaryRoot { DataDirectory.removeTree(temporaryRoot) }
    }
}

/// Path helpers for the CLI.
enum IsolatedRunnerPath {
    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : currentDirectory() + "/" + path
    }

    static func currentDirectory() -> String {
        #if canImport(Glibc)
            guard let cwd = getcwd(nil, 0) else { return "." }
            defer { free(cwd) }
            return String(cString: cwd)
        #else
            return "."
        #endif
    }
}

#if canImport(Glibc)
    import Glibc
#endif

/// `--isolation` of the commands that call a plugin (bench has its own).
struct IsolationModeOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "How calls are isolated: worker (the default: a warm sandboxed worker per plugin serves calls one at a time), fork-server (strict: a fresh child forked per call), spawn (a fresh runner per call) or in-process (debugging only: the plugin runs inside widgethost, unprotected).",
            valueName: "worker|fork-server|spawn|in-process"))
    var isolation: IsolationMode = .worker
}

extension IsolationMode: ExpressibleByArgument {}

/// Makes calls of one plugin through the isolation engine, in the chosen mode.
final class PluginCaller {
    let plugin: String
    let options: IsolationOptions
    let mode: IsolationMode
    let engine: IsolationEngine

    /// With `.inProcess`, prints the loud warning on stderr.
    init(plugin: String, mode: IsolationMode, options: IsolationOptions) {
        self.plugin = plugin
        self.options = options
        self.mode = mode
        // A one-shot command keeps no standby worker.
        self.engine = IsolationEngine(
            plugin: plugin, options: options, mode: mode, recycling: WorkerRecycling(standbys: 0))
        if mode == .inProcess { FileHandleOutput.standardError(InProcessPlugin.warning) }
    }

    /// The warm-up of the last worker or fork server (nil in the other modes).
    var warmUp: WarmUpOutcome? { mode == .worker || mode == .forkServer ? engine.warmUp : nil }

    /// Why the fork server calls the plugin with a runner per call, if it does.
    var fallbackReason: String? {
        guard mode == .forkServer else { return nil }
        let summary = engine.isolationSummary
        return summary == "fork-server" ? nil : summary
    }

    /// One line on how the calls were isolated, for `load`.
    var isolationSummary: String {
        switch mode {
        case .spawn: return "spawn: a fresh runner per call (no warm-up)"
        case .inProcess: return "in-process (debugging only; no warm-up)"
        case .worker:
            return "\(engine.isolationSummary); warm-up \(warmUp?.summary ?? "not run")"
        case .forkServer:
            let summary = engine.isolationSummary
            if summary != "fork-server" { return "fork server not used: \(summary)" }
            return "fork server; warm-up \(warmUp?.summary ?? "not run")"
        }
    }

    func call(_ call: PluginCall) -> CallOutput { engine.call(call) }

    /// Loads the plugin without calling it (in a runner of its own, or in
    /// process in that mode).
    func describe() -> CallOutput {
        mode == .inProcess
            ? InProcessPlugin(plugin: plugin, options: options).call(nil)
            : IsolatedRunner.run(plugin: plugin, options: options)
    }
}
