import CWidgetHostSupport
import WidgetHostModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One warm worker: a `widgethost-runner` started in worker mode that has
/// loaded one plugin (sandbox, `dlopen`, `warm_up` once) and answers calls
/// one at a time on its channel (docs/isolation.md, "Warm workers").
///
/// Nothing the worker sends is trusted: its pid is the one `posix_spawn`
/// gave the host (the host holds a pidfd, so the pid cannot be reused before
/// the host reaps it), every frame is checked, every limit of an answer is
/// checked again here, and a worker that says anything out of turn is
/// killed. At a deadline its whole process group is killed.
///
/// Used by ``IsolationEngine`` (worker mode, and spawn mode as a worker
/// that makes one call).
final class WorkerProcess {
    let pluginPath: String
    let options: IsolationOptions
    let profile: SandboxProfile
    /// The runner's pid: the host's own child, also its process group id.
    let pid: pid_t
    /// The process that loaded the plugin and serves the calls: `pid`, or,
    /// inside the sandbox's PID namespace, its only grandchild (relay →
    /// init → runner), in the host's namespace; found once loaded, for its
    /// memory and CPU time.
    private var servingPid: pid_t = 0
    /// Monotonic time it was started.
    let startedAt: Double
    /// The plugin as this worker loaded it (after ``awaitLoad()``).
    private(set) var plugin: PluginDescription?
    /// What became of the plugin's warm-up in this worker.
    private(set) var warmUp = WarmUpOutcome.none
    /// Calls answered so far.
    private(set) var callsServed = 0
    /// Monotonic time the last call ended (or the load, before any call).
    private(set) var idleSince: Double
    /// False once it died, was killed or broke the protocol.
    private(set) var isUsable = true
    /// For the last call that timed out: seconds from its deadline to the
    /// SIGKILL of the worker's process group.
    private(set) var lastTimeoutLateness: Double?
    /// CPU time (user + system) of the reaped worker, from `wait4` (with the
    /// PID namespace this covers the relay and, through it, its children
    /// only if they were reaped, so the last reading while alive is kept too).
    private var finalCPUSeconds: Double?
    private var lastCPUSeconds = 0.0

    private let pidfd: Int32
    private var channel: Int32
    private var stdoutPipe: Int32
    private var stderrPipe: Int32
    private var statm: Int32 = -1
    private var decoder = FrameDecoder()
    private var channelEOF = false
    private var loadDeadline: Double
    private var loadFailure: PluginFailure?
    private var loaded = false
    private var warmingUp = false
    /// Whether LOAD asked the worker to run the plugin's warm-up.
    private var warmUpRequested = true
    private var reaped = false
    private var exitStatus: Int32 = 0
    private var forbidden: [pid_t: PluginFailure.ForbiddenSyscall] = [:]
    private var capture = LogCapture()
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    private var lastCall: (key: PluginCall, message: [UInt8])?
    private var boost = wh_deadline_boost()
    private let seccompOn: Bool

    private init(
        pluginPath: String, options: IsolationOptions, profile: SandboxProfile, child: RunnerLauncher.Child,
        policy: SandboxPolicy
    ) {
        self.pluginPath = pluginPath
        self.options = options
        self.profile = profile
        pid = child.pid
        pidfd = child.pidfd
        channel = child.channel
        stdoutPipe = child.stdout
        stderrPipe = child.stderr
        startedAt = monotonicSeconds()
        idleSince = startedAt
        loadDeadline = startedAt + options.loadTimeout
        seccompOn = policy.layers & UInt32(WH_SANDBOX_SECCOMP.rawValue) != 0
    }

