import ArgumentParser
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
            """,
        version: "0.1.0",
        subcommands: [
            LoadCommand.self, PlaceholderCommand.self, SnapshotCommand.self, TimelineCommand.self, SimulateCommand.self,
            SandboxCheckCommand.self, BenchCommand.self, RunCommand.self, ReloadCommand.self, EventCommand.self,
            ViewCommand.self, StatusCommand.self, ExplainCommand.self, ConfigurationsCommand.self,
            UnquarantineCommand.self, NewCommand.self,
        ]
    )

    public init() {}

    /// Runs the command line and exits with the documented codes: 0 success,
    /// 1 a plugin call failed, 2 a usage error.
    public static func runFromCommandLine() -> Never {
        do {
            var command = try parseAsRoot()
            try command.run()
            Glibc.exit(0)
        } catch let code as ExitCode {
            Glibc.exit(code.rawValue)
        } catch let usage as UsageError {
            FileHandleOutput.standardError("error: \(usage.description)\n")
            Glibc.exit(2)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                // --help and --version
                print(fullMessage(for: error))
                Glibc.exit(0)
            }
            let message = fullMessage(for: error)
            FileHandleOutput.standardError(message + "\n")
            Glibc.exit(code == .failure ? 1 : 2)
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
