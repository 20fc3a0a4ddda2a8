import CWidgetHostSupport
import Foundation
import Testing
import WidgetHostIsolation
import WidgetHostModel

#if canImport(Glibc)
    import Glibc
#endif

/// How a containment test runs a plugin: an isolation mode, as root or as
/// an ordinary user. A new isolation mode is one more case in `Mode` and
/// one more branch in `run`; every containment test then covers it.
struct ContainmentRunner: CustomTestStringConvertible, Sendable {
    enum Mode: String, CaseIterable, Sendable {
        /// `IsolatedRunner.run`: a fresh runner per call.
        case spawn
        /// A `ForkServer` started for the call, stopped after it (its
        /// processes must be gone then too).
        case forkServer
        /// A warm worker (`IsolationEngine`, the default mode) that serves
        /// the call, twice (the second from the same worker), stopped after.
        case worker
    }

    var mode: Mode
    /// Runs the runner as uid/gid 65534 (through `setpriv`) instead of the
    /// test's own uid.
    var asNobody: Bool

    var testDescription: String { "\(mode.rawValue)\(asNobody ? " as nobody" : "")" }

    /// Every mode as the test's user, and again as nobody when the test
    /// runs as root with `setpriv` (skipped otherwise: an ordinary user
    /// cannot switch uid; see `nobodyUnavailableReason`).
    static let all: [ContainmentRunner] =
        Mode.allCases.map { ContainmentRunner(mode: $0, asNobody: false) }
        + (nobodyUnavailableReason == nil ? Mode.allCases.map { ContainmentRunner(mode: $0, asNobody: true) } : [])

    /// Why the runs as nobody are left out, or nil when they run.
    static let nobodyUnavailableReason: String? = {
        if geteuid() != 0 { return "the tests do not run as root, so they cannot switch to uid 65534" }
        if access("/usr/bin/setpriv", X_OK) != 0 { return "/usr/bin/setpriv is missing (util-linux)" }
        guard let runner = RunnerLocator.locate(), access(runner, R_OK | X_OK) == 0 else {
            return "widgethost-runner was not found"
        }
        return nil
    }()

    /// A runner wrapper that drops to uid/gid 65534 and execs the real
    /// runner (fd 3, the channel, is inherited across both execs).
    static let nobodyRunner: String = {
        let directory = TestSupport.temporaryDirectory("nobody-runner")
        let path = directory + "/widgethost-runner-as-nobody"
        let runner = RunnerLocator.locate() ?? "widgethost-runner"
        let script = """
            #!/bin/sh
            exec /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups '\(runner)' "$@"

            """
        _ = FileManager.default.createFile(
            atPath: path, contents: Data(script.utf8), attributes: [.posixPermissions: 0o755])
        return path
    }()

    /// Makes one call of `fixture` in this mode, as this user; for a fork
    /// server, stops the server before returning.
    func run(_ fixture: String, call: PluginCall, sandbox: SandboxPolicy = .standard) -> CallOutput {
        var options = IsolationOptions(sandbox: sandbox)
        if asNobody {
            options.runnerPath = Self.nobodyRunner
            // The plugin's only writable place must be writable by it.
            chmod(call.dataDirectory, 0o777)
        }
        switch mode {
        case .spawn:
            return IsolatedRunner.run(plugin: TestSupport.fixture(fixture), call: call, options: options)
        case .forkServer:
            let server = ForkServer(plugin: TestSupport.fixture(fixture), options: options)
            let output = server.call(call)
            server.stop()
            return output
        case .worker:
            let engine = IsolationEngine(plugin: TestSupport.fixture(fixture), options: options, mode: .worker)
            _ = engine.call(call)
            let output = engine.call(call)
            engine.stop()
            return output
        }
    }
}

/// What a hostile plugin must not touch: a process of the same user with a
/// secret in its environment, and a file outside the data directory with a
/// known mode, owner and modification time.
final class Decoys {
    let secret = "decoy-\(UUID().uuidString.prefix(12))"
    let process = Process()
    let directory = TestSupport.temporaryDirectory("decoys")
    var file: String { directory + "/decoy.txt" }
    private var original = stat()

