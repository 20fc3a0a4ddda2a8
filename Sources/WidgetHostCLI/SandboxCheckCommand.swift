import ArgumentParser
import Foundation
import WidgetHostIsolation

/// `widgethost sandbox-check`: which sandbox layers this kernel gives a
/// plugin call, each tried in a throwaway child by `widgethost-runner
/// --sandbox-check` (see docs/sandbox.md).
struct SandboxCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox-check",
        abstract: "Show which sandbox layers are active on this machine, and why one is not.",
        discussion: """
            Prints one line per layer (session, rlimits, no_new_privs, landlock, seccomp, netns, pids): active or \
            unavailable, and the detail. Exits 0 if every layer is active, 1 otherwise.
            """)

    @Flag(help: "Print a JSON array of {layer, active, detail} instead of text.")
    var json = false

    func run() throws {
        guard let runner = RunnerLocator.locate() else {
            FileHandle.standardError.write(
                Data("error: widgethost-runner was not found next to widgethost; set WIDGETHOST_RUNNER\n".utf8))
            throw ExitCode(2)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: runner)
        process.arguments = ["--sandbox-check"] + (json ? ["--json"] : [])
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        FileHandle.standardOutput.write(output)
        if !json && SandboxPolicy.disabledByEnvironment {
            print("note: WIDGETHOST_SANDBOX=off is set: calls from this environment run without these layers")
        }
        if process.terminationStatus != 0 { throw ExitCode(1) }
    }
}
