import CWidgetHostSupport
import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What can go wrong on the control socket.
public enum ControlSocketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing listens at the path: the daemon is not running (or uses another socket).
    case notRunning(path: String, errno: Int32)
    /// The path does not fit in `sockaddr_un` (108 bytes).
    case pathTooLong(String)
    /// A system call failed.
    case system(call: String, path: String, errno: Int32)
    /// The peer closed the connection before a whole line arrived.
    case closed
    /// A line longer than ``ControlProtocol/maximumLineBytes``.
    case lineTooLong
    /// The response was not a protocol line.
    case malformedResponse(String)

    public var description: String {
        switch self {
        case .notRunning(let path, let code):
            "no widgethost daemon is listening on \(path) (\(String(cString: strerror(code)))); start one with `widgethost run`, or pass --socket / set WIDGETHOST_SOCKET"
        case .pathTooLong(let path):
            "socket path \(path) is longer than the 107 bytes a Unix socket address holds; choose a shorter one"
        case .system(let call, let path, let code): "\(call) on \(path) failed: \(String(cString: strerror(code)))"
        case .closed: "the daemon closed the connection before answering"
        case .lineTooLong: "a line longer than \(ControlProtocol.maximumLineBytes) bytes"
        case .malformedResponse(let detail): "the daemon's answer is not a protocol line: \(detail)"
        }
    }
}

/// A connected Unix stream socket that reads and writes newline-delimited lines.
/// Owns its descriptor: `close()` it when done.
public struct LineSocket: Sendable {
    public let descriptor: FileDescriptor
    private var buffer: [UInt8] = []

    public init(descriptor: FileDescriptor) { self.descriptor = descriptor }

    /// Connects to the listening socket at `path`.
    public static func connect(to path: String) throws(ControlSocketError) -> LineSocket {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(call: "socket", path: path, errno: errno) }
        var address = try UnixAddress(path)
        let result = address.withSockaddr { Glibc.connect(fd, $0, $1) }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            if code == ENOENT || code == ECONNREFUSED { throw .notRunning(path: path, errno: code) }
            throw .system(call: "connect", path: path, errno: code)
        }
        return LineSocket(descriptor: FileDescriptor(rawValue: fd))
    }

    /// Writes all of `bytes` (`MSG_NOSIGNAL`: a peer that closed gives EPIPE, not SIGPIPE).
    public func write(_ bytes: [UInt8]) throws(ControlSocketError) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                send(descriptor.rawValue, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                offset += sent
            } else if sent < 0 && errno == EINTR {
                continue
            } else {
                throw .system(call: "write", path: "the control socket", errno: sent < 0 ? errno : EIO)
            }
        }
    }

    /// Reads up to the next newline; nil at a clean end of stream.
    public mutating func readLine(limit: Int = ControlProtocol.maximumLineBytes) throws(ControlSocketError)
        -> [UInt8]?
    {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            if buffer.count > limit { throw .lineTooLong }
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0, retryOnInterrupt: true) }
            } catch {
                throw .system(call: "read", path: "the control socket", errno: (error as? Errno)?.rawValue ?? EIO)
            }
            if count == 0 {
                if buffer.isEmpty { return nil }
                throw .closed
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    public func close() { try? descriptor.close() }
}

/// A `sockaddr_un` for a filesystem path.
struct UnixAddress {
    var storage = sockaddr_un()

    init(_ path: String) throws(ControlSocketError) {
        storage.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: storage.sun_path)
        guard bytes.count < capacity else { throw .pathTooLong(path) }
        withUnsafeMutableBytes(of: &storage.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
    }

    mutating func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }
}

/// The listening side: a socket bound at `path` with owner-only permissions,
/// in a directory only the owner can enter.
public enum ControlListener {
    /// Creates the parent directory (0700) if needed, removes a stale socket
    /// (one nobody answers on), binds, sets 0600, listens. Returns the
    /// listening descriptor (non-blocking, close-on-exec).
    public static func listen(at path: String) throws(ControlSocketError) -> FileDescriptor {
        // The directories up to the socket, each created owner-only if missing.
        var directory = ""
        for component in path.split(separator: "/").dropLast() {
            directory += "/" + component
            if mkdir(directory, 0o700) != 0 && errno != EEXIST {
                throw .system(call: "mkdir", path: directory, errno: errno)
            }
        }
        if access(path, F_OK) == 0 {
            if let probe = try? LineSocket.connect(to: path) {
                probe.close()
                throw .system(call: "bind (another daemon is listening)", path: path, errno: EADDRINUSE)
            }
            unlink(path)
        }
        let fd = socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .system(call: "socket", path: path, errno: errno) }
        var address = try UnixAddress(path)
        // Created with no permission for group and others from the start.
        let previousMask = umask(0o177)
        let bound = address.withSockaddr { bind(fd, $0, $1) }
        let bindErrno = errno
        umask(previousMask)
        guard bound == 0 else {
            Glibc.close(fd)
            throw .system(call: "bind", path: path, errno: bindErrno)
        }
        chmod(path, 0o600)
        guard Glibc.listen(fd, 64) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .system(call: "listen", path: path, errno: code)
        }
        return FileDescriptor(rawValue: fd)
    }

    /// The uid and pid of the process at the other end of a connected socket (`SO_PEERCRED`).
    public static func peer(of descriptor: FileDescriptor) -> (uid: uid_t, pid: pid_t)? {
        var uid: UInt32 = 0
        var pid: Int32 = 0
        guard wh_peer_credentials(descriptor.rawValue, &uid, &pid) == 0 else { return nil }
        return (uid, pid)
    }
}
