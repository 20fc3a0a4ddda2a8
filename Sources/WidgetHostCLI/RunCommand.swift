import ArgumentParser
import Logging
import WidgetHostControl
import WidgetHostDaemon
import WidgetHostIsolation
import WidgetHostWeb

#if canImport(Glibc)
    import Glibc
#endif

/// `widgethost run`: the daemon.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the host daemon: keep the configured widget instances fresh in real time.",
        discussion: """
            Loads the configured plugins, creates the configured instances and runs the
            reload scheduler on the real clock, calling each provider in its sandbox.
            Sleeps until the next due event; logs one line per reload to stderr; takes
            requests on the control socket (widgethost
            reload/event/view/status/explain/configurations, WidgetCenter); stops cleanly
            on SIGTERM or SIGINT (a second signal stops at once); reads the configuration
            again on SIGHUP. State (budgets, last good timelines, quarantine) is kept in
            SQLite and survives restarts and crashes. Configuration format: docs/daemon.md.

            Defaults (XDG): --config $XDG_CONFIG_HOME/widgethost/host.json, --state
            $XDG_STATE_HOME/widgethost/state.sqlite, --socket
            $XDG_RUNTIME_DIR/widgethost/control.sock.

            Example:
              widgethost run --config samples/daemon/host.json --state /tmp/wh.sqlite
            """
    )

    @Option(
        help: ArgumentHelp(
            "The configuration file (JSON); - reads it from standard input (a pipe is read once: SIGHUP cannot re-read it).",
            valueName: "file"))
    var config: String = ControlPaths.configuration

    @Option(help: ArgumentHelp("The state database (SQLite).", valueName: "path"))
    var state: String = ControlPaths.state

    @Option(help: ArgumentHelp("The control socket to listen on.", valueName: "path"))
    var socket: String = ControlPaths.socket

    @Option(
        help: ArgumentHelp(
            "Serve the live dashboard and /metrics on HOST:PORT (loopback only unless --http-allow-remote; port 0 picks a free one); the URL with its token is printed at start (docs/dashboard.md).",
            valueName: "host:port"))
    var http: String?

    @Flag(help: "Let --http listen on an address other machines can reach (the token still guards every page).")
    var httpAllowRemote = false

    @Option(
        help: ArgumentHelp("Least severe log level: trace, debug, info, notice, warning, error.", valueName: "level"))
    var logLevel: String = "info"

    func validate() throws {
        if let http {
            do {
                _ = try WebAddress(parsing: http, allowRemote: httpAllowRemote)
            } catch {
                throw ValidationError("--http: \(error.description)")
            }
        } else if httpAllowRemote {
            throw ValidationError("--http-allow-remote needs --http HOST:PORT")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    func run() throws {
        // Before any thread starts: signals become readable events of the loop.
        let level = Logger.Level(rawValue: logLevel) ?? .info
        // Under systemd, standard error is the journal: lines carry their priority (`<4>`).
        let journal = JournalLogHandler.isJournal
        LoggingSystem.bootstrap { label in
            if journal {
                var handler = JournalLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "widgethost")
        if config == "-" && isatty(STDIN_FILENO) == 1 {
            FileHandleOutput.standardError(
                "widgethost run: reading the configuration (JSON) from the terminal; end it with Ctrl-D\n")
        }
        let options = DaemonOptions(
            configurationPath: config == "-" ? config : IsolatedRunnerPath.absolute(config),
            statePath: IsolatedRunnerPath.absolute(state),
            socketPath: IsolatedRunnerPath.absolute(socket),
            http: try http.map { try WebAddress(parsing: $0, allowRemote: httpAllowRemote) })
        let daemon: Daemon
        do {
            daemon = try Daemon.start(options: options, logger: logger)
        } catch {
            if error.isUsageError { throw UsageError(error.description) }
            FileHandleOutput.standardError("error: \(error.description)\n")
            throw ExitCode(error.exitStatus)
        }
        let status = daemon.run()
        if status != 0 { throw ExitCode(status) }
    }
}
