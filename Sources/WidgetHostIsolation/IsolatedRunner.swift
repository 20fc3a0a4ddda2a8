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
    /// Fork mode: map the pages a call child needs before its call (see
    /// docs/isolation.md, "Prefault"). On by default; `WIDGETHOST_PREFAULT=off`
    /// in the host's environment turns it off, as does setting this to false.
    public var prefault: Bool = IsolationOptions.prefaultByDefault

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

extension IsolationOptions {
    /// False when the host runs with `WIDGETHOST_PREFAULT=off` (or `0`).
    public static var prefaultByDefault: Bool {
        guard let value = getenv("WIDGETHOST_PREFAULT") else { return true }
        let text = String(cString: value)
        return !(text == "off" || text == "0")
    }
}

/// Spawn mode: loads one plugin, and optionally makes one entry-point call,
/// in a fresh child process (`widgethost-runner`) that is killed afterwards.
///
/// It is a warm worker (`WorkerProcess`) used for a single call, so spawn,
/// worker and fork modes share the launcher, the sandbox, the answer checks,
/// the failure mapping and the timeouts. The child runs in its own session
/// and process group, with only stdin (/dev/null), stdout and stderr (pipes
/// to the host) and the protocol socket (fd 3); its liveness is judged by its
/// pidfd; at a deadline, and after the call, its whole process group is
/// killed before it is reaped, so no grandchild outlives the call.
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
    /// Without a call the child runs in a temporary empty data directory,
    /// removed afterwards.
    public static func run(
        plugin: String, call: PluginCall? = nil, options: IsolationOptions = IsolationOptions()
    ) -> CallOutput {
        let startedAt = monotonicSeconds()
        let path = absolutePath(plugin)
        var temporary: String?
        let directory: String
        if let call {
            directory = call.dataDirectory
        } else if let made = DataDirectory.makeTemporary() {
            directory = made
            temporary = made
        } else {
            return failed(
                path,
                .hostOutOfResources("cannot create a temporary data directory: \(String(cString: strerror(errno)))"),
                startedAt: startedAt)
        }
        defer { if let temporary { DataDirectory.removeTree(temporary) } }
        let profile = SandboxProfile(
            dataDirectory: directory, locale: call?.locale ?? "en-US", allowNetwork: call?.allowNetwork == true)
        let worker: WorkerProcess
        switch WorkerProcess.start(plugin: path, options: options, profile: profile, warmUp: false) {
        case .failure(let failure):
            return CallOutput(
                plugin: nil, result: nil, failure: failure,
                timing: CallTiming(totalSeconds: monotonicSeconds() - startedAt), log: .empty,
                childExit: "not started", processGroup: 0)
        case .success(let started): worker = started
        }
        var output: CallOutput
        if let call {
            output = worker.call(call)
        } else {
            let failure = worker.awaitLoad()
            output = CallOutput(
                plugin: worker.plugin, result: nil, failure: failure, timing: CallTiming(totalSeconds: 0),
                log: .empty, childExit: "", processGroup: worker.pid)
        }
        worker.terminate()
        output.timing.totalSeconds = monotonicSeconds() - startedAt
        output.timing.childCPUSeconds = worker.cpuSeconds()
        output.log = worker.takeLog(adding: output.log)
        if output.childExit.isEmpty || output.childExit.hasPrefix("answered") {
            output.childExit = "killed after its call (spawn mode: one call per runner)"
        }
        return output
    }

    private static func failed(_ path: String, _ reason: PluginFailure.Reason, startedAt: Double) -> CallOutput {
        CallOutput(
            plugin: nil, result: nil, failure: PluginFailure(plugin: path, reason: reason),
            timing: CallTiming(totalSeconds: monotonicSeconds() - startedAt), log: .empty, childExit: "not started",
            processGroup: 0)
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

/// Calls `body` with a NULL-terminated C array of the strings.
func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for pointer in pointers { free(pointer) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
