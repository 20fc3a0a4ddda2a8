import CWidgetHostSupport
import WidgetHostABI
import WidgetHostModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Host-side settings for isolated calls.
public struct IsolationOptions: Sendable {
    /// Path of `widgethost-runner`; nil to look next to the running executable
    /// (or in `$WIDGETHOST_RUNNER`).
    public var runnerPath: String?
    /// Seconds the plugin has to load (`dlopen`, constructors, entry function).
    public var loadTimeout: Double
    /// The ABI versions the host offers.
    public var abiRange: ClosedRange<UInt32>
    /// Host name and version passed in the offer.
    public var hostVersion: String
    /// The sandbox around the plugin (`WIDGETHOST_SANDBOX=off` in the host's
    /// environment overrides it with `.off`).
    public var sandbox: SandboxPolicy

    public init(
        runnerPath: String? = nil, loadTimeout: Double = DefaultTimeouts.load,
        abiRange: ClosedRange<UInt32> = 1...1, hostVersion: String = "widgethost 0.1.0",
        sandbox: SandboxPolicy = .standard
    ) {
        self.sandbox = sandbox
        self.runnerPath = runnerPath
        self.loadTimeout = loadTimeout
        self.abiRange = abiRange
        self.hostVersion = hostVersion
    }
}

/// Runs one plugin load, and optionally one entry-point call, in a fresh
/// child process (`widgethost-runner`), and supervises it.
///
/// The child is started with `posix_spawn` in its own session and process
/// group, with only stdin (/dev/null), stdout and stderr (pipes to the host),
/// and the protocol socket (fd 3). Liveness is judged by the child's pidfd,
/// never by EOF on a pipe. On a deadline the whole process group is killed;
/// after every call the group is killed before the child is reaped, so no
/// grandchild outlives the call.
///
/// ```swift
/// let output = IsolatedRunner.run(plugin: "/path/libCountdownPlugin.so",
///                                 call: PluginCall(.timeline, kind: "com.widgethost.countdown",
///                                                  family: .systemSmall, now: now, dataDirectory: dir))
/// if let failure = output.failure { print(failure.message, failure.hint) }
/// ```
public enum IsolatedRunner {
    /// Loads `plugin` in a child and, if `call` is given, makes that call.
    /// Never throws: every failure is a typed `PluginFailure` in the output.
    public static func run(
        plugin: String, call: PluginCall? = nil, options: IsolationOptions = IsolationOptions()
    ) -> CallOutput {
        let path = absolutePath(plugin)
        var session = Supervision(path: path, call: call, options: options)
        return session.run()
    }

    /// The canonical absolute path of `path` (symlinks resolved), or `path`
    /// made absolute when it does not exist (the runner reports that).
    static func absolutePath(_ path: String) -> String {
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        if path.hasPrefix("/") { return path }
        guard let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        return String(cString: cwd) + "/" + path
    }
}

/// Monotonic seconds.
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// The state of one supervised child.
private struct Supervision {
    let path: String
    let call: PluginCall?
    let options: IsolationOptions

    var pid: pid_t = 0
    var pidfd: Int32 = -1
    var channel: Int32 = -1
    var stdoutPipe: Int32 = -1
    var stderrPipe: Int32 = -1

    var decoder = FrameDecoder()
    var stdoutBytes: [UInt8] = []
    var stderrBytes: [UInt8] = []
    var dropped = 0
    var channelOpen = true
    var stdoutOpen = true
    var stderrOpen = true

    enum Stage { case loading, calling, finished }
    var stage = Stage.loading
    var deadline = 0.0
    var startedAt = 0.0

    var description: PluginDescription?
    var result: ProviderResult?
    var failure: PluginFailure?
    var providerSeconds: Double?
    /// The runner's CPU time, once it is reaped.
    var childCPUSeconds: Double?
    var killedForTimeout = false
    /// The data directory the child runs in: the call's, or for a load
    /// without a call a temporary empty one (removed at the end).
    var dataDirectory = ""
    var temporaryDirectory: String?
    var policy = SandboxPolicy.off
    /// Forbidden system calls reported by the runner's SIGSYS handler, first per pid.
    var forbiddenSyscalls: [pid_t: PluginFailure.ForbiddenSyscall] = [:]

    init(path: String, call: PluginCall?, options: IsolationOptions) {
        self.path = path
        self.call = call
        self.options = options
    }