    /// Starts a worker and sends it LOAD; does not wait for the answer
    /// (``awaitLoad()`` does), so a standby loads while the host goes on.
    static func start(plugin: String, options: IsolationOptions, profile: SandboxProfile, warmUp: Bool)
        -> Result<WorkerProcess, PluginFailure>
    {
        DataDirectory.ensure(profile.dataDirectory)
        let policy = options.sandbox.effective
        switch RunnerLauncher.start(options: options, dataDirectory: profile.dataDirectory, locale: profile.locale) {
        case .failure(let reason):
            return .failure(PluginFailure(plugin: plugin, reason: reason))
        case .success(let child):
            let worker = WorkerProcess(
                pluginPath: plugin, options: options, profile: profile, child: child, policy: policy)
            worker.warmUpRequested = warmUp
            let load = LoadMessage.make(
                plugin: plugin, options: options, dataDirectory: profile.dataDirectory,
                allowNetwork: profile.allowNetwork, policy: policy, mode: UInt32(WH_RUNNER_WORKER), warmUp: warmUp)
            if !Descriptors.sendAll(load, to: worker.channel) {
                // It died at once: awaitLoad reports how.
                worker.channelEOF = true
            }
            return .success(worker)
        }
    }

    // MARK: Loading

    /// Waits for LOADED (and WARMED when the plugin has a warm-up), up to the
    /// load timeout counted from the start. Returns the failure if loading
    /// failed; the worker is then unusable.
    func awaitLoad() -> PluginFailure? {
        // The wait's boost near the load deadline ends here: called outside
        // a call (a standby's load, the daemon's start), a boost left on
        // made the calling thread real-time for good.
        defer { wh_deadline_boost_end(&boost) }
        if loaded { return nil }
        if let loadFailure { return loadFailure }
        while true {
            let waited = wait(until: loadDeadline)
            if waited == .timedOut {
                if warmingUp {
                    warmUp = .failed(
                        "its warm_up did not return within the load timeout (\(Timestamp.duration(options.loadTimeout)))"
                    )
                }
                return failLoad(.timedOut(phase: .load, limit: options.loadTimeout))
            }
            switch readFrames() {
            case .failure(let reason): return failLoad(reason)
            case .success(let frames):
                for frame in frames {
                    var reader = WireReader(frame.payload)
                    switch UInt32(frame.type) {
                    case WH_MSG_LOADED.rawValue where plugin == nil:
                        switch DescriptorDecoder.decode(&reader, path: pluginPath) {
                        case .failure(let failure):
                            loadFailure = failure
                            terminate()
                            return failure
                        case .success(let description):
                            plugin = description
                            warmingUp = description.hasWarmUp && warmUpRequested
                        }
                    case WH_MSG_WARMED.rawValue where warmingUp:
                        let nanoseconds = reader.u64()
                        _ = reader.u32()
                        if reader.malformed { return failLoad(.protocolViolation("truncated WARMED message")) }
                        warmUp = .ran(seconds: Double(nanoseconds) / 1e9)
                        warmingUp = false
                    case WH_MSG_LOAD_FAILED.rawValue where plugin == nil:
                        let code = reader.u32()
                        let detail = reader.string()
                        let field = reader.string()
                        let expected = reader.string()
                        let found = reader.string()
                        return failLoad(
                            LoadFailureMapping.reason(
                                code: code, detail: TerminalText.bounded(detail), field: field, expected: expected,
                                found: found, options: options))
                    case WH_MSG_FORBIDDEN_SYSCALL.rawValue:
                        noteForbidden(frame.payload)
                    default:
                        return failLoad(.protocolViolation("unexpected message \(frame.type) while loading"))
                    }
                }
            }
            if plugin != nil && !warmingUp {
                servingPid = wh_deepest_descendant(pid, 2)
                loaded = true
                idleSince = monotonicSeconds()
                return nil
            }
            if waited == .exited || channelEOF {
                let status = reap()
                if warmingUp {
                    warmUp = .failed("its warm_up ended the worker (\(WaitStatus.describe(status)))")
                }
                return failLoad(
                    WaitStatus.reason(status, phase: .load, seccomp: seccompOn, syscall: forbidden[pid]),
                    killed: false)
            }
        }
    }

    private func failLoad(_ reason: PluginFailure.Reason, killed: Bool = true) -> PluginFailure {
        let failure = PluginFailure(plugin: pluginPath, reason: reason)
        loadFailure = failure
        if killed { terminate() }
        isUsable = false
        return failure
    }

    // MARK: Calling

