#if canImport(Glibc)
    import Glibc
#endif

/// Why the daemon could not start or had to stop.
public enum DaemonError: Error, Sendable, CustomStringConvertible {
    /// The configuration is wrong: the message names the file, line and field.
    case configuration(String)
    /// The state database cannot be opened or written.
    case state(path: String, detail: String)
    /// The control socket cannot be created.
    case socket(String)
    case system(String, errno: Int32)

    public var description: String {
        switch self {
        case .configuration(let message): message
        case .state(let path, let detail):
            "state database \(path): \(detail); check the path and its permissions, or pass --state"
        case .socket(let detail): "control socket: \(detail)"
        case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
        }
    }

    /// Configuration mistakes are usage errors (exit 2); the rest exit 1.
    public var isUsageError: Bool {
        if case .configuration = self { return true }
        return false
    }
}
