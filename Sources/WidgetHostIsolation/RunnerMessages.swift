import CWidgetHostSupport
import WidgetHostModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// What spawn mode (IsolatedRunner) and the fork server (ForkServer) share:
// the LOAD and CALL messages, writing to and draining descriptors, and
// turning a wait status into an outcome.

/// Builds the LOAD message.
enum LoadMessage {
    /// `warmUp`: a fork server runs the plugin's warm_up, if it has one.
    static func make(
        plugin: String, options: IsolationOptions, dataDirectory: String, allowNetwork: Bool,
        policy: SandboxPolicy, mode: UInt32, warmUp: Bool = false
    ) -> [UInt8] {
        var load = WireWriter()
        load.string(plugin)
        load.u32(options.abiRange.lowerBound)
        load.u32(options.abiRange.upperBound)
        load.string(options.hostVersion)
        load.string(dataDirectory)
        load.sandboxPolicy(policy, allowNetwork: allowNetwork, mode: mode)
        load.u32(warmUp ? 1 : 0)
        return load.frame(type: UInt16(WH_MSG_LOAD.rawValue))
    }
}

/// Builds a CALL message after checking the call against the descriptor.
enum CallMessage {
    static func make(_ call: PluginCall, plugin: PluginDescription) -> Result<[UInt8], PluginFailure.Reason> {
        configuration(call, plugin: plugin).map { configuration in
            var message = WireWriter()
            message.u32(call.entryPoint.rawValue)
            message.u32(call.family.rawValue)
            message.u32(call.isPreview ? 1 : 0)
            message.f64(call.family.displaySize.width)
            message.f64(call.family.displaySize.height)
            message.f64(call.now)
            message.f64(call.effectiveTimeout)
            message.string(call.kind)
            message.string(configuration)
            message.string(call.locale)
            message.string(call.dataDirectory)
            message.string(call.pushToken ?? "")
            return message.frame(type: UInt16(WH_MSG_CALL.rawValue))
        }
    }

    /// Where CALL's `now` and `timeout` (f64 each) sit in the framed message:
    /// after the header and three u32 and two f64 fields.
    private static let nowOffset = Int(WH_WIRE_HEADER_SIZE) + 28
    private static let timeoutOffset = nowOffset + 8

    /// A CALL message made for another call of the same instance, with this
    /// call's `now` and timeout written in (the only fields that differ).
    static func patch(_ message: inout [UInt8], for call: PluginCall) {
        for (offset, value) in [(nowOffset, call.now), (timeoutOffset, call.effectiveTimeout)] {
            withUnsafeBytes(of: value.bitPattern.littleEndian) { field in
                message.replaceSubrange(offset..<offset + 8, with: field)
            }
        }
    }

    /// Checks the call against the descriptor; returns the configuration
    /// JSON (the kind's defaults with the call's values).
    static func configuration(_ call: PluginCall, plugin: PluginDescription) -> Result<String, PluginFailure.Reason> {
        guard let kind = plugin.kind(call.kind) else {
            return .failure(.unknownKind(kind: call.kind, available: plugin.kinds.map(\.id)))
        }
        guard kind.families.contains(call.family) else {
            return .failure(.unsupportedFamily(kind: kind.id, family: call.family, supported: kind.families))
        }
        guard kind.entryPoints.contains(call.entryPoint) else {
            return .failure(.missingEntryPoint(kind: kind.id, entryPoint: call.entryPoint))
        }
        switch ConfigurationBuilder.build(kind: kind, overrides: call.configuration) {
        case .success(let json): return .success(json)
        case .failure(let problem): return .failure(.badConfiguration(problem.description))
        }
    }
}

enum Descriptors {
    /// Writes all of `bytes` to a socket, waiting while it is full.
    /// MSG_NOSIGNAL: a runner that died must not kill the host with SIGPIPE.
    /// False when the other end is gone.
    static func sendAll(_ bytes: [UInt8], to socket: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                offset += written
            } else if written < 0, errno == EAGAIN || errno == EINTR {
                var fd = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
                _ = poll(&fd, 1, 100)
            } else {
                return false
            }
        }
        return true
    }

    /// Reads what a log pipe has, keeping up to the per-stream limit.
    /// Returns the number of bytes dropped and whether the pipe reached EOF.
    static func drain(_ fd: Int32, into bytes: inout [UInt8]) -> (dropped: Int, eof: Bool) {
        // A scratch buffer on the stack: nothing to allocate or clear on
        // every call (usually the pipe is empty).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16 * 1024) { chunk in
            var dropped = 0
            while true {
                let count = read(fd, chunk.baseAddress, chunk.count)
                if count == 0 { return (dropped, true) }
                if count < 0 { return (dropped, errno != EAGAIN && errno != EINTR) }
                let room = max(0, WidgetHostLimits.logBytesPerStream - bytes.count)
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[0..<min(room, count)]))
                dropped += count - min(room, count)
            }
        }
    }
}

