#if canImport(Glibc)
    import Glibc
#endif

/// Whether a control client runs beside the daemon, not inside a plugin's
/// sandbox: its PID and user namespaces (read through `/proc/PID/ns` for the
/// pid `SO_PEERCRED` gave) must be the daemon's own. A plugin's call runs
/// in new namespaces (docs/sandbox.md), so a plugin that reaches the socket
/// (pathname Unix sockets are outside the network namespace) is refused
/// even though its uid is the daemon's.
///
/// ```swift
/// if let reason = PeerCheck.refusal(pid: peer.pid) { refuse(reason) }
/// ```
enum PeerCheck {
    /// The namespaces compared.
    static let namespaces = ["pid", "user"]

    /// The daemon's own namespaces, read once.
    static let own: [String: String] = Dictionary(
        uniqueKeysWithValues: namespaces.compactMap { name in link("/proc/self/ns/\(name)").map { (name, $0) } })

    /// Why the peer `pid` is refused, or nil when it shares the daemon's namespaces.
    static func refusal(pid: pid_t) -> String? {
        // A peer whose pid cannot be seen from here (0) lives in a PID namespace the daemon's is not above.
        guard pid > 0 else { return "its process is not visible from the daemon's PID namespace" }
        for name in namespaces {
            guard let mine = own[name] else { continue }
            guard let theirs = link("/proc/\(pid)/ns/\(name)") else {
                return "its \(name) namespace cannot be read (it exited?)"
            }
            if theirs != mine {
                return "it runs in another \(name) namespace (\(theirs), the daemon's is \(mine)): a plugin sandbox"
            }
        }
        return nil
    }

    private static func link(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