    /// Whether the worker can take the next call: alive, and silent since its
    /// last answer (a worker that wrote anything between calls, or exited,
    /// is retired before it is given a call; no call fails for it).
    func isReadyForCall() -> Bool {
        guard isUsable, loaded else { return false }
        var fds = [
            pollfd(fd: channel, events: Int16(POLLIN), revents: 0),
            pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0),
        ]
        guard poll(&fds, 2, 0) >= 0 else { return true }
        if fds[0].revents != 0 || fds[1].revents != 0 {
            isUsable = false
            return false
        }
        return true
    }

    /// Makes one call. Never throws: every failure is a typed
    /// ``PluginFailure``. After a timeout, a crash or a broken conversation
    /// the worker is killed and ``isUsable`` is false; after a well-formed
    /// answer (including the plugin's own error) it stays warm.
    func call(_ call: PluginCall) -> CallOutput {
        defer { wh_deadline_boost_end(&boost) }
        let started = monotonicSeconds()
        capture = LogCapture()
        if let failure = awaitLoad() {
            return output(started: started, result: nil, failure: failure, exit: describeExit())
        }
        guard let plugin else {
            return output(
                started: started, result: nil,
                failure: PluginFailure(plugin: pluginPath, reason: .protocolViolation("no plugin loaded")),
                exit: "none")
        }
        var key = call
        key.now = 0
        key.timeout = nil
        let message: [UInt8]
        if let last = lastCall, last.key == key {
            var patched = last.message
            CallMessage.patch(&patched, for: call)
            message = patched
        } else {
            switch CallMessage.make(call, plugin: plugin) {
            case .failure(let reason):
                return output(
                    started: started, result: nil, failure: PluginFailure(plugin: pluginPath, reason: reason),
                    exit: "no call made")
            case .success(let bytes):
                message = bytes
                lastCall = (key, bytes)
            }
        }
        let phase = PluginFailure.Phase.call(call.entryPoint)
        let deadline = started + call.effectiveTimeout
        drainLogs()
        guard Descriptors.sendAll(message, to: channel) else {
            let status = reap()
            isUsable = false
            return output(
                started: started, result: nil,
                failure: PluginFailure(
                    plugin: pluginPath,
                    reason: WaitStatus.reason(status, phase: phase, seccomp: seccompOn, syscall: forbidden[pid])),
                exit: WaitStatus.describe(status))
        }
        var result: ProviderResult?
        var failure: PluginFailure.Reason?
        var providerSeconds: Double?
        var exit = ""
        callLoop: while true {
            let waited = wait(until: deadline)
            if waited == .timedOut {
                killGroup()
                lastTimeoutLateness = monotonicSeconds() - deadline
                failure = .timedOut(phase: phase, limit: call.effectiveTimeout)
                exit = "killed by SIGKILL (timeout)"
                break
            }
            switch readFrames() {
            case .failure(let reason):
                failure = reason
                break callLoop
            case .success(let frames):
                for (index, frame) in frames.enumerated() {
                    switch UInt32(frame.type) {
                    case WH_MSG_RESULT.rawValue, WH_MSG_CALL_FAILED.rawValue:
                        wh_deadline_boost_end(&boost)
                        guard index == frames.count - 1 else {
                            failure = .protocolViolation("the worker sent more after its answer")
                            break callLoop
                        }
                        if let answer = CallAnswer.decode(frame, for: call, plugin: plugin) {
                            providerSeconds = answer.providerSeconds
                            switch answer.outcome {
                            case .success(let validated): result = validated
                            case .failure(let reason): failure = reason
                            }
                        }
                        break callLoop
                    case WH_MSG_FORBIDDEN_SYSCALL.rawValue:
                        noteForbidden(frame.payload)
                    default:
                        failure = .protocolViolation("unexpected message type \(frame.type) during a call")
                        break callLoop
                    }
                }
            }
            if waited == .exited || channelEOF {
                // Anything it wrote before it died was read above.
                let status = reap()
                exit = WaitStatus.describe(status)
                failure = WaitStatus.reason(status, phase: phase, seccomp: seccompOn, syscall: forbidden[pid])
                break
            }
        }
        drainLogs()
        callsServed += 1
        idleSince = monotonicSeconds()
        if let failure, !Self.leavesWorkerWarm(failure) {
            isUsable = false
            terminate()
            if exit.isEmpty { exit = "killed (\(PluginFailure(plugin: pluginPath, reason: failure).code))" }
        }
        if exit.isEmpty { exit = "answered; the worker stays warm" }
        return output(
            started: started, result: failure == nil ? result : nil,
            failure: failure.map { PluginFailure(plugin: pluginPath, reason: $0) }, exit: exit,
            providerSeconds: providerSeconds)
    }

    /// Takes over `other`'s last CALL message (same plugin file, so the
    /// same message for the same call): a successor's first call skips
    /// building it.
    func inheritCallMessage(from other: WorkerProcess) {
        if lastCall == nil { lastCall = other.lastCall }
    }

    /// A failure the worker reported in a well-formed answer: the
    /// conversation is in step and the worker can serve the next call.
    static func leavesWorkerWarm(_ reason: PluginFailure.Reason) -> Bool {
        switch reason {
        case .pluginError, .malformedResult, .resultTooLarge, .unknownKind, .missingEntryPoint, .badConfiguration,
            .unsupportedFamily:
            true
        default: false
        }
    }

    // MARK: Lifetime

    /// The worker's resident memory in bytes (`/proc/PID/statm`), nil if unreadable.
    func residentBytes() -> Int? {
        guard isUsable, !reaped else { return nil }
        if statm < 0 { statm = open("/proc/\(servingPid > 0 ? servingPid : pid)/statm", O_RDONLY | O_CLOEXEC) }
        guard statm >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 96)
        let count = buffer.withUnsafeMutableBytes { pread(statm, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let fields = buffer[0..<count].split(separator: UInt8(ascii: " "))
        guard fields.count >= 2, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The worker's CPU time so far (user + system, all its threads): its
    /// process CPU clock while it lives, `wait4`'s figure once reaped.
    func cpuSeconds() -> Double {
        if let finalCPUSeconds { return finalCPUSeconds }
        // The relay and the namespace's init sleep; the serving runner works.
        let processes = servingPid > 0 && servingPid != pid ? [pid, servingPid] : [pid]
        var total = 0.0
        for process in processes {
            var clock = clockid_t()
            var time = timespec()
            guard clock_getcpuclockid(process, &clock) == 0, clock_gettime(clock, &time) == 0 else { continue }
            total += Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        }
        lastCPUSeconds = max(lastCPUSeconds, total)
        return lastCPUSeconds
    }

    /// What the plugin printed since the last call (or since the load), after
    /// the worker ended: the rest of its pipes, appended to `log`.
    func takeLog(adding log: CapturedLog) -> CapturedLog {
        var rest = LogCapture(continuing: log)
        rest.drain(stdout: stdoutPipe, stderr: stderrPipe)
        return rest.log
    }

    /// Kills the worker's process group and reaps it (idempotent).
    func terminate() {
        isUsable = false
        if !reaped {
            killGroup()
            _ = reap()
        }
        for fd in [channel, statm] where fd >= 0 { close(fd) }
        channel = -1
        statm = -1
    }

    deinit {
        terminate()
        for fd in [stdoutPipe, stderrPipe] where fd >= 0 { close(fd) }
    }

    /// SIGKILL to the process group (SIGCONT first, so a stopped group dies
    /// too). The pid is the host's own child, not yet reaped: it names this
    /// worker's group and no other.
    private func killGroup() {
        guard !reaped else { return }
        kill(-pid, SIGCONT)
        kill(-pid, SIGKILL)
        kill(pid, SIGKILL)
    }

    /// Waits for the runner to exit, kills its group (whatever it started),
    /// then reaps it; returns the wait status.
    @discardableResult
    private func reap() -> Int32 {
        if reaped { return exitStatus }
        if !waitForExit(seconds: 2) { kill(pid, SIGKILL) }
        // The leader's pid stays reserved until reaped: the group dies first.
        kill(-pid, SIGKILL)
        var status: Int32 = 0
        var usage = rusage()
        var got: pid_t
        repeat { got = wait4(pid, &status, 0, &usage) } while got < 0 && errno == EINTR
        if got == pid {
            let waited = CPUUsage.seconds(usage.ru_utime) + CPUUsage.seconds(usage.ru_stime)
            finalCPUSeconds = max(waited, lastCPUSeconds)
        }
        reaped = true
        exitStatus = status
        if pidfd >= 0 { close(pidfd) }
        isUsable = false
        return status
    }

    private func waitForExit(seconds: Double) -> Bool {
        var fd = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        return poll(&fd, 1, Int32(seconds * 1000)) > 0
    }

    private func describeExit() -> String { reaped ? WaitStatus.describe(exitStatus) : "not started" }

    // MARK: Plumbing

    private enum Waited { case ready, timedOut, exited }

    /// How long before a deadline the waiting thread is boosted (timer slack
    /// 1 ns, SCHED_FIFO where allowed), as `ForkServer` does.
    private static let approach = 0.05

    private func wait(until deadline: Double) -> Waited {
        while true {
            let remaining = deadline - monotonicSeconds()
            if remaining <= 0 { return .timedOut }
            var fds = [
                pollfd(fd: channelEOF ? -1 : channel, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stdoutPipe, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stderrPipe, events: Int16(POLLIN), revents: 0),
                pollfd(fd: reaped ? -1 : pidfd, events: Int16(POLLIN), revents: 0),
            ]
            var slice = remaining
            if remaining > Self.approach {
                slice = remaining - Self.approach
            } else {
                wh_deadline_boost_begin(&boost)
            }
            // At most an hour a poll: any deadline, however far, converts.
            let ready = wh_poll_ns(&fds, UInt(fds.count), Int64(min(slice, 3600) * 1e9))
            if ready < 0 {
                if errno == EINTR { continue }
                return .exited
            }
            if ready == 0 { continue }
            if fds[1].revents != 0 || fds[2].revents != 0 { drainLogs() }
            if fds[0].revents != 0 { return .ready }
            if fds[3].revents != 0 { return .exited }
        }
    }

    /// Reads what the channel has (non-blocking) and returns complete frames.
    private func readFrames() -> Result<[WireFrame], PluginFailure.Reason> {
        while !channelEOF {
            let count = chunk.withUnsafeMutableBytes { read(channel, $0.baseAddress, $0.count) }
            if count > 0 {
                decoder.append(chunk[0..<count])
                if count < chunk.count { break }
                continue
            }
            if count < 0 && (errno == EAGAIN || errno == EINTR) { break }
            channelEOF = true
        }
        var frames: [WireFrame] = []
        do {
            while let frame = try decoder.next() { frames.append(frame) }
        } catch {
            return .failure(.protocolViolation("the channel carried something other than a frame (\(error))"))
        }
        return .success(frames)
    }

    private func noteForbidden(_ payload: [UInt8]) {
        if let report = ForbiddenSyscallReport.decode(payload), forbidden[report.pid] == nil {
            forbidden[report.pid] = report.syscall
        }
    }

    private func drainLogs() {
        capture.drain(stdout: stdoutPipe, stderr: stderrPipe)
    }

    private func output(
        started: Double, result: ProviderResult?, failure: PluginFailure?, exit: String,
        providerSeconds: Double? = nil
    ) -> CallOutput {
        CallOutput(
            plugin: plugin,
            result: failure == nil ? result : nil,
            failure: failure,
            timing: CallTiming(
                totalSeconds: monotonicSeconds() - started, loadSeconds: plugin?.loadSeconds,
                providerSeconds: providerSeconds),
            log: capture.log,
            childExit: exit,
            processGroup: pid)
    }
}

/// The settings a worker's sandbox is built for: a call with other settings
/// needs another worker (a kind that needs network never shares a worker with
/// one that does not).
public struct SandboxProfile: Hashable, Sendable {
    public var dataDirectory: String
    public var locale: String
    public var allowNetwork: Bool

    public init(dataDirectory: String, locale: String, allowNetwork: Bool) {
        self.dataDirectory = dataDirectory
        self.locale = locale
        self.allowNetwork = allowNetwork
    }

    /// The profile a call needs.
    public init(_ call: PluginCall) {
        self.init(dataDirectory: call.dataDirectory, locale: call.locale, allowNetwork: call.allowNetwork)
    }
}
