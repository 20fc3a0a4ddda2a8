import Foundation
import Testing
import WidgetHostIsolation
import WidgetHostModel

#if canImport(Glibc)
    import Glibc
#endif

/// A trap around one hostile call: a secret planted in a HOME-like
/// directory outside the allowed paths, a TCP listener on 127.0.0.1, a path
/// outside the data directory the plugin must not be able to create, and a
/// fresh data directory.
final class HostileTrap {
    let home = TestSupport.temporaryDirectory("home")
    let dataDirectory = TestSupport.temporaryDirectory("hostile-data")
    let secret = "s3cr3t-\(UUID().uuidString.prefix(8))"
    var secretPath: String { home + "/.secret" }
    var outsidePath: String { home + "/written-by-plugin" }
    let listener: Int32
    let port: UInt16

    init() {
        _ = FileManager.default.createFile(atPath: home + "/.secret", contents: Data(secret.utf8))
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = listen(fd, 16)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit {
        close(listener)
        try? FileManager.default.removeItem(atPath: home)
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }

    /// Connections the listener accepted since it opened (non-blocking).
    func acceptedConnections() -> Int {
        var count = 0
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 { return count }
            close(fd)
            count += 1
        }
    }

    /// Runs `fixture` with this trap's data directory; `hostile` fixtures
    /// (the ones with `path`/`port` parameters) get the trap's targets.
    func run(
        _ fixture: String, path: String? = nil, timeout: Double? = nil, allowNetwork: Bool = false,
        sandbox: SandboxPolicy = .standard
    ) -> CallOutput {
        var configuration: [String: String] = [:]
        if let path { configuration = ["path": "\"\(path)\"", "port": "\(port)"] }
        let call = PluginCall(
            .timeline, kind: "test.fixture", family: .systemSmall, now: Date().timeIntervalSince1970,
            timeout: timeout, configuration: configuration, dataDirectory: dataDirectory,
            allowNetwork: allowNetwork)
        return IsolatedRunner.run(
            plugin: TestSupport.fixture(fixture), call: call, options: IsolationOptions(sandbox: sandbox))
    }

    /// What every hostile call must leave true: no survivor, nothing written
    /// outside the data directory, the secret unread, no connection, and a
    /// host that still works.
    func expectContained(_ output: CallOutput, sourceLocation: SourceLocation = #_sourceLocation) {
        TestSupport.expectNoSurvivors(output, sourceLocation: sourceLocation)
        #expect(
            !FileManager.default.fileExists(atPath: outsidePath), "the plugin wrote outside its data directory",
            sourceLocation: sourceLocation)
        let seen =
            output.log.stdout + output.log.stderr + (output.result?.entries.map(\.contentJSON).joined() ?? "")
            + (output.failure?.message ?? "")
        #expect(!seen.contains(secret), "the planted secret was read", sourceLocation: sourceLocation)
        #expect(acceptedConnections() == 0, "the listener got a connection", sourceLocation: sourceLocation)
        TestSupport.expectHostStillWorks(sourceLocation: sourceLocation)
    }
}

/// The content of the only entry of a successful call, as JSON members.
func members(_ output: CallOutput, sourceLocation: SourceLocation = #_sourceLocation) -> [String: JSONValue] {
    guard let entry = output.result?.entries.first else {
        Issue.record("no result: \(String(describing: output.failure))", sourceLocation: sourceLocation)
        return [:]
    }
    let pairs = (try? JSONValue.parse(entry.contentJSON))?.objectMembers ?? []
    return Dictionary(pairs, uniquingKeysWith: { first, _ in first })
}

/// Hostile plugins, each doing one bad thing inside the sandbox
/// (docs/sandbox.md has the table).
@Suite("Hostile fixtures")
struct HostileFixtureTests {
    @Test func threadsStartedInAConstructorDoNotSurviveTheCall() {
        let trap = HostileTrap()
        let output = trap.run("ctor_threads")
        #expect(output.failure == nil)
        #expect(output.result?.entries.count == 3)
        trap.expectContained(output)
    }

    @Test func garbageOnStdoutAndStderrIsCappedAndKeptApartFromTheProtocol() {
        let trap = HostileTrap()
        let output = trap.run("garbage_output")
        #expect(output.failure == nil)
        #expect(output.result?.entries.count == 3)
        #expect(output.log.droppedBytes > 0)
        #expect(output.log.stdout.utf8.count <= 4 * WidgetHostLimits.logBytesPerStream)
        trap.expectContained(output)
    }

    @Test func forkBombTimesOutAndNoProcessSurvives() {
        let trap = HostileTrap()
        let output = trap.run("fork_bomb", timeout: 1)
        #expect(output.failure?.reason == .timedOut(phase: .call(.timeline), limit: 1))
        trap.expectContained(output)
    }