    init() throws {
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = ["600"]
        process.environment = ["WH_DECOY_SECRET": secret]
        try process.run()
        _ = FileManager.default.createFile(atPath: file, contents: Data("decoy\n".utf8))
        chmod(file, 0o640)
        var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, file, &times, 0)
        stat(file, &original)
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }

    var pid: Int32 { process.processIdentifier }

    /// The decoy process is alive, its file unchanged (mode, owner, times,
    /// ctime: no extended attribute either) and the secret in no output of
    /// the call.
    func expectUntouched(by output: CallOutput, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            kill(pid, 0) == 0 && !TestSupport.isZombie(pid), "the decoy process was killed",
            sourceLocation: sourceLocation)
        var now = stat()
        stat(file, &now)
        #expect(now.st_mode == original.st_mode, "the decoy's mode changed", sourceLocation: sourceLocation)
        #expect(now.st_uid == original.st_uid && now.st_gid == original.st_gid, sourceLocation: sourceLocation)
        #expect(
            now.st_mtim.tv_sec == original.st_mtim.tv_sec, "the decoy's mtime changed", sourceLocation: sourceLocation)
        // Any metadata change (an extended attribute too) moves the ctime.
        #expect(
            now.st_ctim.tv_sec == original.st_ctim.tv_sec && now.st_ctim.tv_nsec == original.st_ctim.tv_nsec,
            "the decoy's metadata changed", sourceLocation: sourceLocation)
        let seen =
            output.log.stdout + output.log.stderr + (output.result?.entries.map(\.contentJSON).joined() ?? "")
            + (output.failure?.message ?? "")
        #expect(!seen.contains(secret), "the decoy's secret was read", sourceLocation: sourceLocation)
    }
}

extension TestSupport {
    /// Living processes (not zombies) whose name (`comm`) is `name`, after
    /// waiting up to 5 s for killed ones to go.
    static func survivors(named name: String) -> [Int32] {
        func find() -> [Int32] {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.compactMap { entry -> Int32? in
                guard let pid = Int32(entry),
                    let comm = try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8),
                    comm.trimmingCharacters(in: .newlines) == name, !isZombie(pid)
                else { return nil }
                return pid
            }
        }
        var found = find()
        let deadline = Date().addingTimeInterval(5)
        while !found.isEmpty && Date() < deadline {
            usleep(20_000)
            found = find()
        }
        return found
    }
}

/// Issue 14's sandbox holes, each tried by a hostile fixture in every
/// isolation mode, as root and as nobody: the outcome, and that nothing
/// outside was touched (docs/sandbox.md, "Which layer closes which hole").
@Suite("Sandbox containment")
struct SandboxContainmentTests {
    /// A hostile call of `fixture` with `path` as its parameter.
    static func call(_ trap: HostileTrap, path: String) -> PluginCall {
        PluginCall(
            .timeline, kind: "test.fixture", family: .systemSmall, now: Date().timeIntervalSince1970,
            configuration: ["path": "\"\(path)\"", "port": "0"], dataDirectory: trap.dataDirectory)
    }

