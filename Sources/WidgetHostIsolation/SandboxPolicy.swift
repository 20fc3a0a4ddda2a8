import CWidgetHostSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The sandbox the runner puts around a plugin before loading it (see
/// docs/sandbox.md): which layers to apply, the resource limits, and the
/// files a plugin may use beyond the defaults. Every field is per plugin:
/// start from `.standard` and change what one plugin needs.
///
/// ```swift
/// var options = IsolationOptions()
/// options.sandbox.addressSpaceBytes = 8 << 30                   // a plugin that maps a lot
/// options.sandbox.extraReadOnlyPaths = ["/usr/local/share/fonts"] // reads a font directory
/// options.sandbox.extraReadWritePaths = ["/var/cache/weather"]   // shares a cache
/// options.sandbox.maxTasks = 64                                  // processes + threads
/// ```
public struct SandboxPolicy: Sendable, Hashable {
    /// The layers, as `wh_sandbox_layer` bits (`WH_SANDBOX_*`): rlimits,
    /// no_new_privs, Landlock, seccomp, the network namespace, the pids
    /// cgroup, the PID namespace (`WH_SANDBOX_PIDNS`: what the plugin starts
    /// dies with its runner) and the mount namespace (`WH_SANDBOX_MOUNTNS`:
    /// a minimal read-only root with only the data directory writable).
    public var layers: UInt32
    /// `RLIMIT_AS` (0 leaves the inherited limit).
    public var addressSpaceBytes: UInt64
    /// `RLIMIT_CPU` soft limit in seconds (SIGXCPU; SIGKILL one second later).
    public var cpuSeconds: UInt64
    /// `RLIMIT_NOFILE`.
    public var openFiles: UInt64
    /// `RLIMIT_FSIZE` (SIGXFSZ when a write would pass it).
    public var fileSizeBytes: UInt64
    /// `RLIMIT_NPROC`: counts every process of the user; the kernel does not
    /// enforce it for root (`maxTasks` does).
    public var processes: UInt64
    /// `pids.max` of the runner's own pids cgroup (layer `WH_SANDBOX_PIDS`):
    /// the processes and threads of the plugin, together, root included.
    /// For a fork server the server, its standby child and the call count
    /// too. 0: no pids cgroup.
    public var maxTasks: UInt64
    /// Absolute paths the plugin may read (and execute) beneath, beyond the
    /// defaults (system libraries, a few /etc files, /proc, its own file and
    /// directory). For example `/usr/share/zoneinfo` is already allowed (under
    /// /usr); a font directory under /srv is not. A path that does not exist
    /// when the call starts is skipped with a line in the call's log. At most
    /// `maxExtraPaths` are sent.
    public var extraReadOnlyPaths: [String]
    /// Absolute paths the plugin may read and write beneath (no device nodes,
    /// no execution), beyond its data directory. Same rules as
    /// `extraReadOnlyPaths`.
    public var extraReadWritePaths: [String]

    /// The most extra paths of each kind a policy carries.
    public static let maxExtraPaths = Int(WH_SANDBOX_MAX_EXTRA_PATHS)

    public init(
        layers: UInt32 = UInt32(WH_SANDBOX_ALL.rawValue),
        addressSpaceBytes: UInt64 = UInt64(WH_SANDBOX_DEFAULT_ADDRESS_SPACE_MIB) << 20,
        cpuSeconds: UInt64 = UInt64(WH_SANDBOX_DEFAULT_CPU_SECONDS),
        openFiles: UInt64 = UInt64(WH_SANDBOX_DEFAULT_OPEN_FILES),
        fileSizeBytes: UInt64 = UInt64(WH_SANDBOX_DEFAULT_FILE_SIZE_MIB) << 20,
        processes: UInt64 = UInt64(WH_SANDBOX_DEFAULT_PROCESSES),
        maxTasks: UInt64 = UInt64(WH_SANDBOX_DEFAULT_MAX_TASKS),
        extraReadOnlyPaths: [String] = [],
        extraReadWritePaths: [String] = []
    ) {
        self.layers = layers
        self.addressSpaceBytes = addressSpaceBytes
        self.cpuSeconds = cpuSeconds
        self.openFiles = openFiles
        self.fileSizeBytes = fileSizeBytes
        self.processes = processes
        self.maxTasks = maxTasks
        self.extraReadOnlyPaths = extraReadOnlyPaths
        self.extraReadWritePaths = extraReadWritePaths
    }

    /// Every layer with the documented default limits.
    public static let standard = SandboxPolicy()

    /// No layer but the session one (own session, fds 0-3, cwd, clean
    /// environment), no limits. For debugging only.
    public static let off = SandboxPolicy(
        layers: 0, addressSpaceBytes: 0, cpuSeconds: 0, openFiles: 0, fileSizeBytes: 0, processes: 0,
        maxTasks: 0)

    /// True when the host's environment has `WIDGETHOST_SANDBOX=off` (or `0`,
    /// `false`, `no`): a switch for debugging a plugin under gdb or strace.
    public static var disabledByEnvironment: Bool {
        guard let value = getenv("WIDGETHOST_SANDBOX") else { return false }
        return ["off", "0", "false", "no"].contains(String(cString: value).lowercased())
    }

    /// This policy, or `.off` when the environment disables the sandbox.
    public var effective: SandboxPolicy { Self.disabledByEnvironment ? .off : self }
}

extension WireWriter {
    /// LOAD's sandbox policy (wire version 3): the layers and rlimits, the
    /// runner mode, the pids limit and the extra Landlock paths.
    mutating func sandboxPolicy(_ policy: SandboxPolicy, allowNetwork: Bool, mode: UInt32) {
        u32(allowNetwork ? 1 : 0)
        u32(policy.layers)
        u64(policy.addressSpaceBytes)
        u64(policy.cpuSeconds)
        u64(policy.openFiles)
        u64(policy.fileSizeBytes)
        u64(policy.processes)
        u32(mode)
        u64(policy.maxTasks)
        for paths in [policy.extraReadOnlyPaths, policy.extraReadWritePaths] {
            let sent = paths.prefix(SandboxPolicy.maxExtraPaths)
            u32(UInt32(sent.count))
            for path in sent { string(path) }
        }
    }
}