    mutating func run() -> CallOutput {
        startedAt = monotonicSeconds()
        if let problem = spawn() {
            return output(
                failure: PluginFailure(plugin: path, reason: .runnerUnavailable(problem)), exit: "not started")
        }
        send(
            LoadMessage.make(
                plugin: path, options: options, dataDirectory: dataDirectory, allowNetwork: call?.allowNetwork == true,
                policy: policy, mode: UInt32(WH_RUNNER_ONE_CALL)))
        deadline = monotonicSeconds() + options.loadTimeout

        let exited = supervise()
        let exit = finish(childExited: exited)
        if let temporaryDirectory { DataDirectory.removeTree(temporaryDirectory) }
        return output(failure: failure, exit: exit)
    }

    // MARK: Spawning

    /// Starts the runner; returns a problem description on failure.
    mutating func spawn() -> String? {
        guard let runner = RunnerLocator.locate(explicit: options.runnerPath) else {
            return
                "widgethost-runner was not found next to \(RunnerLocator.executableDirectory() ?? "the executable") and WIDGETHOST_RUNNER is not set"
        }
        var sockets: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &sockets) == 0 else {
            return "socketpair failed: \(String(cString: strerror(errno)))"
        }
        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        guard wh_pipe_cloexec(&outPipe) == 0, wh_pipe_cloexec(&errPipe) == 0 else {
            let problem = "pipe2 failed: \(String(cString: strerror(errno)))"
            for fd in sockets + outPipe + errPipe where fd >= 0 { close(fd) }
            return problem
        }
        policy = options.sandbox.effective
        let directory: String
        if let call {
            directory = call.dataDirectory
            DataDirectory.ensure(directory)
        } else if let made = DataDirectory.makeTemporary() {
            directory = made
            temporaryDirectory = made
        } else {
            for fd in sockets + outPipe + errPipe { close(fd) }
            return "cannot create a temporary data directory: \(String(cString: strerror(errno)))"
        }
        dataDirectory = directory
        let environment = ChildEnvironment.make(dataDirectory: directory, locale: call?.locale)
        let argv: [String] = ["widgethost-runner"]
        var spawnedPid: pid_t = 0
        var spawnedPidfd: Int32 = -1
        let rc = withCStrings(argv) { cArgv in
            withCStrings(environment) { cEnv in
                wh_spawn(
                    runner, cArgv, cEnv, sockets[1], outPipe[1], errPipe[1], directory, &spawnedPid,
                    &spawnedPidfd)
            }
        }
        close(sockets[1])
        close(outPipe[1])
        close(errPipe[1])
        guard rc == 0 else {
            close(sockets[0])
            close(outPipe[0])
            close(errPipe[0])
            return "posix_spawn(\(runner)) failed: \(String(cString: strerror(rc)))"
        }
        pid = spawnedPid
        pidfd = spawnedPidfd
        channel = sockets[0]
        stdoutPipe = outPipe[0]
        stderrPipe = errPipe[0]
        for fd in [channel, stdoutPipe, stderrPipe] {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        return nil
    }

    // MARK: The loop

    /// Polls the channel, the log pipes and the pidfd until the conversation
    /// is over, the child exits, or a deadline passes. Returns true when the
    /// child is known to have exited.
    mutating func supervise() -> Bool {
        while stage != .finished {
            let remaining = deadline - monotonicSeconds()
            if remaining <= 0 {
                timeOut()
                return false
            }
            // A stream at EOF is left out (poll ignores negative fds), so a
            // plugin that closes its stdout cannot make this loop spin.
            var fds = [
                pollfd(fd: channelOpen ? channel : -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stdoutOpen ? stdoutPipe : -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stderrOpen ? stderrPipe : -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0),
            ]
            // Without a pidfd (old kernels) poll in short slices and ask waitpid.
            let slice = pidfd >= 0 ? remaining : min(remaining, 0.005)
            // Round up to whole milliseconds: never wake before the deadline.
            let milliseconds = Int32(min((slice * 1000).rounded(.up), 3_600_000))
            let ready = poll(&fds, nfds_t(fds.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                fail(.protocolViolation("poll failed: \(String(cString: strerror(errno)))"))
                return false
            }
            if fds[1].revents != 0 {
                let drained = Descriptors.drain(stdoutPipe, into: &stdoutBytes)
                dropped += drained.dropped
                stdoutOpen = !drained.eof
            }
            if fds[2].revents != 0 {
                let drained = Descriptors.drain(stderrPipe, into: &stderrBytes)
                dropped += drained.dropped
                stderrOpen = !drained.eof
            }
            if fds[0].revents != 0 { readChannel() }
            let exited = pidfd >= 0 ? fds[3].revents != 0 : childHasExited()
            if exited {
                // Take what the child wrote before it exited.
                readChannel()
                return true
            }
        }
        return false
    }

    mutating func childHasExited() -> Bool {
        var info = siginfo_t()
        return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0
            && info._sifields._sigchld.si_pid == pid
    }

    mutating func readChannel() {
        guard channel >= 0 else { return }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while stage != .finished {
            let count = chunk.withUnsafeMutableBytes { read(channel, $0.baseAddress, $0.count) }
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) {
                channelOpen = false
                break
            }
            if count < 0 { break }
            decoder.append(chunk[0..<count])
            do {
                while stage != .finished, let frame = try decoder.next() { handle(frame) }
            } catch {
                fail(.protocolViolation(Self.explain(error)))
            }
        }
    }

