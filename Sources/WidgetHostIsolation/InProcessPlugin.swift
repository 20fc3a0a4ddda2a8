import CWidgetHostSupport
import Synchronization
import WidgetHostABI
import WidgetHostModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `--isolation in-process`, for debugging only: the plugin is loaded into
/// this process (`dlopen`) and its entry points are called directly, so a
/// debugger attached to `widgethost` stops in plugin code.
///
/// There is no isolation at all: no sandbox, no separate process, nothing
/// the plugin prints is captured (during a call its stdout goes to stderr,
/// so the host's report stays readable), the wall clock is not virtual
/// (only `context->now` carries `--now`), and a plugin that crashes takes
/// the host with it. The entry point runs on a thread of its own and the
/// deadline is waited for, but a plugin that misses it cannot be stopped: it
/// keeps running in the host (the call reports `timedOut`). The host's checks of the descriptor and of results are the
/// same as in the other modes.
public final class InProcessPlugin {
    /// What commands print on stderr before they use this mode.
    public static let warning = """
        ************************************************************************
        WARNING: --isolation in-process runs the plugin INSIDE widgethost, for
        debugging only: no sandbox, no process isolation, no timeout
        protection. A crash or hang of the plugin is a crash or hang of
        widgethost. Never use it for plugins you do not trust.
        ************************************************************************

        """

    public let pluginPath: String
    public let options: IsolationOptions
    private var loaded: Result<(PluginDescription, wh_plugin_descriptor), PluginFailure>?

    public init(plugin: String, options: IsolationOptions = IsolationOptions()) {
        self.pluginPath = IsolatedRunner.absolutePath(plugin)
        self.options = options
    }

    /// Loads the plugin (once) and makes the call; without a call, only loads.
    public func call(_ call: PluginCall?) -> CallOutput {
        let startedAt = monotonicSeconds()
        let state = loaded ?? load()
        loaded = state
        let plugin: PluginDescription
        let descriptor: wh_plugin_descriptor
        switch state {
        case .failure(let failure):
            return output(startedAt: startedAt, plugin: nil, result: nil, failure: failure, provider: nil)
        case .success(let got): (plugin, descriptor) = got
        }
        guard let call else {
            return output(startedAt: startedAt, plugin: plugin, result: nil, failure: nil, provider: nil)
        }
        let (result, reason, provider) = perform(call, plugin: plugin, descriptor: descriptor)
        return output(
            startedAt: startedAt, plugin: plugin, result: result,
            failure: reason.map { PluginFailure(plugin: pluginPath, reason: $0, inProcess: true) }, provider: provider)
    }

    private func output(
        startedAt: Double, plugin: PluginDescription?, result: ProviderResult?, failure: PluginFailure?,
        provider: Double?
    ) -> CallOutput {
        CallOutput(
            plugin: plugin, result: failure == nil ? result : nil, failure: failure,
            timing: CallTiming(
                totalSeconds: monotonicSeconds() - startedAt, loadSeconds: plugin?.loadSeconds,
                providerSeconds: provider),
            log: .empty, childExit: "in process (no child)", processGroup: 0)
    }

    // MARK: Loading

