import CWidgetHostSupport
import WidgetHostModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A fork server for one plugin: a `widgethost-runner` started once that
/// applies the sandbox, loads the plugin and then answers every call in a
/// fresh child forked from it (docs/isolation.md, "Fork server").
///
/// The server never calls plugin entry points itself (only the plugin's
/// optional `warm_up`, once, before it forks: `warmUp`) and stays
/// single-threaded. Each call child makes one call in its own process group;
/// the host kills that group when it has the answer or when the deadline
/// passes and says CALL_ENDED, and the server forks a replacement for the
/// standby that was used (it keeps two). Calls are
/// serialized: one `ForkServer` makes one call at a time (use one per thread
/// for concurrency).
///
/// - The server is restarted when it died, when the plugin file changed on
///   disk (size, mtime or inode), and when a call's data directory, locale or
///   network permission differs from the one it was started for (those are
///   part of its sandbox).
/// - A plugin with more than one thread after loading cannot be forked safely:
///   every call then spawns a fresh runner (`fallbackReason` says why).
///
/// ```swift
/// let server = ForkServer(plugin: "/path/libCountdownPlugin.so")
/// let output = server.call(PluginCall(.snapshot, kind: "com.widgethost.countdown",
///                                     family: .systemSmall, now: now, dataDirectory: dir))
/// ```
public final class ForkServer {
    public let pluginPath: String
    public let options: IsolationOptions
    /// Why calls spawn a fresh runner instead of forking, if they do.
    public private(set) var fallbackReason: String?
    /// The plugin as the server loaded it (nil before the first call).
    public private(set) var plugin: PluginDescription?
    /// How many times a server was started (1 after the first call).
    public private(set) var starts = 0
    /// For the last call that timed out: seconds from its deadline to the
    /// SIGKILL of the child's process group (how late the timeout was enforced).
    public private(set) var lastTimeoutLateness: Double?
    /// What became of the plugin's warm-up in the current server (`.none`
    /// before the first call or when the plugin has none).
    public private(set) var warmUp = WarmUpOutcome.none
    /// Set when a warm-up failed: later servers for this file start without
    /// it (cleared when the file changes).
    private var warmUpFailure: String?
    /// The last CALL message and its call (`now` and timeout cleared), for
    /// the plugin as currently loaded.
    private var lastCall: (key: PluginCall, message: [UInt8])?

    private struct Key: Equatable {
        var dataDirectory: String
        var locale: String
        var allowNetwork: Bool
    }

    private var key: Key?
    private var stamp: FileStamp?
    private var server: pid_t = 0
    /// The fork server process in the host's namespace (see `start`).
    private var servingPid: pid_t = 0
    private var serverPidfd: Int32 = -1
    private var channel: Int32 = -1
    private var stdoutPipe: Int32 = -1
    private var stderrPipe: Int32 = -1
    private var decoder = FrameDecoder()
    private var channelEOF = false
    /// Frames from the server decoded but not handled yet (e.g. the
    /// standby's CHILD_STARTED that arrived with LOADED).
    private var queue: [WireFrame] = []
    /// Descriptors received with the server's frames (SCM_RIGHTS), in
    /// order: each CHILD_STARTED takes the next one.
    private var receivedFds: [Int32] = []
    /// Call children the server announced and no call used yet, oldest
    /// first: pid, the host's end of the child's own channel (non-blocking)
    /// and a pidfd of the child, both from CHILD_STARTED, and the child's
    /// process group as the host sees it (`group`, from the pidfd: with the
    /// sandbox's PID namespace `pid` is the server's view; 0 if unknown).
    private var standbys: [Standby] = []
    /// `pid` as the server named it (its own PID namespace's view, used
    /// only to talk to the server: CALL_ENDED, CHILD_EXITED), `group` the
    /// child's pid in the host's namespace as the kernel reports it for the
    /// pidfd (the process group the child leads), used for every kill.
    private typealias Standby = (pid: pid_t, fd: Int32, pidfd: Int32, group: pid_t)
    /// Wait statuses from CHILD_EXITED, by pid (only recent ones are kept).
    private var exitStatuses: [pid_t: Int32] = [:]
    /// CPU time used so far by the servers this instance started and their
    /// call children, as of the last child reaped (see `CPUUsage`).
    public private(set) var cpuUsage = CPUUsage()
    /// The servers' CPU time before the current server started.
    private var earlierServersSeconds = 0.0
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    private var policy = SandboxPolicy.off
    private var capture = LogCapture()
    /// Timer slack and real-time priority for the last stretch before a
    /// deadline (see `wait`).
    private var boost = wh_deadline_boost()
    /// How long before a deadline the waiting thread is boosted: long
    /// enough that a wake-up delayed by a loaded machine (measured: up to
    /// 15 ms with both cores busy) still comes before the deadline.
    private static let approach = 0.05

