import WidgetHostModel

/// Why a load or a call failed: one typed outcome per thing that can go
/// wrong, each with a message that names the file and a hint that says what
/// to do.
///
/// ```swift
/// switch output.result {
/// case .success(let result): print(result.entries.count)
/// case .failure(let failure):
///     print(failure.message)   // "… crashed with SIGSEGV (segmentation fault) during timeline"
///     print(failure.hint)      // "Run it under a debugger: …"
/// }
/// ```
public struct PluginFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The plugin file the failure concerns.
    public var plugin: String
    public var reason: Reason
    /// The call ran inside the host (`--isolation in-process`): nothing was
    /// killed, so a timed-out call's code may still be running.
    public var inProcess: Bool

    public init(plugin: String, reason: Reason, inProcess: Bool = false) {
        self.plugin = plugin
        self.reason = reason
        self.inProcess = inProcess
    }

    /// When in a call's life something failed.
    public enum Phase: Sendable, Equatable, CustomStringConvertible {
        /// `dlopen`, constructors and `widgethost_provider_entry`.
        case load
        /// An entry point, from the call until its completion.
        case call(EntryPoint)

        public var description: String {
            switch self {
            case .load: "loading (dlopen, constructors, widgethost_provider_entry)"
            case .call(let point): point.description
            }
        }
    }

    /// A system call the sandbox's seccomp filter traps, as the runner's
    /// SIGSYS handler reported it just before the process died.
    public struct ForbiddenSyscall: Sendable, Equatable, CustomStringConvertible {
        /// The call's name on this architecture ("ptrace"), nil when the
        /// runner could not name it (a call of a foreign ABI, e.g. int 0x80).
        public var name: String?
        /// The system call number (`si_syscall`).
        public var number: Int32
        /// The ABI the call was made through (`si_arch`, an `AUDIT_ARCH_*`).
        public var architecture: UInt32

        public init(name: String?, number: Int32, architecture: UInt32) {
            self.name = name
            self.number = number
            self.architecture = architecture
        }

        /// "ptrace (syscall 101)", or "syscall 11 of architecture 0x40000003".
        public var description: String {
            if let name { return "\(name) (syscall \(number))" }
            return "syscall \(number) of architecture 0x\(String(architecture, radix: 16))"
        }
    }

    /// The typed outcomes.
    public enum Reason: Error, Sendable, Equatable {
        /// The host could not start its runner (`widgethost-runner`): a host fault.
        case runnerUnavailable(String)
        /// `widgethost-runner` is not installed where the host looks: a host fault.
        case runnerMissing(String)
        /// The host ran out of descriptors, memory or processes starting or
        /// talking to a runner (EMFILE, ENFILE, ENOMEM, EAGAIN): a host fault.
        case hostOutOfResources(String)
        case fileNotFound
        case notReadable(String)
        /// Not an ELF file; `found` describes what it starts with.
        case notELF(found: String)
        case wrongMachine(expected: String, found: String)
        case notSharedObject(found: String)
        /// A library the plugin links against is missing.
        case missingDependency(library: String, dlerror: String)
        /// A symbol the plugin uses is defined nowhere.
        case unresolvedSymbol(symbol: String, dlerror: String)
        case dlopenFailed(dlerror: String)
        /// No `widgethost_provider_entry` function.
        case noEntryFunction(dlerror: String)
        case entryReturnedNull
        /// A descriptor field that does not match what the host expects.
        case abiMismatch(field: String, expected: String, found: String, detail: String)
        /// The plugin refused the host's ABI range.
        case pluginRefused(reason: String, offered: String)
        case invalidDescriptor(field: String, expected: String, found: String, detail: String)
        case unknownKind(kind: String, available: [String])
        /// The instance configuration does not fit the kind's parameters.
        case badConfiguration(String)
        case unsupportedFamily(kind: String, family: WidgetFamily, supported: [WidgetFamily])
        /// The kind's entry-point pointer is NULL.
        case missingEntryPoint(kind: String, entryPoint: EntryPoint)
        /// The plugin reported an error through its result.
        case pluginError(code: Int32, message: String)
        case timedOut(phase: Phase, limit: Double)
        case crashed(phase: Phase, signal: Int32, name: String)
        case exitedEarly(phase: Phase, status: Int32)
        /// The result broke a rule; `what` says which, and where.
        case malformedResult(what: String)
        case resultTooLarge(what: String, found: UInt64, limit: UInt64)
        /// The runner or the plugin broke the wire protocol.
        case protocolViolation(String)
        /// The sandbox killed the plugin for a forbidden system call (SIGSYS
        /// from seccomp); `syscall` names it when the runner could report it.
        case forbiddenSyscall(phase: Phase, syscall: ForbiddenSyscall?)
        /// A sandbox layer the kernel offers could not be applied; the plugin
        /// was not loaded.
        case sandboxFailed(String)
    }

    /// A stable, machine-readable name for the outcome (used in `--json`).
    public var code: String {
        switch reason {
        case .runnerUnavailable: "runnerUnavailable"
        case .runnerMissing: "runnerMissing"
        case .hostOutOfResources: "hostOutOfResources"
        case .fileNotFound: "fileNotFound"
        case .notReadable: "notReadable"
        case .notELF: "notELF"
        case .wrongMachine: "wrongMachine"
        case .notSharedObject: "notSharedObject"
        case .missingDependency: "missingDependency"
        case .unresolvedSymbol: "unresolvedSymbol"
        case .dlopenFailed: "dlopenFailed"
        case .noEntryFunction: "noEntryFunction"
        case .entryReturnedNull: "entryReturnedNull"
        case .abiMismatch: "abiMismatch"
        case .pluginRefused: "pluginRefused"
        case .invalidDescriptor: "invalidDescriptor"
        case .unknownKind: "unknownKind"
        case .badConfiguration: "badConfiguration"
        case .unsupportedFamily: "unsupportedFamily"
        case .missingEntryPoint: "missingEntryPoint"
        case .pluginError: "pluginError"
        case .timedOut: "timedOut"
        case .crashed: "crashed"
        case .exitedEarly: "exitedEarly"
        case .malformedResult: "malformedResult"
        case .resultTooLarge: "resultTooLarge"
        case .protocolViolation: "protocolViolation"
        case .forbiddenSyscall: "forbiddenSyscall"
        case .sandboxFailed: "sandboxFailed"
        }
    }

    /// What happened, naming the file.
    public var message: String {
        let file = plugin
        switch reason {
        case .runnerUnavailable(let why):
            return "cannot start the plugin runner for \(file): \(why)"
        case .runnerMissing(let why):
            return "cannot start the plugin runner for \(file): \(why)"
        case .hostOutOfResources(let why):
            return "the host ran out of resources calling \(file): \(why) (not the plugin's fault)"
        case .fileNotFound:
            return "\(file): no such file"
        case .notReadable(let why):
            return "\(file): cannot be read: \(why)"
        case .notELF(let found):
            return "\(file) is not a shared object: it has no ELF header (it \(found))"
        case .wrongMachine(let expected, let found):
            return "\(file) was built for another machine: expected \(expected), found \(found)"
        case .notSharedObject(let found):
            return "\(file) is an ELF file but not a shared object: found \(found)"
        case .missingDependency(let library, let dlerror):
            return "\(file) needs the library \(library), which cannot be found (dlerror: \(dlerror))"
        case .unresolvedSymbol(let symbol, let dlerror):
            return "\(file) uses the symbol \(symbol), which no loaded library defines (dlerror: \(dlerror))"
        case .dlopenFailed(let dlerror):
            return "\(file) could not be loaded (dlerror: \(dlerror))"
        case .noEntryFunction(let dlerror):
            return "\(file) does not export widgethost_provider_entry (dlerror: \(dlerror))"
        case .entryReturnedNull:
            return "\(file): widgethost_provider_entry returned NULL instead of a descriptor"
        case .abiMismatch(let field, let expected, let found, let detail):
            return
                "\(file) does not match the host's ABI: field \(field): expected \(expected), found \(found) (\(detail))"
        case .pluginRefused(let reason, let offered):
            return "\(file) refused to load: the host offered ABI \(offered); the plugin says: \(reason)"
        case .invalidDescriptor(let field, let expected, let found, let detail):
            return "\(file) has an invalid descriptor: field \(field): expected \(expected), found \(found) (\(detail))"
        case .unknownKind(let kind, let available):
            return "\(file) has no kind \"\(kind)\"; it has: \(available.joined(separator: ", "))"
        case .badConfiguration(let what):
            return "bad configuration for \(file): \(what)"
        case .unsupportedFamily(let kind, let family, let supported):
            return
                "kind \(kind) of \(file) does not support \(family); it supports: \(supported.map(\.name).joined(separator: ", "))"
        case .missingEntryPoint(let kind, let point):
            return "kind \(kind) of \(file) has no \(point) entry point (wh_kind.\(point) is NULL)"
        case .pluginError(let code, let message):
            return "\(file) reported an error: code \(code): \(message)"
        case .timedOut(let phase, let limit):
            let after =
                inProcess
                ? "it was abandoned, not stopped: in-process, its code may still be running inside widgethost"
                : "its process group was killed"
            return "\(file) timed out during \(phase): no answer after \(Timestamp.duration(limit)); \(after)"
        case .crashed(let phase, let signal, let name):
            return "\(file) crashed with \(name) (signal \(signal)) during \(phase)"
        case .exitedEarly(let phase, let status):
            return "\(file) exited with status \(status) during \(phase), before answering"
        case .malformedResult(let what):
            return "\(file) returned a malformed result: \(what)"
        case .resultTooLarge(let what, let found, let limit):
            return "\(file) returned a result that is too large: \(what): \(found), limit \(limit)"
        case .protocolViolation(let what):
            return "\(file): the channel between host and runner was corrupted: \(what)"
        case .forbiddenSyscall(let phase, let syscall):
            guard let syscall else {
                return "\(file) was killed by the sandbox during \(phase) for a forbidden system call (SIGSYS)"
            }
            return
                "\(file) was killed during \(phase) for calling \(syscall), which the sandbox forbids (SIGSYS)"
        case .sandboxFailed(let why):
            return "the sandbox for \(file) could not be set up: \(why)"
        }
    }

    /// What to do about it.
    public var hint: String {
        switch reason {
        case .hostOutOfResources:
            return
                "Raise the host's limits (ulimit -n, LimitNOFILE= in the unit) or free memory; the call is retried and does not count against the plugin."
        case .runnerUnavailable, .runnerMissing:
            return
                "Build the package (`swift build`) so that widgethost-runner sits next to widgethost, or set WIDGETHOST_RUNNER to its path."
        case .fileNotFound:
            return "Check the path; build the plugin first (`swift build`, `make`, `cargo build`)."
        case .notReadable:
            return "Check the file's permissions."
        case .notELF:
            return
                "Pass the .so the build produced (e.g. .build/debug/libMyPlugin.so), built with `cc -shared -fPIC` or a dynamic library product."
        case .wrongMachine:
            return "Rebuild the plugin for this machine's architecture."
        case .notSharedObject:
            return "Link the plugin with -shared (C), crate-type = [\"cdylib\"] (Rust) or type: .dynamic (SwiftPM)."
        case .missingDependency:
            return
                "Install the library, or link it statically, or set an rpath (-Wl,-rpath,'$ORIGIN') so it is found next to the plugin; `ldd PLUGIN.so` lists what is missing."
        case .unresolvedSymbol:
            return
                "Link the library that defines the symbol, or define it; build with -Wl,--no-undefined to catch this at link time."
        case .dlopenFailed:
            return "Read the dlerror text above; `ldd PLUGIN.so` and `readelf -d PLUGIN.so` help."
        case .noEntryFunction:
            return
                "Export `const wh_plugin_descriptor *widgethost_provider_entry(const wh_host_offer *)` (C: include <widgethost/provider.h>; Swift: @_cdecl(\"widgethost_provider_entry\"); Rust: #[no_mangle] pub extern \"C\"). Check with `nm -D PLUGIN.so`."
        case .entryReturnedNull:
            return
                "Return a pointer to a static const wh_plugin_descriptor; to refuse a host, set abi_version to 0 and explain in `refusal`."
        case .abiMismatch(let field, _, _, _):
            return field == "abi_version"
                ? "Choose the version with WH_NEGOTIATE(offer), or rebuild against this host's SDK/include/widgethost/provider.h."
                : "Rebuild the plugin against this host's SDK/include/widgethost/provider.h and set every struct_size/size field with sizeof."
        case .pluginRefused:
            return
                "Use a widgethost whose ABI range includes the version the plugin needs, or rebuild the plugin against this host's SDK."
        case .invalidDescriptor:
            return "Fix the descriptor as docs/abi.md describes."
        case .unknownKind:
            return "Pick one of the kinds listed (`widgethost load PLUGIN.so` shows them)."
        case .badConfiguration:
            return
                "Pass --config with a JSON object whose members are the kind's parameters (`widgethost load PLUGIN.so` lists them)."
        case .unsupportedFamily:
            return "Pick one of the families listed, or add the family to the kind's `families` bits."
        case .missingEntryPoint:
            return "Every kind needs placeholder, snapshot and timeline functions."
        case .pluginError:
            return "This is the plugin's own error; see its message and log (--verbose)."
        case .timedOut(let phase, _):
            if case .load = phase {
                return
                    "The plugin's constructors or widgethost_provider_entry block: keep loading cheap (no I/O, no waiting)."
            }
            return
                "Call the completion before the deadline (context->timeout); answer from cached or sample data when the real data is slow, or raise it with --timeout."
        case .crashed:
            return
                "Run it under a debugger with `widgethost ... --verbose` for its log; check memory use in the entry points and constructors."
        case .exitedEarly:
            return "Do not call exit() in a plugin: report errors with WH_STATUS_ERROR."
        case .malformedResult:
            return
                "See docs/abi.md, \"Results\": entry dates finite and sorted, content a JSON object, policy atEnd/after/never."
        case .resultTooLarge:
            return
                "Return fewer entries (at most \(WidgetHostLimits.maxEntries)) or less content (at most \(WidgetHostLimits.maxResultBytes / 1_048_576) MiB per result)."
        case .protocolViolation:
            return "The plugin must not read or write fd 3 (the host's channel); use stdout/stderr for logging."
        case .forbiddenSyscall:
            return
                "Plugins may not ptrace, mount, load modules or kexec, use bpf, or read other processes' memory (docs/sandbox.md lists the calls); remove that code."
        case .sandboxFailed:
            return
                "Run `widgethost sandbox-check` to see which layer fails and why; WIDGETHOST_SANDBOX=off disables the sandbox (debugging only)."
        }
    }

    public var description: String { message }

    /// Whether the host, not the plugin, failed (the runner missing, out of
    /// descriptors or memory, a sandbox layer the kernel could not apply):
    /// such a failure is logged and retried, and never counts toward the
    /// plugin's backoff or quarantine.
    public var isHostFault: Bool {
        switch reason {
        case .runnerUnavailable, .runnerMissing, .hostOutOfResources, .sandboxFailed: true
        default: false
        }
    }

    /// Whether the plugin's process died or broke the protocol during a
    /// call (a crash, an exit, a forbidden system call, garbage on its
    /// channel): what counts toward quarantine. Never true of a host fault.
    public var isPluginCrash: Bool {
        switch reason {
        case .crashed, .exitedEarly, .forbiddenSyscall, .protocolViolation: true
        default: false
        }
    }
}