    private func load() -> Result<(PluginDescription, wh_plugin_descriptor), PluginFailure> {
        func fail(
            _ code: wh_load_failure, _ detail: String, _ field: String = "", _ expected: String = "",
            _ found: String = ""
        )
            -> Result<(PluginDescription, wh_plugin_descriptor), PluginFailure>
        {
            let reason = LoadFailureMapping.reason(
                code: code.rawValue, detail: detail, field: field, expected: expected, found: found, options: options)
            return .failure(PluginFailure(plugin: pluginPath, reason: reason))
        }
        guard access(pluginPath, F_OK) == 0 else { return fail(WH_LOAD_FILE_NOT_FOUND, "no such file") }
        let started = monotonicSeconds()
        guard let handle = dlopen(pluginPath, RTLD_NOW | RTLD_LOCAL) else {
            let error = dlerror().map { String(cString: $0) } ?? "dlopen failed without a message"
            if error.contains("cannot open shared object file") { return fail(WH_LOAD_MISSING_DEPENDENCY, error) }
            if error.contains("undefined symbol") { return fail(WH_LOAD_UNRESOLVED_SYMBOL, error) }
            return fail(WH_LOAD_DLOPEN_FAILED, error)
        }
        guard let symbol = dlsym(handle, WH_ENTRY_SYMBOL) else {
            return fail(WH_LOAD_NO_ENTRY_FUNCTION, "symbol not found", "symbol", WH_ENTRY_SYMBOL, "absent")
        }
        typealias Entry = @convention(c) (UnsafePointer<wh_host_offer>?) -> UnsafePointer<wh_plugin_descriptor>?
        let entry = unsafeBitCast(symbol, to: Entry.self)
        let hostVersion = strdup(options.hostVersion)  // the plugin may keep it: never freed
        var offer = wh_host_offer()
        offer.struct_size = UInt32(MemoryLayout<wh_host_offer>.size)
        offer.abi_min = options.abiRange.lowerBound
        offer.abi_max = options.abiRange.upperBound
        offer.host_version = UnsafePointer(hostVersion)
        guard let raw = entry(&offer) else {
            return fail(WH_LOAD_ENTRY_RETURNED_NULL, "widgethost_provider_entry returned NULL")
        }
        let loadSeconds = monotonicSeconds() - started
        // The descriptor is read as this host's (v1) structs: this debugging
        // mode accepts only plugins whose structs are at least that large.
        // Zero-extended copy: never read past the plugin's struct_size.
        let declared = Int(UnsafeRawPointer(raw).loadUnaligned(as: UInt32.self))
        var d = wh_plugin_descriptor()  // zero-extended below
        withUnsafeMutableBytes(of: &d) {
            $0.copyMemory(
                from: UnsafeRawBufferPointer(
                    start: UnsafeRawPointer(raw), count: min(declared, MemoryLayout<wh_plugin_descriptor>.size)))
        }
        let range = options.abiRange
        let smallest = MemoryLayout<wh_plugin_descriptor>.offset(of: \.warm_up)!  // SDK 1.0's size
        if declared < smallest || d.magic != WH_PLUGIN_MAGIC {
            return fail(
                WH_LOAD_ABI_MISMATCH, "the descriptor is not an ABI v1 descriptor", "struct_size/magic",
                "a wh_plugin_descriptor", "struct_size \(d.struct_size), magic \(d.magic)")
        }
        if d.abi_version == 0 {
            return fail(
                WH_LOAD_PLUGIN_REFUSED, d.refusal.map { String(cString: $0) } ?? "the plugin gave no reason")
        }
        if !range.contains(d.abi_version) {
            return fail(
                WH_LOAD_ABI_MISMATCH, "the plugin chose an ABI version the host did not offer", "abi_version",
                "\(range.lowerBound)..\(range.upperBound)", "\(d.abi_version)")
        }
        if d.kind_size < UInt32(MemoryLayout<wh_kind>.size) || d.kind_count == 0 || d.kind_count > 256 || d.kinds == nil
        {
            return fail(
                WH_LOAD_INVALID_DESCRIPTOR, "the kinds array is invalid", "kinds", "1 to 256 kinds of ABI v1 size",
                "\(d.kind_count) kinds of \(d.kind_size) bytes")
        }
        func text(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }
        var kinds: [KindDescription] = []
        for index in 0..<Int(d.kind_count) {
            let k = UnsafeRawPointer(d.kinds!).advanced(by: index * Int(d.kind_size)).loadUnaligned(as: wh_kind.self)
            var parameters: [ParameterDescription] = []
            let smallestParameter = MemoryLayout<wh_parameter>.offset(of: \.title)!  // SDK 1.0-1.2's size
            if k.parameter_count > 0, let base = k.parameters, k.parameter_size >= UInt32(smallestParameter) {
                for j in 0..<Int(min(k.parameter_count, 64)) {
                    // Zero-extend a parameter smaller than ours (SDK 1.0-1.2).
                    let raw = UnsafeRawPointer(base).advanced(by: j * Int(k.parameter_size))
                    let declared = min(Int(raw.loadUnaligned(as: UInt32.self)), Int(k.parameter_size))
                    var p = wh_parameter()
                    withUnsafeMutableBytes(of: &p) {
                        $0.copyMemory(
                            from: UnsafeRawBufferPointer(
                                start: raw, count: min(declared, MemoryLayout<wh_parameter>.size)))
                    }
                    var choices: [ParameterChoice] = []
                    if declared >= MemoryLayout<wh_parameter>.size, let values = p.choices {
                        for c in 0..<Int(min(p.choice_count, 256)) {
                            let title = p.choice_titles.flatMap { $0[c] }.map { String(cString: $0) }
                            choices.append(ParameterChoice(value: text(values[c]), title: title))
                        }
                    }
                    parameters.append(
                        ParameterDescription(
                            name: text(p.name), type: ParameterType(rawValue: p.type), rawType: p.type,
                            defaultJSON: p.default_json.map { String(cString: $0) }, summary: text(p.description),
                            title: declared >= MemoryLayout<wh_parameter>.size
                                ? p.title.map { String(cString: $0) } : nil,
                            choices: choices,
                            isOptional: declared >= MemoryLayout<wh_parameter>.size
                                && p.flags & UInt32(WH_PARAMETER_OPTIONAL.rawValue) != 0))
                }
            }
            let entryPoints = EntryPoint.allCases.filter {
                switch $0 {
                case .placeholder: k.placeholder != nil
                case .snapshot: k.snapshot != nil
                case .timeline: k.timeline != nil
                }
            }
            kinds.append(
                KindDescription(
                    id: text(k.id), displayName: text(k.display_name), summary: text(k.description),
                    familyBits: k.families, needsNetwork: k.flags & UInt32(WH_KIND_NEEDS_NETWORK.rawValue) != 0,
                    entryPoints: entryPoints, parameters: parameters))
        }
        let plugin = PluginDescription(
            path: pluginPath, id: text(d.id), name: text(d.name), version: text(d.version), vendor: text(d.vendor),
            sdkVersion: text(d.sdk_version), abiVersion: d.abi_version, descriptorSize: d.struct_size,
            loadSeconds: loadSeconds, threadsAfterLoad: UInt32(max(0, wh_thread_count())),
            hasWarmUp: d.warm_up != nil, kinds: kinds)
        if let problem = DescriptorDecoder.check(plugin) {
            return .failure(PluginFailure(plugin: pluginPath, reason: problem))
        }
        return .success((plugin, d))
    }

