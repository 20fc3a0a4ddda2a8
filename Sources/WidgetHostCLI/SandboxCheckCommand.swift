import ArgumentParser
import Foundation
import WidgetHostIsolation

/// `widgethost sandbox-check`: which sandbox layers this kernel gives a
/// plugin call, each tried in a throwaway child, and whether each hole a
/// hostile plugin could use (issue 14: another process's environ, file
/// metadata outside the data directory, pidfd_getfd, setsid, a surviving
/// process, a pathname Unix socket) is closed, each tried live from inside
/// the whole sandbox against decoys outside it, by `widgethost-runner
/// --sandbox-check` (see docs/sandbox.md).
struct SandboxCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox-check",
        abstract: "Show which sandbox layers are active on this machine, and try each known hole live.",
        discussion: """
            Prints one line per layer (session, rlimits, no_new_privs, landlock, seccomp, netns, pids, pidns, \
            mountns): active or unavailable, and the detail; then one line per hole (proc_environ, chmod_outside, \
            pidfd_getfd, setsid, survivor, unix_socket), tried from inside the sandbox against decoys outside it: \
            closed or open. Exits 0 if every layer is active and every hole closed, 1 otherwise, 3 when no \
            widgethost-runner is found.
            """)

    @Flag(
        help: """
            Print JSON instead of text: {schemaVersion: 2, layers: [{layer, active, detail}], \
            holes: [{hole, state, detail}]}.
            """)
    var json = false

    func run() throws {
        guard let runner = RunnerLocator.locate() else {
            // A host fault (exit status 3), with --json its error document too.
            throw HostFault(
                "widgethost-runner was not found next to widgethost nor in ../libexec/widgethost;"
                    + " set WIDGETHOST_RUNNER")
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