    public init(plugin: String, options: IsolationOptions = IsolationOptions()) {
        self.pluginPath = IsolatedRunner.absolutePath(plugin)
        self.options = options
    }

    deinit { stop() }

    /// Whether a server process is running now.
    public var isRunning: Bool { server > 0 }

    /// The server's pid (0 when none runs).
    public var serverPid: Int32 { server }

    /// Makes one call. Never throws: every failure is a typed `PluginFailure`,
    /// the same outcomes as `IsolatedRunner.run`.
    public func call(_ call: PluginCall) -> CallOutput {
        defer { wh_deadline_boost_end(&boost) }
        let startedAt = monotonicSeconds()
        capture = LogCapture()
        if let early = ensureServer(for: call, startedAt: startedAt) { return early }
        if fallbackReason != nil {
            return IsolatedRunner.run(plugin: pluginPath, call: call, options: options)
        }
        return perform(call, startedAt: startedAt)
    }

    /// Starts the server for calls with this data directory, locale and
    /// network permission without making a call, and returns the plugin as
    /// it loaded (the daemon describes its plugins this way: one load, not
    /// one to describe and another to call). A later call with the same
    /// settings uses this server; `warmUp` and `fallbackReason` are known
    /// when it returns.
    ///
    /// ```swift
    /// let server = ForkServer(plugin: path)
    /// switch server.prepare(dataDirectory: dir) {
    /// case .success(let plugin): print(plugin.kinds.map(\.id), server.warmUp.summary)
    /// case .failure(let failure): print(failure.message)
    /// }
    /// ```
    public func prepare(dataDirectory: String, locale: String = "en-US", allowNetwork: Bool = false)
        -> Result<PluginDescription, PluginFailure>
    {
        let probe = PluginCall(
            .placeholder, kind: "", family: .systemSmall, now: 0, locale: locale, dataDirectory: dataDirectory,
            allowNetwork: allowNetwork)
        capture = LogCapture()
        if let early = ensureServer(for: probe, startedAt: monotonicSeconds()) {
            return .failure(
                early.failure
                    ?? PluginFailure(plugin: pluginPath, reason: .protocolViolation("the fork server did not start")))
        }
        guard let plugin else {
            return .failure(PluginFailure(plugin: pluginPath, reason: .protocolViolation("no plugin loaded")))
        }
        return .success(plugin)
    }

    /// Makes sure a server for `call`'s settings runs (or that calls spawn,
    /// `fallbackReason`): reloads a changed file, restarts a dead server or
    /// one started for other settings, and once more without the warm-up
    /// when the warm-up failed. Returns an output when loading failed.
    private func ensureServer(for call: PluginCall, startedAt: Double) -> CallOutput? {
        let current = FileStamp(pluginPath)
        if current != stamp {
            // New or changed file: load it again, and re-decide the fallback.
            stop()
            stamp = current
            fallbackReason = nil
            plugin = nil
            warmUpFailure = nil
            warmUp = .none
            lastCall = nil
        }
        if fallbackReason != nil { return nil }
        let wanted = Key(dataDirectory: call.dataDirectory, locale: call.locale, allowNetwork: call.allowNetwork)
        // A server that died since the last call is noticed when its standby
        // cannot take the CALL (`perform` starts it again): no check here.
        if server > 0 && key != wanted { stop() }
        if server == 0 {
            if let early = start(for: call, key: wanted, startedAt: startedAt) { return early }
            if server == 0, fallbackReason == nil, warmUpFailure != nil {
                // The warm-up failed and the server was stopped: once more,
                // without it.
                if let early = start(for: call, key: wanted, startedAt: startedAt) { return early }
            }
        }
        return nil
    }