    // MARK: Calling

    private func perform(
        _ call: PluginCall, plugin: PluginDescription, descriptor: wh_plugin_descriptor
    ) -> (ProviderResult?, PluginFailure.Reason?, Double?) {
        let configuration: String
        switch CallMessage.configuration(call, plugin: plugin) {
        case .failure(let reason): return (nil, reason, nil)
        case .success(let json): configuration = json
        }
        let d = descriptor
        guard let index = plugin.kinds.firstIndex(where: { $0.id == call.kind }) else {
            return (nil, .unknownKind(kind: call.kind, available: plugin.kinds.map(\.id)), nil)
        }
        let kind = UnsafeRawPointer(d.kinds!).advanced(by: index * Int(d.kind_size)).loadUnaligned(as: wh_kind.self)
        let function: wh_entry_fn? =
            switch call.entryPoint {
            case .placeholder: kind.placeholder
            case .snapshot: kind.snapshot
            case .timeline: kind.timeline
            }
        guard let function else { return (nil, .missingEntryPoint(kind: call.kind, entryPoint: call.entryPoint), nil) }

        // The context and its strings must outlive a late completion: they
        // are never freed (one small leak per call, in a debugging mode).
        let context = UnsafeMutablePointer<wh_context>.allocate(capacity: 1)
        context.initialize(to: wh_context())
        context.pointee.struct_size = UInt32(MemoryLayout<wh_context>.size)
        context.pointee.abi_version = d.abi_version
        context.pointee.entry_point = call.entryPoint.rawValue
        context.pointee.family = call.family.rawValue
        context.pointee.is_preview = call.isPreview ? 1 : 0
        context.pointee.kind = UnsafePointer(strdup(call.kind))
        context.pointee.display_width = call.family.displaySize.width
        context.pointee.display_height = call.family.displaySize.height
        context.pointee.now = call.now
        context.pointee.timeout = call.effectiveTimeout
        context.pointee.configuration_json = UnsafePointer(strdup(configuration))
        context.pointee.locale = UnsafePointer(strdup(call.locale))
        context.pointee.data_directory = UnsafePointer(strdup(call.dataDirectory))
        context.pointee.kind_context = kind.context
        DataDirectory.ensure(call.dataDirectory)

        let completion = Completion()  // retained until the process exits (late completions)
        let opaque = Unmanaged.passRetained(completion).toOpaque()
        // What the plugin prints goes to stderr while it is called, so the
        // host's report on stdout (e.g. --json) stays intact.
        fflush(nil)
        let savedStdout = dup(STDOUT_FILENO)
        dup2(STDERR_FILENO, STDOUT_FILENO)
        defer {
            fflush(nil)
            dup2(savedStdout, STDOUT_FILENO)
            close(savedStdout)
        }
        // The entry point runs on a thread of its own, so that a plugin that
        // blocks its calling thread past the deadline leaves the host free
        // to report the timeout (the thread is never stopped).
        let body = CallBody {
            completion.start()
            function(
                context,
                { opaque, result in
                    guard let opaque else { return }
                    Unmanaged<Completion>.fromOpaque(opaque).takeUnretainedValue().complete(result)
                }, opaque)
        }
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { raw in
                Unmanaged<CallBody>.fromOpaque(raw!).takeRetainedValue().run()
                return nil
            }, Unmanaged.passRetained(body).toOpaque())
        guard started == 0 else {
            return (nil, .runnerUnavailable("pthread_create failed: \(String(cString: strerror(started)))"), nil)
        }
        pthread_detach(thread)
        guard let answer = completion.wait(seconds: call.effectiveTimeout) else {
            return (nil, .timedOut(phase: .call(call.entryPoint), limit: call.effectiveTimeout), nil)
        }
        switch answer {
        case .failure(let code, let detail, let found, let limit):
            return (
                nil,
                CallFailureMapping.reason(
                    code: code.rawValue, detail: detail, found: found, limit: limit, call: call, plugin: plugin), nil
            )
        case .success(let raw):
            let provider = Double(raw.nanoseconds) / 1e9
            switch ResultValidator.validate(raw, for: call) {
            case .success(let result): return (result, nil, provider)
            case .failure(let reason): return (nil, reason, provider)
            }
        }
    }
}