    static func explain(_ error: FrameDecoder.Failure) -> String {
        switch error {
        case .badMagic(let magic):
            "a frame starts with 0x\(String(magic, radix: 16)) instead of the protocol's magic (did the plugin write to fd 3?)"
        case .badVersion(let version): "a frame has protocol version \(version), expected \(WH_WIRE_VERSION)"
        case .tooLarge(let length): "a frame of \(length) bytes exceeds the \(WH_WIRE_MAX_PAYLOAD)-byte limit"
        }
    }

    // MARK: Messages

    mutating func handle(_ frame: WireFrame) {
        var reader = WireReader(frame.payload)
        switch UInt32(frame.type) {
        case WH_MSG_LOADED.rawValue:
            guard stage == .loading else { return fail(.protocolViolation("LOADED received twice")) }
            let decoded = DescriptorDecoder.decode(&reader, path: path)
            guard !reader.malformed else { return fail(.protocolViolation("truncated LOADED message")) }
            switch decoded {
            case .failure(let failure):
                self.failure = failure
                stage = .finished
            case .success(let plugin):
                description = plugin
                startCall(plugin)
            }
        case WH_MSG_LOAD_FAILED.rawValue:
            let code = reader.u32()
            let detail = reader.string()
            let field = reader.string()
            let expected = reader.string()
            let found = reader.string()
            fail(
                LoadFailureMapping.reason(
                    code: code, detail: detail, field: field, expected: expected, found: found, options: options))
        case WH_MSG_RESULT.rawValue:
            guard stage == .calling, let call else { return fail(.protocolViolation("RESULT before CALL")) }
            let raw = RawResult.decode(&reader)
            guard !reader.malformed else { return fail(.protocolViolation("truncated RESULT message")) }
            providerSeconds = Double(raw.nanoseconds) / 1e9
            switch ResultValidator.validate(raw, for: call) {
            case .success(let validated): result = validated
            case .failure(let reason): failure = PluginFailure(plugin: path, reason: reason)
            }
            stage = .finished
        case WH_MSG_CALL_FAILED.rawValue:
            guard let call else { return fail(.protocolViolation("CALL_FAILED without a call")) }
            let code = reader.u32()
            let detail = reader.string()
            let found = reader.u64()
            let limit = reader.u64()
            fail(
                CallFailureMapping.reason(
                    code: code, detail: detail, found: found, limit: limit, call: call, plugin: description))
        case WH_MSG_FORBIDDEN_SYSCALL.rawValue:
            // Any process of the call may send it (a forked child inherits
            // the handler); finish() uses the runner's own.
            guard let report = ForbiddenSyscallReport.decode(frame.payload) else {
                return fail(.protocolViolation("truncated FORBIDDEN_SYSCALL message"))
            }
            if forbiddenSyscalls[report.pid] == nil { forbiddenSyscalls[report.pid] = report.syscall }
        default:
            fail(.protocolViolation("unknown message type \(frame.type)"))
        }
    }

    mutating func startCall(_ plugin: PluginDescription) {
        guard let call else {
            stage = .finished
            return
        }
        switch CallMessage.make(call, plugin: plugin) {
        case .failure(let reason): fail(reason)
        case .success(let message):
            stage = .calling
            deadline = monotonicSeconds() + call.effectiveTimeout
            send(message)
        }
    }

