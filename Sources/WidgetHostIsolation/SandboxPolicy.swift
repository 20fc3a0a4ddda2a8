import CWidgetHostSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The sandbox the runner puts around a plugin before loading it (see
/// docs/sandbox.md): which layers to apply and the resource limits.
///
/// ```swift
/// var options = IsolationOptions()
/// options.sandbox.addressSpaceBytes = 8 << 30   // a plugin that maps a lot
/// ```
public struct SandboxPolicy: Sendable, Hashable {
    /// The layers, as `wh_sandbox_layer` bits (`WH_SANDBOX_*`).
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
    /// enforce it for root.
    public var processes: UInt64

    public init(
        layers: UInt32 = UInt32(WH_SANDBOX_ALL.rawValue),
        addressSpaceBytes: UInt64 = UInt64(WH_SANDBOX_DEFAULT_ADDRESS_SPACE_MIB) << 20,
        cpuSeconds: UInt64 = UInt64(WH_SANDBOX_DEFAULT_CPU_SECONDS),
        openFiles: UInt64 = UInt64(WH_SANDBOX_DEFAULT_OPEN_FILES),
        fileSizeBytes: UInt64 = UInt64(WH_SANDBOX_DEFAULT_FILE_SIZE_MIB) << 20,
        processes: UInt64 = UInt64(WH_SANDBOX_DEFAULT_PROCESSES)
    ) {
        self.layers = layers
        self.addressSpaceBytes = addressSpaceBytes
        self.cpuSeconds = cpuSeconds
        self.openFiles = openFiles
        self.fileSizeBytes = fileSizeBytes
        self.processes = processes
    }

    /// Every layer with the documented default limits.
    public static let standard = SandboxPolicy()

    /// No layer but the session one (own session, fds 0-3, cwd, clean
    /// environment), no limits. For debugging only.
    public static let off = SandboxPolicy(
        layers: 0, addressSpaceBytes: 0, cpuSeconds: 0, openFiles: 0, fileSizeBytes: 0, processes: 0)

    /// True when the host's environment has `WIDGETHOST_SANDBOX=off` (or `0`,
    /// `false`, `no`): a switch for debugging a plugin under gdb or strace.
    public static var disabledByEnvironment: Bool {
        guard let value = getenv("WIDGETHOST_SANDBOX") else { return false }
        return ["off", "0", "false", "no"].contains(String(cString: value).lowercased())
    }

    /// This policy, or `.off` when the environment disables the sandbox.
    public var effective: SandboxPolicy { Self.disabledByEnvironment ? .off : self }
}