    /// Stops the server (closing the channel ends it) and reaps it.
    /// Returns its wait status (0 when none ran).
    @discardableResult
    public func stop() -> Int32 {
        guard server > 0 else { return 0 }
        close(channel)
        for standby in standbys {
            _ = wh_pidfd_kill(standby.pidfd, SIGKILL)
            close(standby.fd)
            close(standby.pidfd)
        }
        for fd in receivedFds { close(fd) }
        standbys = []
        receivedFds = []
        exitStatuses = [:]
        kill(-server, SIGCONT)
        kill(-server, SIGKILL)
        var status: Int32 = 0
        while waitpid(server, &status, 0) < 0 && errno == EINTR {}
        for fd in [serverPidfd, stdoutPipe, stderrPipe] where fd >= 0 { close(fd) }
        server = 0
        servingPid = 0
        serverPidfd = -1
        channel = -1
        stdoutPipe = -1
        stderrPipe = -1
        decoder = FrameDecoder()
        queue = []
        channelEOF = false
        key = nil
        earlierServersSeconds = cpuUsage.serverSeconds
        return status
    }

    // MARK: Starting

    private func serverAlive() -> Bool {
        guard serverPidfd >= 0 else { return kill(server, 0) == 0 }
        var fd = pollfd(fd: serverPidfd, events: Int16(POLLIN), revents: 0)
        return poll(&fd, 1, 0) == 0
    }