    mutating func fail(_ reason: PluginFailure.Reason) {
        if failure == nil { failure = PluginFailure(plugin: path, reason: reason) }
        stage = .finished
    }

    func send(_ bytes: [UInt8]) {
        // A child that is gone: its exit status will tell why.
        _ = Descriptors.sendAll(bytes, to: channel)
    }

    var currentPhase: PluginFailure.Phase {
        if stage == .calling, let call { return .call(call.entryPoint) }
        return .load
    }

    mutating func timeOut() {
        let phase = currentPhase
        let limit = phase == .load ? options.loadTimeout : (call?.effectiveTimeout ?? 0)
        killGroup()
        killedForTimeout = true
        fail(.timedOut(phase: phase, limit: limit))
    }

    func killGroup() {
        // SIGCONT first so a stopped group still receives the kill.
        kill(-pid, SIGCONT)
        kill(-pid, SIGKILL)
    }

    // MARK: Ending

    /// Ends the conversation, makes sure the child and its whole process group
    /// are gone, reaps the child and turns an unexpected exit into a failure.
    /// Returns how the child ended.
    mutating func finish(childExited: Bool) -> String {
        let phaseAtExit = currentPhase
        let conversationOver = stage == .finished
        // Closing the channel tells the runner to exit.
        close(channel)
        channel = -1
        if !childExited && !killedForTimeout {
            // Give the runner a moment to exit on its own, then kill.
            if !waitForExit(seconds: 0.5) { killGroup() }
        }
        // The leader may have exited, but its pid stays reserved until it is
        // reaped: kill the group (grandchildren) first, then reap.
        killGroup()
        _ = waitForExit(seconds: 5)
        var status: Int32 = 0
        var usage = rusage()
        var reaped: pid_t
        repeat { reaped = wait4(pid, &status, 0, &usage) } while reaped < 0 && errno == EINTR
        if reaped == pid { childCPUSeconds = CPUUsage.seconds(usage.ru_utime) + CPUUsage.seconds(usage.ru_stime) }
        dropped += Descriptors.drain(stdoutPipe, into: &stdoutBytes).dropped
        dropped += Descriptors.drain(stderrPipe, into: &stderrBytes).dropped
        close(stdoutPipe)
        close(stderrPipe)
        if pidfd >= 0 { close(pidfd) }

        var value: Int32 = 0
        var core: Int32 = 0
        let kind = wh_wait_status(status, &value, &core)
        let exit = kind == 2 && killedForTimeout ? "killed by SIGKILL (timeout)" : WaitStatus.describe(status)
        if (kind == 1 || kind == 2) && !conversationOver && failure == nil {
            let seccomp = policy.layers & UInt32(WH_SANDBOX_SECCOMP.rawValue) != 0
            failure = PluginFailure(
                plugin: path,
                reason: WaitStatus.reason(status, phase: phaseAtExit, seccomp: seccomp, syscall: forbiddenSyscalls[pid])
            )
        }
        return exit
    }

    /// Waits for the child to exit, up to `seconds`. True if it did.
    func waitForExit(seconds: Double) -> Bool {
        let end = monotonicSeconds() + seconds
        while true {
            if pidfd >= 0 {
                var fd = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
                let left = max(0, end - monotonicSeconds())
                if poll(&fd, 1, Int32(left * 1000) + 1) > 0 { return true }
            } else {
                var info = siginfo_t()
                if waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0,
                    info._sifields._sigchld.si_pid == pid
                {
                    return true
                }
                usleep(1000)
            }
            if monotonicSeconds() >= end { return false }
        }
    }

    func output(failure: PluginFailure?, exit: String) -> CallOutput {
        CallOutput(
            plugin: description,
            result: failure == nil ? result : nil,
            failure: failure,
            timing: CallTiming(
                totalSeconds: monotonicSeconds() - startedAt,
                loadSeconds: description?.loadSeconds,
                providerSeconds: providerSeconds, childCPUSeconds: childCPUSeconds),
            log: CapturedLog(
                stdout: String(decoding: stdoutBytes, as: UTF8.self),
                stderr: String(decoding: stderrBytes, as: UTF8.self),
                droppedBytes: dropped),
            childExit: exit,
            processGroup: pid)
    }
}

/// Calls `body` with a NULL-terminated C array of the strings.
func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for pointer in pointers { free(pointer) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
