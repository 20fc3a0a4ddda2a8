import ArgumentParser
import WidgetHostControl
import WidgetHostIsolation
import WidgetHostModel

#if canImport(Glibc)
    import Glibc
#endif

/// The `widgethost` command.
public struct WidgetHostCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "widgethost",
        abstract: "A Linux runtime for WidgetKit-style timeline provider plugins.",
        discussion: """
            Plugins are shared objects exporting widgethost_provider_entry
            (SDK/include/widgethost/provider.h). Every plugin is loaded and called
            in an isolated, sandboxed child process with a timeout.

            Examples:
              widgethost load .build/debug/libCharacterPlugin.so
              widgethost timeline my.so --kind org.example.weather --now +1h
              widgethost simulate --config samples/scenarios/03-budget.json
              widgethost run --config samples/daemon/host.json
              widgethost status
              widgethost preview .build/debug/libCountdownPlugin.so --watch
            """,
        version: "0.1.0",
        subcommands: [
            LoadCommand.self, PlaceholderCommand.self, SnapshotCommand.self, TimelineCommand.self, SimulateCommand.self,
            SandboxCheckCommand.self, BenchCommand.self, RunCommand.self, ReloadCommand.self, EventCommand.self,
            ViewCommand.self, StatusCommand.self, ExplainCommand.self, ConfigurationsCommand.self,
            UnquarantineCommand.self, NewCommand.self, WatchCommand.self, AddCommand.self, UpdateCommand.self,
            RemoveCommand.self, ShowCommand.self, PushCommand.self, PreviewCommand.self,
        ]
    )

    public init() {}

    /// Runs the command line and exits with the documented codes
    /// (``ExitStatus``): 0 success, 1 a plugin failed, 2 usage or
    /// configuration, 3 a host fault.
    ///
    /// With `--json` on the command line, an error that ends the command
    /// before its document is printed also goes to standard output as a
    /// document on one line (valid both as a document and as the last line
    /// of `watch --json`'s stream), so a script reading the output always
    /// gets JSON (``JSONReport/ErrorDocument``); the text stays on standard
    /// error.
    public static func runFromCommandLine() -> Never {
        let wantsJSON = CommandLine.arguments.dropFirst().prefix(while: { $0 != "--" }).contains("--json")
        // An interrupted command dies by its signal once its temporary
        // folders are removed, whatever it was doing (InterruptCleanup).
        func leave(_ status: Int32) -> Never {
            InterruptCleanup.holdIfInterrupted()
            Glibc.exit(status)
        }
        func fail(_ message: String, code: String, hint: String?, status: Int32) -> Never {
            InterruptCleanup.holdIfInterrupted()
            FileHandleOutput.standardError("error: \(message)\n")
            if wantsJSON {
                print(JSONReport.line(JSONReport.ErrorDocument(code: code, message: message, hint: hint)))
            }
            leave(status)
        }
        do {
            var command = try parseAsRoot()
            try command.run()
            leave(0)
        } catch let code as ExitCode {
            leave(code.rawValue)
        } catch let usage as UsageError {
            fail(usage.description, code: "usage", hint: nil, status: ExitStatus.usage.rawValue)
        } catch let fault as HostFault {
            fail(fault.description, code: "hostFault", hint: nil, status: ExitStatus.hostFault.rawValue)
        } catch let failure as PluginFailure {
            // A plugin that did not load, before the command's own report
            // (`bench`): its code, hint and exit status.
            fail(failure.message, code: failure.code, hint: failure.hint, status: ExitStatus.of(failure).rawValue)
        } catch let socket as ControlSocketError {
            fail(socket.description, code: "daemonUnavailable", hint: nil, status: 1)
        } catch let refusal as ControlErrorBody {
            fail(refusal.description, code: refusal.code.rawValue, hint: nil, status: 1)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                // --help and --version
                print(fullMessage(for: error))
                leave(0)
            }
            let status: Int32 = code == .failure ? 1 : 2
            FileHandleOutput.standardError(fullMessage(for: error) + "\n")
            if wantsJSON {
                // The parser's message alone; the usage text is for people.
                let document = JSONReport.ErrorDocument(
                    code: status == 2 ? "usage" : "failed", message: message(for: error),
                    hint: status == 2 ? "see --help for the command's usage" : nil)
                print(JSONReport.line(document))
            }
            leave(status)
        }
    }
}

/// Bad input found while running a command (a bad `--config`, a kind the
/// plugin does not have, a bad scenario file): printed as `error: ...`,
/// exit status 2, without the usage text a parsing error gets.
struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Something wrong on widgethost's side, not the plugin's nor the command
/// line's (no runner, no temporary directory): `error: ...`, exit status 3.
struct HostFault: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The exit statuses of the commands that load and call plugins
/// (docs/cli.md, "Exit status").
enum ExitStatus {
    /// Every call succeeded.
    static let success = ExitCode(0)
    /// A plugin failed to load, or a call failed (the plugin's doing).
    static let pluginFailed = ExitCode(1)
    /// The command line or the configuration is wrong: a bad flag or value,
    /// a missing file, a kind or family the plugin does not have, a
    /// configuration that does not fit its parameters.
    static let usage = ExitCode(2)
    /// widgethost itself could not do the job (`PluginFailure.isHostFault`):
    /// no runner, out of descriptors or memory, a sandbox layer that could
    /// not be applied.
    static let hostFault = ExitCode(3)

    /// The status for one failure.
    static func of(_ failure: PluginFailure) -> ExitCode {
        if failure.isHostFault { return hostFault }
        switch failure.reason {
        case .fileNotFound, .notReadable, .unknownKind, .unsupportedFamily, .badConfiguration: return usage
        default: return pluginFailed
        }
    }

    /// The status for several: a host fault first, then a usage error, then
    /// a plugin failure; success when there is none.
    static func of(_ failures: [PluginFailure]) -> ExitCode {
        let codes = failures.map { of($0).rawValue }
        for code in [hostFault, usage, pluginFailed] where codes.contains(code.rawValue) { return code }
        return success
    }
}

/// Writes to stderr without Foundation's FileHandle.
enum FileHandleOutput {
    static func standardError(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