/// A child's wait status, described and turned into an outcome.
enum WaitStatus {
    /// What ended a child that had not answered: an exit, a crash or, with
    /// seccomp on, SIGSYS from the filter's SECCOMP_RET_KILL_PROCESS.
    /// `syscall`: the call the runner's SIGSYS handler named, if it did.
    static func reason(
        _ status: Int32, phase: PluginFailure.Phase, seccomp: Bool, syscall: PluginFailure.ForbiddenSyscall? = nil
    ) -> PluginFailure.Reason {
        var value: Int32 = 0
        var core: Int32 = 0
        switch wh_wait_status(status, &value, &core) {
        case 1: return .exitedEarly(phase: phase, status: value)
        case 2:
            if value == SIGSYS && seccomp { return .forbiddenSyscall(phase: phase, syscall: syscall) }
            return .crashed(phase: phase, signal: value, name: signalName(value))
        default: return .protocolViolation("unknown wait status \(status)")
        }
    }

    /// "exited 0", "killed by SIGSEGV (segmentation fault)".
    static func describe(_ status: Int32) -> String {
        var value: Int32 = 0
        var core: Int32 = 0
        switch wh_wait_status(status, &value, &core) {
        case 1: return "exited \(value)"
        case 2: return "killed by \(signalName(value))"
        default: return "unknown (wait status \(status))"
        }
    }

    static func signalName(_ signal: Int32) -> String {
        guard let abbrev = wh_signal_abbrev(signal) else { return "signal \(signal)" }
        let name = "SIG" + String(cString: abbrev)
        guard let text = strsignal(signal) else { return name }
        return "\(name) (\(String(cString: text).lowercased()))"
    }
}

/// A call's answer (RESULT or CALL_FAILED), decoded and checked the same
/// way in every mode: the runner's word is re-checked (`ResultValidator`),
/// and a plugin's text is bounded.
enum CallAnswer {
    /// The answer in `frame`, or nil when the frame is not an answer.
    /// `providerSeconds` is the entry point's own time, from RESULT.
    static func decode(_ frame: WireFrame, for call: PluginCall, plugin: PluginDescription?)
        -> (outcome: Result<ProviderResult, PluginFailure.Reason>, providerSeconds: Double?)?
    {
        var reader = WireReader(frame.payload)
        switch UInt32(frame.type) {
        case WH_MSG_RESULT.rawValue:
            let raw = RawResult.decode(&reader)
            guard !reader.malformed else { return (.failure(.protocolViolation("truncated RESULT message")), nil) }
            return (ResultValidator.validate(raw, for: call), Double(raw.nanoseconds) / 1e9)
        case WH_MSG_CALL_FAILED.rawValue:
            let code = reader.u32()
            let detail = reader.string()
            let found = reader.u64()
            let limit = reader.u64()
            guard !reader.malformed else {
                return (.failure(.protocolViolation("a malformed CALL_FAILED message")), nil)
            }
            let reason = CallFailureMapping.reason(
                code: code, detail: TerminalText.bounded(detail), found: found, limit: limit, call: call,
                plugin: plugin)
            return (.failure(reason), nil)
        default:
            return nil
        }
    }
}

/// What a child printed on its stdout and stderr pipes during one load or
/// call, kept up to `WidgetHostLimits.logBytesPerStream` per stream (the
/// rest counted): the one log reader of workers, fork servers and spawn mode.
struct LogCapture {
    private var stdout: [UInt8] = []
    private var stderr: [UInt8] = []
    private var dropped = 0

    init() {}

    /// Starts from a log already taken (spawn mode adds what the pipes still
    /// hold once the runner has ended).
    init(continuing log: CapturedLog) {
        stdout = Array(log.stdout.utf8)
        stderr = Array(log.stderr.utf8)
        dropped = log.droppedBytes
    }

    /// Reads what the pipes hold now (a negative descriptor is skipped).
    mutating func drain(stdout stdoutPipe: Int32, stderr stderrPipe: Int32) {
        if stdoutPipe >= 0 { dropped += Descriptors.drain(stdoutPipe, into: &stdout).dropped }
        if stderrPipe >= 0 { dropped += Descriptors.drain(stderrPipe, into: &stderr).dropped }
    }

    /// The log as the call's output carries it.
    var log: CapturedLog {
        CapturedLog(
            stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self),
            droppedBytes: dropped)
    }
}