    /// The pids cgroup binds root: with `maxTasks` 32 the bomb's forks are
    /// refused (EAGAIN) with at most 32 processes, through a spawned runner
    /// and through a fork server (where the server and its standby count too).
    @Test func forkBombIsBoundedByThePidsCgroup() throws {
        var policy = SandboxPolicy.standard
        policy.maxTasks = 32
        let trap = HostileTrap()
        // 3 s: time enough for the refusal to be logged on a busy machine.
        let spawned = trap.run("fork_bomb", timeout: 3, sandbox: policy)
        let server = ForkServer(plugin: TestSupport.fixture("fork_bomb"), options: IsolationOptions(sandbox: policy))
        let forked = server.call(trap.call(ForkCase(fixture: "fork_bomb", timeout: 3)))
        server.stop()
        for (mode, output) in [("spawn", spawned), ("fork server", forked)] {
            #expect(output.failure?.reason == .timedOut(phase: .call(.timeline), limit: 3), "\(mode)")
            trap.expectContained(output)
            let log = output.log.stderr
            if log.contains("no pids cgroup") {
                // Not on this machine (e.g. cgroup v2 without delegation): the
                // deadline and the group kill still contain the bomb.
                continue
            }
            guard let line = log.split(separator: "\n").first(where: { $0.hasPrefix("fork_bomb: fork refused") }),
                let count = line.split(separator: " ").dropLast().last.flatMap({ Int($0) })
            else {
                Issue.record("\(mode): no fork was refused; log: \(log.prefix(500))")
                continue
            }
            #expect(line.contains("Resource temporarily unavailable"), "\(mode): \(line)")
            #expect(count >= 2 && count <= 32, "\(mode): \(line)")
        }
    }

    @Test func allocatingPastTheAddressSpaceLimitFailsMalloc() throws {
        let trap = HostileTrap()
        let output = trap.run("alloc_past_limit")
        guard case .pluginError(let code, let message)? = output.failure?.reason else {
            Issue.record("expected pluginError, got \(String(describing: output.failure))")
            return
        }
        #expect(code == ENOMEM)
        // Stopped near the default limit (4 GiB), far below the 1 TiB it asked for.
        let mib = Int(message.split(separator: " ").dropLast().last ?? "") ?? -1
        #expect(mib > 0 && mib <= Int(SandboxPolicy.standard.addressSpaceBytes >> 20), "\(message)")
        trap.expectContained(output)
    }

    @Test func writingOutsideTheDataDirectoryIsDenied() {
        let trap = HostileTrap()
        let output = trap.run("write_outside", path: trap.outsidePath)
        let content = members(output)
        #expect(Self.isDenial(content["outside"]), "\(content)")
        #expect(content["inside"] == .number(0))
        #expect(FileManager.default.fileExists(atPath: trap.dataDirectory + "/inside.txt"))
        trap.expectContained(output)
    }

    @Test func readingAPlantedSecretIsDenied() {
        let trap = HostileTrap()
        let output = trap.run("read_secret", path: trap.secretPath)
        #expect(Self.isDenial(members(output)["errno"]))
        trap.expectContained(output)
    }

    @Test func tcpToALocalListenerIsRefusedWithoutNetwork() {
        let trap = HostileTrap()
        let output = trap.run("tcp_connect", path: "")
        // seccomp refuses internet sockets before any connect.
        #expect(members(output)["socket"] == .number(Double(EPERM)))
        trap.expectContained(output)
    }

    @Test func tcpReachesTheListenerWhenTheKindMayUseTheNetwork() {
        // The control for the test above: the listener and the fixture work.
        let trap = HostileTrap()
        let output = trap.run("tcp_connect", path: "", allowNetwork: true)
        #expect(members(output)["connect"] == .number(0))
        #expect(trap.acceptedConnections() == 1)
        TestSupport.expectNoSurvivors(output)
    }