    @Test(arguments: ContainmentRunner.all)
    func otherProcessesEnvironIsNotReadable(runner: ContainmentRunner) throws {
        let decoys = try Decoys()
        let trap = HostileTrap()
        let output = runner.run("proc_snoop", call: Self.call(trap, path: "/proc/\(decoys.pid)/environ"))
        let content = members(output)
        #expect(output.failure == nil, "\(String(describing: output.failure))")
        #expect(content["errno"] != .number(0), "the decoy's environ was read: \(content)")
        // Only the sandbox's own processes are listed (init, the runner or
        // fork server, its standbys, the call), not the machine's.
        if case .number(let visible)? = content["visible"] { #expect(visible <= 8, "\(content)") }
        decoys.expectUntouched(by: output)
        trap.expectContained(output)
    }

    @Test(arguments: ContainmentRunner.all)
    func metadataOutsideTheDataDirectoryCannotChange(runner: ContainmentRunner) throws {
        let decoys = try Decoys()
        let trap = HostileTrap()
        let output = runner.run("metadata_outside", call: Self.call(trap, path: decoys.file))
        let content = members(output)
        #expect(output.failure == nil, "\(String(describing: output.failure))")
        for name in [
            "chmod", "fchmodat", "fchmodat2", "chown", "lchown", "setxattr", "utimensat", "utimes", "fchmod", "fchown",
            "fsetxattr", "futimens",
        ] {
            #expect(content[name] != .number(0), "\(name) worked outside the data directory: \(content)")
        }
        // Its own files keep their metadata calls (the view leaves the data
        // directory writable).
        #expect(content["inside_chmod"] == .number(0), "\(content)")
        decoys.expectUntouched(by: output)
        trap.expectContained(output)
    }

    /// The fallback where no mount namespace can be made: seccomp refuses
    /// every metadata call, the data directory's too.
    @Test(arguments: ContainmentRunner.all)
    func withoutTheViewSeccompRefusesEveryMetadataCall(runner: ContainmentRunner) throws {
        let decoys = try Decoys()
        let trap = HostileTrap()
        var policy = SandboxPolicy.standard
        policy.layers &= ~UInt32(WH_SANDBOX_MOUNTNS.rawValue)
        let output = runner.run("metadata_outside", call: Self.call(trap, path: decoys.file), sandbox: policy)
        let content = members(output)
        #expect(output.failure == nil, "\(String(describing: output.failure))")
        for name in ["chmod", "fchmodat", "fchmodat2", "chown", "setxattr", "utimensat"] {
            #expect(content[name] == .number(Double(EPERM)), "\(name): \(content)")
        }
        // By descriptor: EPERM, or -1 where Landlock refused opening it.
        for name in ["fchmod", "fchown", "futimens"] {
            #expect([.number(Double(EPERM)), .number(-1)].contains(content[name]), "\(name): \(content)")
        }
        #expect(content["inside_chmod"] == .number(Double(EPERM)), "\(content)")
        decoys.expectUntouched(by: output)
        trap.expectContained(output)
    }

    @Test(arguments: ContainmentRunner.all)
    func pidfdGetfdIsRefused(runner: ContainmentRunner) throws {
        let decoys = try Decoys()
        let trap = HostileTrap()
        let output = runner.run("pidfd_steal", call: Self.call(trap, path: ""))
        let content = members(output)
        #expect(output.failure == nil, "\(String(describing: output.failure))")
        #expect(content["pidfd_getfd"] == .number(Double(EPERM)) || content["pidfd_open"] != .number(0), "\(content)")
        decoys.expectUntouched(by: output)
        trap.expectContained(output)
    }

    @Test(arguments: ContainmentRunner.all)
    func aPathnameUnixSocketOutsideIsUnreachable(runner: ContainmentRunner) throws {
        let decoys = try Decoys()
        let trap = HostileTrap()
        // A stand-in for the daemon's $XDG_RUNTIME_DIR/widgethost/control.sock.
        let runtime = decoys.directory + "/xdg/widgethost"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        chmod(decoys.directory + "/xdg", 0o777)
        chmod(runtime, 0o777)
        let socketPath = runtime + "/control.sock"
        let listener = try UnixListener(path: socketPath)
        let output = runner.run("unix_connect", call: Self.call(trap, path: socketPath))
        let content = members(output)
        #expect(output.failure == nil, "\(String(describing: output.failure))")
        #expect(content["errno"] != .number(0), "connected to \(socketPath): \(content)")
        #expect(listener.acceptedConnections() == 0, "the socket got a connection")
        decoys.expectUntouched(by: output)
        trap.expectContained(output)
    }

    @Test(arguments: ContainmentRunner.all)
    func killingTheParentAndEveryProcessReachesNothingOutside(runner: ContainmentRunner) throws {
        let decoys = try Decoys()
        let trap = HostileTrap()
        let output = runner.run("kill_parent", call: Self.call(trap, path: ""))
        let content = members(output)
        // The call still answers: its parent (init, or the fork server) is
        // out of its reach, and so is everything outside.
        #expect(output.failure == nil, "\(String(describing: output.failure))")
        #expect(content["parent"] != .number(-1), "the fixture found no PID namespace of its own: \(content)")
        decoys.expectUntouched(by: output)
        trap.expectContained(output)
    }

    @Test(arguments: ContainmentRunner.all)
    func processesStartedWhileLoadingDieWithTheRunner(runner: ContainmentRunner) throws {
        let decoys = try Decoys()
        let trap = HostileTrap()
        let output = runner.run("load_survivor", call: Self.call(trap, path: ""))
        #expect(output.failure == nil, "\(String(describing: output.failure))")
        let record = (try? String(contentsOfFile: trap.dataDirectory + "/survivor.txt", encoding: .utf8)) ?? ""
        #expect(record.contains("constructor"), "the constructor's process did not start: \(record)")
        // setsid is refused everywhere; whatever group it made, it is gone.
        for line in record.split(separator: "\n") { #expect(line.hasSuffix(" \(EPERM)"), "\(line)") }
        let name = "wh" + String(trap.dataDirectory.suffix(8))
        #expect(TestSupport.survivors(named: name).isEmpty, "a process started while loading survived")
        decoys.expectUntouched(by: output)
        trap.expectContained(output)
    }
}

/// A listening pathname Unix socket, for counting connections.
final class UnixListener {
    let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.utf8.prefix(bytes.count - 1).enumerated() { bytes[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        chmod(path, 0o777)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    deinit { close(fd) }

    /// Connections accepted since it opened (non-blocking).
    func acceptedConnections() -> Int {
        var count = 0
        while true {
            let client = accept(fd, nil, nil)
            if client < 0 { return count }
            close(client)
            count += 1
        }
    }
}