    /// Starts the server and loads the plugin. Returns an output when the
    /// call ends here (a load failure); nil when the server runs, when it
    /// was stopped for a fallback (`fallbackReason`) or for a failed warm-up
    /// (`warmUpFailure`: start again without it).
    private func start(for call: PluginCall, key wanted: Key, startedAt: Double) -> CallOutput? {
        func early(_ reason: PluginFailure.Reason, exit: String) -> CallOutput {
            let failure = PluginFailure(plugin: pluginPath, reason: reason)
            return output(startedAt: startedAt, result: nil, failure: failure, exit: exit, group: 0)
        }
        policy = options.sandbox.effective
        DataDirectory.ensure(call.dataDirectory)
        switch RunnerLauncher.start(options: options, dataDirectory: call.dataDirectory, locale: call.locale) {
        case .failure(let reason): return early(reason, exit: "not started")
        case .success(let child):
            server = child.pid
            serverPidfd = child.pidfd
            channel = child.channel
            stdoutPipe = child.stdout
            stderrPipe = child.stderr
        }
        key = wanted
        starts += 1

        let load = LoadMessage.make(
            plugin: pluginPath, options: options, dataDirectory: call.dataDirectory, allowNetwork: call.allowNetwork,
            policy: policy, mode: UInt32(WH_RUNNER_FORK_SERVER), warmUp: warmUpFailure == nil)
        guard Descriptors.sendAll(load, to: channel) else {
            stop()
            return early(.exitedEarly(phase: .load, status: -1), exit: "exited before LOAD")
        }

        let deadline = monotonicSeconds() + options.loadTimeout
        var forbidden: [pid_t: PluginFailure.ForbiddenSyscall] = [:]
        /// Loaded, and its warm-up running: a failure from here on is the
        /// warm-up's, and the server is started again without it.
        var warmingUp = false
        /// Records why the warm-up failed (the server, stopped, is started
        /// again without it by `ensureServer`).
        func warmUpFailed(_ what: String) -> CallOutput? {
            stop()
            let reason = "its warm_up \(what); calls run without it (docs/abi.md, \"The warm-up\")"
            warmUpFailure = reason
            warmUp = .failed(reason)
            return nil
        }
        while true {
            let waited = wait(until: deadline)
            if waited == .timedOut {
                if warmingUp {
                    return warmUpFailed(
                        "did not return within the load timeout (\(Timestamp.duration(options.loadTimeout)))")
                }
                stop()
                return early(.timedOut(phase: .load, limit: options.loadTimeout), exit: "killed by SIGKILL (timeout)")
            }
            let frames: [WireFrame]
            switch readFrames() {
            case .failure(let reason):
                stop()
                return early(reason, exit: "killed by SIGKILL (protocol violation)")
            case .success(let got): frames = got
            }
            for (index, frame) in frames.enumerated() {
                var reader = WireReader(frame.payload)
                switch UInt32(frame.type) {
                case WH_MSG_LOADED.rawValue:
                    queue = Array(frames[(index + 1)...])
                    switch DescriptorDecoder.decode(&reader, path: pluginPath) {
                    case .failure(let failure):
                        stop()
                        return output(startedAt: startedAt, result: nil, failure: failure, exit: "stopped", group: 0)
                    case .success(let description):
                        plugin = description
                        lastCall = nil
                        // The process that serves (and forks every call child):
                        // the runner itself, or below the sandbox's relay and
                        // PID-namespace init. Known from the kernel, not a message.
                        servingPid = wh_deepest_descendant(server, 2)
                        if description.threadsAfterLoad > 1 {
                            fallbackReason =
                                "the plugin had \(description.threadsAfterLoad) threads after loading, and fork() copies only one: each call spawns a fresh runner"
                            stop()
                            return nil  // `call` spawns a runner for the call
                        }
                        if description.hasWarmUp && warmUpFailure == nil {
                            warmingUp = true  // WARMED follows
                            continue
                        }
                        warmUp = warmUpFailure.map { .failed($0) } ?? .none
                        return nil
                    }
                case WH_MSG_WARMED.rawValue where warmingUp:
                    queue = Array(frames[(index + 1)...])
                    let nanoseconds = reader.u64()
                    let threads = reader.u32()
                    if threads > 1 {
                        return warmUpFailed(
                            "left \(threads) threads running, and the fork server cannot fork a process with threads")
                    }
                    warmUp = .ran(seconds: Double(nanoseconds) / 1e9)
                    return nil
                case WH_MSG_LOAD_FAILED.rawValue:
                    let code = reader.u32()
                    let detail = reader.string()
                    let field = reader.string()
                    let expected = reader.string()
                    let found = reader.string()
                    stop()
                    return early(
                        LoadFailureMapping.reason(
                            code: code, detail: detail, field: field, expected: expected, found: found,
                            options: options), exit: "exited 0")
                case WH_MSG_FORBIDDEN_SYSCALL.rawValue:
                    if let report = ForbiddenSyscallReport.decode(frame.payload), forbidden[report.pid] == nil {
                        forbidden[report.pid] = report.syscall
                    }
                default:
                    stop()
                    return early(.protocolViolation("unexpected message \(frame.type) while loading"), exit: "killed")
                }
            }
            if waited == .serverExited && frames.isEmpty {
                let syscall = forbidden[server]
                if warmingUp {
                    let status = stop()
                    if case .forbiddenSyscall = WaitStatus.reason(
                        status, phase: .load, seccomp: seccompOn, syscall: syscall)
                    {
                        return warmUpFailed(
                            "called a forbidden system call (\(syscall.map { "\($0)" } ?? "killed by SIGSYS"))")
                    }
                    return warmUpFailed("crashed the fork server (\(WaitStatus.describe(status)))")
                }
                let status = stop()
                return early(
                    WaitStatus.reason(status, phase: .load, seccomp: seccompOn, syscall: syscall),
                    exit: WaitStatus.describe(status))
            }
        }
    }

    // MARK: Calling