/// The work of the thread that calls an in-process entry point.
/// @unchecked: it is handed to that thread once and used only there.
private final class CallBody: @unchecked Sendable {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}

/// The completion of one in-process call: copies the result inside the
/// plugin's call (it may free it afterwards), from whichever thread.
/// @unchecked: the semaphore is made for use from several threads, and the
/// rest of the state is behind the mutex.
private final class Completion: @unchecked Sendable {
    enum Answer: Sendable {
        case success(RawResult)
        case failure(wh_call_failure, String, UInt64, UInt64)
    }
    private struct State {
        var answer: Answer?
        var duplicates: UInt32 = 0
        var started: Double = 0
        var caller: pthread_t?
    }
    private let state = Mutex(State())
    private let signal = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)

    init() { sem_init(signal, 0, 0) }

    func start() {
        state.withLock {
            $0.started = monotonicSeconds()
            $0.caller = pthread_self()
        }
    }

    func complete(_ result: UnsafePointer<wh_result>?) {
        let first = state.withLock { state -> Bool in
            if state.answer != nil {
                state.duplicates += 1
                return false
            }
            state.answer = Self.copy(
                result, nanoseconds: UInt64(max(0, monotonicSeconds() - state.started) * 1e9),
                sameThread: state.caller.map { pthread_equal($0, pthread_self()) != 0 } ?? false)
            return true
        }
        if first { sem_post(signal) }
    }

    /// The answer, or nil when the deadline passed first.
    func wait(seconds: Double) -> Answer? {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let end = Double(deadline.tv_sec) + Double(deadline.tv_nsec) / 1e9 + seconds
        deadline.tv_sec = Int(end)
        deadline.tv_nsec = Int((end - Double(Int(end))) * 1e9)
        while sem_timedwait(signal, &deadline) != 0 {
            if errno != EINTR { return nil }
        }
        return state.withLock { state in
            if case .success(var raw)? = state.answer {
                raw.duplicateCompletions = state.duplicates
                return .success(raw)
            }
            return state.answer
        }
    }

    private static func copy(_ pointer: UnsafePointer<wh_result>?, nanoseconds: UInt64, sameThread: Bool) -> Answer {
        guard let pointer else { return .failure(WH_CALL_NULL_RESULT, "NULL result", 0, 0) }
        let v1 = UInt32(MemoryLayout<wh_result>.size)
        guard pointer.pointee.struct_size >= v1 else {
            return .failure(
                WH_CALL_BAD_RESULT_STRUCT, "wh_result.struct_size is smaller than ABI v1's sizeof(wh_result)",
                UInt64(pointer.pointee.struct_size), UInt64(v1))
        }
        let r = pointer.pointee
        let count = r.status == WH_STATUS_OK.rawValue ? r.entry_count : 0
        guard count <= UInt32(WH_LIMIT_MAX_ENTRIES) else {
            return .failure(WH_CALL_TOO_MANY_ENTRIES, "", UInt64(count), UInt64(WH_LIMIT_MAX_ENTRIES))
        }
        let entrySize = UInt32(MemoryLayout<wh_entry>.size)
        if count > 0, r.entries == nil || r.entry_size < entrySize {
            return .failure(
                WH_CALL_BAD_RESULT_STRUCT, "wh_result.entries is NULL or entry_size too small",
                UInt64(r.entry_size), UInt64(entrySize))
        }
        var entries: [RawResult.Entry] = []
        var total: UInt64 = 0
        for index in 0..<Int(count) {
            let e = UnsafeRawPointer(r.entries!).advanced(by: index * Int(r.entry_size)).loadUnaligned(
                as: wh_entry.self)
            let length = e.content_json.map { e.content_length > 0 ? e.content_length : strlen($0) } ?? 0
            total += UInt64(length)
            guard total <= UInt64(WH_LIMIT_MAX_RESULT_BYTES) else {
                return .failure(WH_CALL_RESULT_TOO_LARGE, "", total, UInt64(WH_LIMIT_MAX_RESULT_BYTES))
            }
            let content = e.content_json.map {
                String(decoding: UnsafeRawBufferPointer(start: $0, count: length), as: UTF8.self)
            }
            entries.append(
                RawResult.Entry(
                    flags: e.flags, date: e.date, score: e.relevance_score, duration: e.relevance_duration,
                    content: content ?? ""))
        }
        return .success(
            RawResult(
                status: r.status, policy: r.policy, policyDate: r.policy_date, errorCode: r.error_code,
                errorMessage: r.status == WH_STATUS_OK.rawValue
                    ? "" : (r.error_message.map { String(cString: $0) } ?? ""),
                nanoseconds: nanoseconds, completedOnCallingThread: sameThread, entries: entries,
                duplicateCompletions: 0))
    }
}