    @Test func ptraceOfTheHostIsKilledAsAForbiddenSyscall() {
        let trap = HostileTrap()
        let output = trap.run("ptrace_host")
        let ptrace = PluginFailure.ForbiddenSyscall(
            name: "ptrace", number: HostileFixtureTests.sysPtrace, architecture: HostileFixtureTests.nativeArchitecture)
        #expect(output.failure?.reason == .forbiddenSyscall(phase: .call(.timeline), syscall: ptrace))
        #expect(output.failure?.code == "forbiddenSyscall")
        #expect(
            output.failure?.message.contains(
                "was killed during timeline for calling ptrace (syscall \(HostileFixtureTests.sysPtrace)), which the sandbox forbids"
            )
                == true, "\(String(describing: output.failure?.message))")
        #expect(output.childExit.contains("SIGSYS"))
        trap.expectContained(output)
    }

    @Test func mountIsKilledAsAForbiddenSyscallAndNamed() {
        // keyctl (EPERM) goes on; mount is trapped and named.
        let trap = HostileTrap()
        let output = trap.run("forbidden_syscall")
        let mount = PluginFailure.ForbiddenSyscall(
            name: "mount", number: HostileFixtureTests.sysMount, architecture: HostileFixtureTests.nativeArchitecture)
        #expect(output.failure?.reason == .forbiddenSyscall(phase: .call(.timeline), syscall: mount))
        #expect(output.failure?.message.contains("calling mount (syscall \(HostileFixtureTests.sysMount))") == true)
        trap.expectContained(output)
    }

    @Test func aForbiddenSyscallIsNamedThroughTheForkServer() {
        let trap = HostileTrap()
        let server = ForkServer(plugin: TestSupport.fixture("forbidden_syscall"))
        for _ in 1...2 {
            let output = server.call(trap.call(ForkCase(fixture: "forbidden_syscall")))
            guard case .forbiddenSyscall(let phase, let syscall)? = output.failure?.reason else {
                Issue.record("expected forbiddenSyscall, got \(String(describing: output.failure))")
                continue
            }
            #expect(phase == .call(.timeline))
            #expect(syscall?.name == "mount")
            #expect(syscall?.number == HostileFixtureTests.sysMount)
            trap.expectContained(output)
        }
        server.stop()
    }

    @Test func aForbiddenSyscallInAConstructorIsNamedDuringLoad() {
        let trap = HostileTrap()
        let mount = PluginFailure.ForbiddenSyscall(
            name: "mount", number: HostileFixtureTests.sysMount, architecture: HostileFixtureTests.nativeArchitecture)
        let spawned = trap.run("ctor_forbidden")
        #expect(spawned.failure?.reason == .forbiddenSyscall(phase: .load, syscall: mount))
        trap.expectContained(spawned)
        let server = ForkServer(plugin: TestSupport.fixture("ctor_forbidden"))
        let forked = server.call(trap.call(ForkCase(fixture: "ctor_forbidden")))
        server.stop()
        #expect(forked.failure?.reason == .forbiddenSyscall(phase: .load, syscall: mount))
        trap.expectContained(forked)
    }

    @Test func aPluginCannotTakeSIGSYSFromTheRunner() {
        let trap = HostileTrap()
        let ptrace = PluginFailure.ForbiddenSyscall(
            name: "ptrace", number: HostileFixtureTests.sysPtrace, architecture: HostileFixtureTests.nativeArchitecture
        )
        // Replacing the handler is refused: the call is still named.
        let replaced = trap.run("sigsys_override", path: "")
        #expect(replaced.log.stderr.contains("sigaction(SIGSYS) = -1 (Operation not permitted)"))
        #expect(replaced.failure?.reason == .forbiddenSyscall(phase: .call(.timeline), syscall: ptrace))
        trap.expectContained(replaced)
        // Blocking SIGSYS does not save the plugin (the kernel forces the
        // default action), but the call can no longer be named.
        let blocked = trap.run("sigsys_override", path: "block")
        #expect(blocked.failure?.reason == .forbiddenSyscall(phase: .call(.timeline), syscall: nil))
        #expect(blocked.childExit.contains("SIGSYS"))
        trap.expectContained(blocked)
    }

    /// How the sandbox refuses a path outside the plugin's grants: not in
    /// its view (ENOENT; EROFS for a new file in a directory of the view's
    /// read-only skeleton), or refused by Landlock (EACCES) where the
    /// mount namespace layer is unavailable (docs/sandbox.md).
    static func isDenial(_ value: JSONValue?) -> Bool {
        [ENOENT, EROFS, EACCES].map { JSONValue.number(Double($0)) }.contains(value)
    }

    /// AUDIT_ARCH_* of this machine (what si_arch says for a native call),
    /// and the numbers of ptrace and mount (asm/unistd_64.h; Glibc's SYS_*
    /// macros are not imported into Swift).
    #if arch(x86_64)
        static let nativeArchitecture: UInt32 = 0xC000_003E
        static let sysPtrace: Int32 = 101
        static let sysMount: Int32 = 165
    #elseif arch(arm64)
        static let nativeArchitecture: UInt32 = 0xC000_00B7
        static let sysPtrace: Int32 = 117
        static let sysMount: Int32 = 40
    #endif

    @Test func extraReadOnlyPathsAreReadableAndOnlyThem() throws {
        let trap = HostileTrap()
        let fonts = trap.home + "/fonts"
        try FileManager.default.createDirectory(atPath: fonts, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: fonts + "/font.txt", contents: Data("glyphs".utf8))
        // Refused by default.
        let refused = trap.run("read_secret", path: fonts + "/font.txt")
        #expect(Self.isDenial(members(refused)["errno"]))
        // Allowed with the extra path; the planted secret next to it is not.
        var policy = SandboxPolicy.standard
        policy.extraReadOnlyPaths = [fonts, trap.home + "/does-not-exist", "relative/dir"]
        let allowed = trap.run("read_secret", path: fonts + "/font.txt", sandbox: policy)
        #expect(members(allowed)["errno"] == .number(0))
        #expect(members(allowed)["secret"] == .string("glyphs"))
        #expect(allowed.log.stderr.contains("does-not-exist: No such file or directory; not granted"))
        #expect(allowed.log.stderr.contains("relative/dir is not absolute; not granted"))
        let secret = trap.run("read_secret", path: trap.secretPath, sandbox: policy)
        #expect(Self.isDenial(members(secret)["errno"]))
        trap.expectContained(secret)
        // Read-only: writing there is refused.
        let write = trap.run("write_outside", path: fonts + "/new.txt", sandbox: policy)
        #expect(Self.isDenial(members(write)["outside"]))
        #expect(!FileManager.default.fileExists(atPath: fonts + "/new.txt"))
    }

    @Test func extraReadWritePathsAreWritable() throws {
        let trap = HostileTrap()
        let cache = trap.home + "/cache"
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        var policy = SandboxPolicy.standard
        policy.extraReadWritePaths = [cache]
        let output = trap.run("write_outside", path: cache + "/written.txt", sandbox: policy)
        #expect(members(output)["outside"] == .number(0))
        #expect(FileManager.default.fileExists(atPath: cache + "/written.txt"))
        // The same through a fork server, which carries the policy in its LOAD.
        let server = ForkServer(
            plugin: TestSupport.fixture("write_outside"), options: IsolationOptions(sandbox: policy))
        var call = trap.call(ForkCase(fixture: "write_outside", target: "outside"))
        call.configuration["path"] = "\"\(cache)/forked.txt\""
        let forked = server.call(call)
        server.stop()
        #expect(members(forked)["outside"] == .number(0))
        #expect(FileManager.default.fileExists(atPath: cache + "/forked.txt"))
        // Elsewhere outside the data directory stays refused.
        let elsewhere = trap.run("write_outside", path: trap.outsidePath, sandbox: policy)
        #expect(Self.isDenial(members(elsewhere)["outside"]))
        trap.expectContained(elsewhere)
    }

    @Test func theSandboxCanBeTurnedOffForDebugging() {
        // SandboxPolicy.off is what WIDGETHOST_SANDBOX=off selects: no layer
        // but the session one, and an internet socket is no longer refused.
        let trap = HostileTrap()
        let output = trap.run("tcp_connect", path: "", sandbox: .off)
        #expect(members(output)["socket"] == .number(0))
        #expect(trap.acceptedConnections() == 1)
        TestSupport.expectNoSurvivors(output)
    }

    @Test func stdinIsEmpty() {
        let trap = HostileTrap()
        let output = trap.run("read_stdin", path: "")
        #expect(members(output) == ["bytes": .number(0), "errno": .number(0)])
        trap.expectContained(output)
    }

    @Test func onlyFdsZeroToThreeAreOpenAndClosingThemHarmsNothing() {
        let trap = HostileTrap()
        let output = trap.run("close_fds", path: "")
        #expect(members(output)["open"] == .number(0))
        trap.expectContained(output)
    }

    @Test func writingOnTheProtocolChannelIsAProtocolViolation() {
        let trap = HostileTrap()
        let output = trap.run("write_fd3")
        #expect(output.failure?.code == "protocolViolation")
        trap.expectContained(output)
    }

    @Test func aGrandchildCannotLeaveTheProcessGroup() throws {
        let trap = HostileTrap()
        let output = trap.run("setsid_escape")
        #expect(output.failure == nil)
        let record = try String(contentsOfFile: trap.dataDirectory + "/escapee.pid", encoding: .utf8)
        let fields = record.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Int32($0) }
        #expect(fields.count == 2)
        #expect(fields.last == 0, "setsid() succeeded in the sandbox")
        // Its pid is its PID namespace's: it is found by the name it gave
        // itself (from its data directory's name).
        let name = "wh" + String(trap.dataDirectory.suffix(8))
        #expect(TestSupport.survivors(named: name).isEmpty, "the grandchild \(name) outlived the call")
        trap.expectContained(output)
    }
}