    private func perform(_ call: PluginCall, startedAt: Double) -> CallOutput {
        guard let plugin else {
            return output(
                startedAt: startedAt, result: nil,
                failure: PluginFailure(plugin: pluginPath, reason: .protocolViolation("no plugin loaded")),
                exit: "none", group: 0)
        }
        var message: [UInt8]
        // Calls of one instance differ only in `now` and the timeout: the
        // last message is reused with those two fields written in.
        var key = call
        key.now = 0
        key.timeout = nil
        if let last = lastCall, last.key == key {
            message = last.message
            CallMessage.patch(&message, for: call)
        } else {
            switch CallMessage.make(call, plugin: plugin) {
            case .failure(let reason):
                return output(
                    startedAt: startedAt, result: nil, failure: PluginFailure(plugin: pluginPath, reason: reason),
                    exit: "no call made", group: 0)
            case .success(let bytes): message = bytes
            }
            lastCall = (key, message)
        }
        let phase = PluginFailure.Phase.call(call.entryPoint)
        let deadline = monotonicSeconds() + call.effectiveTimeout

        // The standby the server announced: a child waiting on its own channel.
        var taken: Standby?
        var attempts = 0
        var restarted = false
        /// The server died since the last call (its children with it): start
        /// it again, once. An output when the call ends here.
        func restart() -> CallOutput? {
            stop()
            restarted = true
            if let early = ensureServer(for: call, startedAt: startedAt) { return early }
            if fallbackReason != nil { return IsolatedRunner.run(plugin: pluginPath, call: call, options: options) }
            return nil
        }
        while taken == nil {
            switch takeStandby(until: deadline, phase: phase, limit: call.effectiveTimeout) {
            case .failure(let reason):
                if !restarted, case .protocolViolation = reason, !serverAlive() {
                    if let early = restart() { return early }
                    continue
                }
                var exit = "fork server gone"
                if case .timedOut = reason {
                    exit = "no call child in time"
                } else {
                    stop()
                }
                return output(
                    startedAt: startedAt, result: nil, failure: PluginFailure(plugin: pluginPath, reason: reason),
                    exit: exit, group: 0)
            case .success(let standby):
                if Descriptors.sendAll(message, to: standby.fd) {
                    taken = standby
                } else {
                    // It died before it got the call: nothing ran, take the next.
                    _ = wh_pidfd_kill(standby.pidfd, SIGKILL)
                    close(standby.fd)
                    close(standby.pidfd)
                    if !restarted && !serverAlive() {
                        if let early = restart() { return early }
                        continue
                    }
                    attempts += 1
                    if attempts >= 3 {
                        stop()
                        return output(
                            startedAt: startedAt, result: nil,
                            failure: PluginFailure(
                                plugin: pluginPath,
                                reason: .protocolViolation("the fork server's call children die before their call")),
                            exit: "no call child", group: 0)
                    }
                }
            }
        }
        guard let (child, childChannel, childPidfd, group) = taken else { fatalError("unreachable") }
        defer {
            close(childChannel)
            close(childPidfd)
        }
        // While the child works: what the server sent since the last call
        // (the next standbys, children reaped), so that the next call finds
        // its standby without reading the server's channel.
        var serverProblem: PluginFailure.Reason?
        if case .failure(let reason) = absorbServerFrames() { serverProblem = reason }

        var childDecoder = FrameDecoder()
        var childEOF = false
        var childDead = false
        var result: ProviderResult?
        var failure: PluginFailure.Reason?
        var providerSeconds: Double?
        var exit = ""
        var forbidden: [pid_t: PluginFailure.ForbiddenSyscall] = [:]

        /// Reads what the child's channel has and handles its frames; true
        /// when the call is decided (an answer, or a broken channel).
        func readChild() -> Bool {
            guard !childEOF else { return false }
            childEOF = Self.readAvailable(childChannel, into: &childDecoder, chunk: &chunk)
            do {
                while let frame = try childDecoder.next() {
                    switch UInt32(frame.type) {
                    case WH_MSG_RESULT.rawValue, WH_MSG_CALL_FAILED.rawValue:
                        // The answer: checking it runs at the usual priority.
                        wh_deadline_boost_end(&boost)
                        if let answer = CallAnswer.decode(frame, for: call, plugin: plugin) {
                            providerSeconds = answer.providerSeconds
                            switch answer.outcome {
                            case .success(let validated): result = validated
                            case .failure(let reason): failure = reason
                            }
                        }
                        return true
                    case WH_MSG_FORBIDDEN_SYSCALL.rawValue:
                        // From the SIGSYS handler of the child or of a
                        // process it started, before it dies.
                        if let report = ForbiddenSyscallReport.decode(frame.payload), forbidden[report.pid] == nil {
                            forbidden[report.pid] = report.syscall
                        }
                    default:
                        failure = .protocolViolation("unknown message type \(frame.type)")
                        return true
                    }
                }
            } catch {
                failure = .protocolViolation("the channel carried something other than a frame (\(error))")
                return true
            }
            return false
        }

        if let serverProblem {
            failure = serverProblem
            stop()
        }
        loop: while failure == nil {
            // The server's frames (the previous child reaped, the next
            // standby announced) wait until the call is over, unless this
            // child died: its wait status comes from the server.
            let waited = wait(
                until: deadline, childChannel: childEOF ? -1 : childChannel, childPidfd: childDead ? -1 : childPidfd,
                watchServer: childDead)
            if waited == .timedOut {
                // Nothing was readable at the deadline: kill first, before
                // anything else, so the kill is as close to it as possible.
                // The child itself, through its pidfd (a pid could be reused);
                // the server kills its process group at CALL_ENDED.
                killCallGroup(group, pidfd: childPidfd)
                lastTimeoutLateness = monotonicSeconds() - deadline
                failure = .timedOut(phase: phase, limit: call.effectiveTimeout)
                exit = "killed by SIGKILL (timeout)"
                break loop
            }
            // The child's answer first: it counts even if the child died
            // right after sending it.
            if readChild() { break loop }
            if case .failure(let reason) = absorbServerFrames() {
                failure = reason
                stop()
                break loop
            }
            if let status = exitStatuses.removeValue(forKey: child) {
                exit = WaitStatus.describe(status)
                // What the child wrote before it died (its answer, or the name
                // of a forbidden call) may have arrived after this iteration's
                // read: read it before the exit status decides.
                if readChild() { break loop }
                // The server reaped the child before it answered.
                failure = WaitStatus.reason(status, phase: phase, seccomp: seccompOn, syscall: forbidden[child])
                break loop
            }
            switch waited {
            case .timedOut: break  // handled above
            case .serverExited:
                // Only plugin code runs in the server's sandbox during a call
                // (the call child signalling its parent, or kill(-1)): the
                // plugin's crash, with what ended the server.
                let status = stop()
                failure = WaitStatus.reason(status, phase: phase, seccomp: seccompOn, syscall: forbidden[child])
                exit = "the fork server \(WaitStatus.describe(status)) during the call"
                break loop
            case .childExited:
                // Its CHILD_EXITED frame (with the status) follows from the server.
                childDead = true
            case .ready: break
            }
        }

        killCallGroup(group, pidfd: childPidfd)
        // The server forks the next standby now, no longer competing with
        // the call for a CPU (best effort: a full socket only delays it).
        if server > 0 {
            var ended = WireWriter()
            ended.u32(UInt32(bitPattern: child))
            let frame = ended.frame(type: UInt16(WH_MSG_CALL_ENDED.rawValue))
            _ = frame.withUnsafeBytes { Glibc.send(channel, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        if exit.isEmpty { exit = "exited after answering; its process group killed" }
        drainLogs()
        let failureValue = failure.map { PluginFailure(plugin: pluginPath, reason: $0) }
        return output(
            startedAt: startedAt, result: failureValue == nil ? result : nil, failure: failureValue,
            exit: exit, group: group, providerSeconds: providerSeconds)
    }

    /// The oldest standby, waiting for the server to announce one if needed.
    /// One already announced is taken without a system call: a standby that
    /// died since shows when its CALL cannot be sent.
    private func takeStandby(until deadline: Double, phase: PluginFailure.Phase, limit: Double)
        -> Result<Standby, PluginFailure.Reason>
    {
        while true {
            if !standbys.isEmpty { return .success(standbys.removeFirst()) }
            if case .failure(let reason) = absorbServerFrames() { return .failure(reason) }
            if !standbys.isEmpty { continue }
            switch wait(until: deadline) {
            case .timedOut: return .failure(.timedOut(phase: phase, limit: limit))
            case .serverExited:
                return .failure(.protocolViolation("the fork server (pid \(server)) exited"))
            case .ready, .childExited: continue
            }
        }
    }

    /// Handles what the server sent: standbys announced, children reaped.
    private func absorbServerFrames() -> Result<Void, PluginFailure.Reason> {
        let frames: [WireFrame]
        switch readFrames() {
        case .failure(let reason): return .failure(reason)
        case .success(let got): frames = got
        }
        for frame in frames {
            var reader = WireReader(frame.payload)
            switch UInt32(frame.type) {
            case WH_MSG_CHILD_STARTED.rawValue:
                // The server runs plugin code (its warm_up), so this message
                // may be forged: the pid it carries is never used. The child
                // is what the kernel says the pidfd refers to, and it must be
                // a child of the fork server process (the runner the host
                // started, or its grandchild below the sandbox's relay and
                // init); the channel must be a socket, made non-blocking by
                // the host.
                let announced = pid_t(bitPattern: reader.u32())
                guard receivedFds.count >= 2 else {
                    return .failure(.protocolViolation("CHILD_STARTED without the child's channel and pidfd"))
                }
                let (channelFd, pidfd) = (receivedFds[0], receivedFds[1])
                receivedFds.removeFirst(2)
                var parent: pid_t = -1
                let pid = wh_pidfd_target(pidfd, &parent)
                var info = stat()
                let isSocket = fstat(channelFd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK
                guard pid > 0, parent == servingPid, pid != servingPid, isSocket,
                    fcntl(channelFd, F_SETFL, fcntl(channelFd, F_GETFL) | O_NONBLOCK) == 0
                else {
                    close(channelFd)
                    close(pidfd)
                    // A server that died since (its children orphaned, or
                    // gone) forged nothing: its death is handled as such.
                    if !serverAlive() { continue }
                    return .failure(
                        .protocolViolation(
                            "the fork server announced a call child that is not its own child with a socket (a forged CHILD_STARTED)"
                        ))
                }
                standbys.append((announced, channelFd, pidfd, pid))
            case WH_MSG_CHILD_EXITED.rawValue:
                let pid = pid_t(bitPattern: reader.u32())
                let status = reader.i32()
                let childNanoseconds = reader.u64()
                let serverNanoseconds = reader.u64()
                if reader.malformed {
                    return .failure(.protocolViolation("truncated CHILD_EXITED message from the fork server"))
                }
                cpuUsage.childrenSeconds += Double(childNanoseconds) / 1e9
                cpuUsage.childrenReaped += 1
                cpuUsage.serverSeconds = earlierServersSeconds + Double(serverNanoseconds) / 1e9
                if let index = standbys.firstIndex(where: { $0.pid == pid }) {
                    let gone = standbys.remove(at: index)
                    close(gone.fd)
                    close(gone.pidfd)
                }
                if exitStatuses.count > 64 { exitStatuses = [:] }
                exitStatuses[pid] = status
            case WH_MSG_FORBIDDEN_SYSCALL.rawValue:
                break  // the server runs no plugin code after loading; calls report on their own channel
            default:
                return .failure(.protocolViolation("unexpected message \(frame.type) from the fork server"))
            }
        }
        return .success(())
    }

    /// A failure the child reported in a well-formed answer (the channel is
    /// in sync), as opposed to a broken conversation.
    private static func isPluginAnswer(_ reason: PluginFailure.Reason) -> Bool {
        if case .protocolViolation = reason { return false }
        return true
    }

    /// Kills a call child and its process group. `child` is the host's pid
    /// of it, checked when it was announced (the kernel's, not the
    /// message's); the group is killed only while the pidfd says that very
    /// process is still the fork server's child (its pid cannot have been
    /// reused), else the child alone through its pidfd. The server kills the
    /// group too, at CALL_ENDED.
    private func killCallGroup(_ child: pid_t, pidfd: Int32) {
        var parent: pid_t = -1
        if wh_pidfd_target(pidfd, &parent) == child, parent == servingPid {
            kill(-child, SIGCONT)
            kill(-child, SIGKILL)
        }
        _ = wh_pidfd_kill(pidfd, SIGKILL)
    }

    private var seccompOn: Bool { policy.layers & UInt32(WH_SANDBOX_SECCOMP.rawValue) != 0 }

    // MARK: Plumbing

    private enum Waited { case ready, timedOut, serverExited, childExited }

    /// Polls the server's channel, the call child's channel, the log pipes,
    /// the server's and the child's pidfds, until the deadline.
    private func wait(
        until deadline: Double, childChannel: Int32 = -1, childPidfd: Int32 = -1, watchServer: Bool = true
    ) -> Waited {
        if !queue.isEmpty { return .ready }
        // Once boosted, the thread stays boosted until the call has its
        // answer or its kill: dropping the boost in between (e.g. when the
        // server announces the next standby) can leave it waiting for a CPU
        // for milliseconds on a loaded machine.
        return pollChannels(
            until: deadline, childChannel: childChannel, childPidfd: childPidfd, watchServer: watchServer)
    }

    private func pollChannels(until deadline: Double, childChannel: Int32, childPidfd: Int32, watchServer: Bool)
        -> Waited
    {
        while true {
            let remaining = deadline - monotonicSeconds()
            if remaining <= 0 { return .timedOut }
            var fds = [
                pollfd(fd: channelEOF || !watchServer ? -1 : channel, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stdoutPipe, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stderrPipe, events: Int16(POLLIN), revents: 0),
                pollfd(fd: serverPidfd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: childPidfd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: childChannel, events: Int16(POLLIN), revents: 0),
            ]
            // Until shortly before the deadline, an ordinary wait; then the
            // thread waits with 1 ns timer slack and SCHED_FIFO where allowed
            // (`call` ends the boost), so a loaded machine does not delay the
            // SIGKILL.
            var slice = remaining
            if remaining > Self.approach {
                slice = remaining - Self.approach
            } else {
                wh_deadline_boost_begin(&boost)
            }
            if serverPidfd < 0 { slice = min(slice, 0.005) }
            // At most an hour a poll: any deadline, however far, converts.
            let ready = wh_poll_ns(&fds, UInt(fds.count), Int64(min(slice, 3600) * 1e9))
            if ready < 0 {
                if errno == EINTR { continue }
                return .serverExited
            }
            if ready == 0 {
                if serverPidfd < 0 && kill(server, 0) != 0 { return .serverExited }
                continue
            }
            if fds[1].revents != 0 || fds[2].revents != 0 { drainLogs() }
            if fds[0].revents != 0 || fds[5].revents != 0 { return .ready }
            if fds[4].revents != 0 { return .childExited }
            if fds[3].revents != 0 { return .serverExited }
        }
    }

    /// Reads what a child's channel has into its decoder. Returns true at EOF.
    private static func readAvailable(_ fd: Int32, into decoder: inout FrameDecoder, chunk: inout [UInt8]) -> Bool {
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                decoder.append(chunk[0..<count])
                // A short read emptied the socket: no second read just to
                // see EAGAIN (the poll loop comes back for more).
                if count < chunk.count { return false }
                continue
            }
            if count < 0 && (errno == EAGAIN || errno == EINTR) { return false }
            return true
        }
    }

    private func drainLogs() {
        capture.drain(stdout: stdoutPipe, stderr: stderrPipe)
    }

    /// Reads what the channel has and returns the complete frames.
    private func readFrames() -> Result<[WireFrame], PluginFailure.Reason> {
        var frames = queue
        queue = []
        var fds = [Int32](repeating: -1, count: 16)
        while channel >= 0 {
            var fdCount: Int32 = 0
            let count = chunk.withUnsafeMutableBytes {
                wh_recv_fds(channel, $0.baseAddress, $0.count, &fds, Int32(fds.count), &fdCount)
            }
            receivedFds.append(contentsOf: fds[0..<Int(fdCount)])
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) {
                channelEOF = true
                break
            }
            if count < 0 { break }
            decoder.append(chunk[0..<count])
        }
        do {
            while let frame = try decoder.next() { frames.append(frame) }
        } catch {
            return .failure(.protocolViolation("the channel carried something other than a frame (\(error))"))
        }
        return .success(frames)
    }

    private func output(
        startedAt: Double, result: ProviderResult?, failure: PluginFailure?, exit: String, group: pid_t,
        providerSeconds: Double? = nil
    ) -> CallOutput {
        CallOutput(
            plugin: plugin,
            result: failure == nil ? result : nil,
            failure: failure,
            timing: CallTiming(
                totalSeconds: monotonicSeconds() - startedAt, loadSeconds: plugin?.loadSeconds,
                providerSeconds: providerSeconds),
            log: capture.log,
            childExit: exit,
            processGroup: group)
    }
}
