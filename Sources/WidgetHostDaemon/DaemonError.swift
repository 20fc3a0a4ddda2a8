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
    /// Another daemon listens on the control socket.
    case socketInUse(String)
    /// Another daemon holds the state file (`pid` 0 when it could not be read).
    case alreadyRunning(pid: Int32, statePath: String)
    /// The state file was written by a newer widgethost.
    case newerState(String)
    case system(String, errno: Int32)

    public var description: String {
        switch self {
        case .configuration(let message): message
        case .state(let path, let detail):
            "state database \(path): \(detail); check the path and its permissions, or pass --state"
        case .socket(let detail): "control socket: \(detail)"
        case .socketInUse(let detail):
            "control socket: \(detail); stop the daemon listening there, or give this one another --socket"
        case .alreadyRunning(let pid, let path):
            "another widgethost daemon\(pid > 0 ? " (pid \(pid))" : "") is using the state file \(path); stop it first, or give this one another --state"
        case .newerState(let detail): detail
        case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
        }
    }

    /// Configuration mistakes are usage errors (exit 2); the rest exit 1.
    public var isUsageError: Bool {
        if case .configuration = self { return true }
        return false
    }

    /// The exit status: 2 for what a restart cannot fix (a configuration
    /// mistake, another daemon on the same state or socket, a state file
    /// from a newer version; the systemd unit's `RestartPreventExitStatus=2`),
    /// 1 otherwise.
    public var exitStatus: Int32 {
        switch self {
        case .configuration, .alreadyRunning, .socketInUse, .newerState: 2
        default: 1
        }
    }
}
