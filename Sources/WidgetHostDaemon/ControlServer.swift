import Logging
import SystemPackage
import WidgetHostControl

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's end of the control socket: accepts connections from the
/// daemon's own user only, splits their input into request lines, and
/// writes responses. Non-blocking; driven by the daemon's poll loop.
final class ControlServer {
    let path: String
    let logger: Logger
    private var listener: FileDescriptor?
    private var connections: [Int32: Connection] = [:]
    private let owner = geteuid()

    final class Connection {
        let descriptor: Int32
        let uid: uid_t
        let pid: pid_t
        var input: [UInt8] = []
        init(descriptor: Int32, uid: uid_t, pid: pid_t) {
            self.descriptor = descriptor
            self.uid = uid
            self.pid = pid
        }
    }

    /// A parsed request and the connection to answer on.
    struct Incoming {
        var connection: Int32
        var request: Result<ControlRequest, ControlErrorBody>
        var id: Int?
    }

    init(path: String, logger: Logger) throws(DaemonError) {
        self.path = path
        self.logger = logger
        do {
            listener = try ControlListener.listen(at: path)
        } catch {
            throw .socket(error.description)
        }
    }

    /// The descriptors to poll: the listener, then each connection.
    var descriptors: [pollfd] {
        var list: [pollfd] = []
        if let listener { list.append(pollfd(fd: listener.rawValue, events: Int16(POLLIN), revents: 0)) }
        for fd in connections.keys.sorted() { list.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
        return list
    }

    /// Accepts new connections and reads the ready ones; returns the complete requests.
    func service(_ ready: ArraySlice<pollfd>) -> [Incoming] {
        var requests: [Incoming] = []
        for item in ready where item.revents != 0 {
            if item.fd == listener?.rawValue {
                acceptAll()
            } else if let connection = connections[item.fd] {
                requests += read(connection)
            }
        }
        return requests
    }

    private func acceptAll() {
        guard let listener else { return }
        while true {
            let fd = accept(listener.rawValue, nil, nil)
            guard fd >= 0 else { return }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            guard let peer = ControlListener.peer(of: FileDescriptor(rawValue: fd)) else {
                Glibc.close(fd)
                continue
            }
            // A client that stops reading must not stall the daemon for long.
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let connection = Connection(descriptor: fd, uid: peer.uid, pid: peer.pid)
            guard peer.uid == owner else {
                logger.warning(
                    "refused a control connection from uid \(peer.uid) (pid \(peer.pid)): only uid \(owner) may use this daemon"
                )
                send(
                    .failure(
                        id: nil, .permissionDenied,
                        "this daemon belongs to uid \(owner); uid \(peer.uid) may not control it"), on: connection)
                Glibc.close(fd)
                continue
            }
            connections[fd] = connection
        }
    }

    private func read(_ connection: Connection) -> [Incoming] {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var closed = false
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(connection.descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                connection.input.append(contentsOf: chunk[..<count])
                if connection.input.count > ControlProtocol.maximumLineBytes { break }
                continue
            }
            if count == 0 || (errno != EAGAIN && errno != EINTR) { closed = true }
            if count < 0 && errno == EINTR { continue }
            break
        }
        var requests: [Incoming] = []
        while let newline = connection.input.firstIndex(of: UInt8(ascii: "\n")) {
            let line = Array(connection.input[..<newline])
            connection.input.removeSubrange(...newline)
            if line.allSatisfy({ $0 == 32 || $0 == 13 || $0 == 9 }) { continue }
            requests.append(parse(line, connection: connection.descriptor))
        }
        if connection.input.count > ControlProtocol.maximumLineBytes {
            send(
                .failure(id: nil, .tooLarge, "a request line is longer than \(ControlProtocol.maximumLineBytes) bytes"),
                on: connection)
            drop(connection)
        } else if closed {
            drop(connection)
        }
        return requests
    }

    private func parse(_ line: [UInt8], connection: Int32) -> Incoming {
        do {
            let request = try ControlCoding.decode(ControlRequest.self, from: line)
            return Incoming(connection: connection, request: .success(request), id: request.id)
        } catch {
            let text = String(decoding: line.prefix(120), as: UTF8.self)
            return Incoming(
                connection: connection,
                request: .failure(
                    ControlErrorBody(
                        .badRequest,
                        "not a request: expected one JSON object per line with \"v\" and \"op\" (docs/control-protocol.md); got: \(text)"
                    )), id: nil)
        }
    }

    /// Writes a response; a client that went away is dropped.
    func reply(to descriptor: Int32, with response: ControlResponse) {
        guard let connection = connections[descriptor] else { return }
        if !send(response, on: connection) { drop(connection) }
    }

    @discardableResult
    private func send(_ response: ControlResponse, on connection: Connection) -> Bool {
        guard let bytes = try? ControlCoding.encode(response) else { return false }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.send(connection.descriptor, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                offset += written
                continue
            }
            if written < 0 && errno == EINTR { continue }
            if written < 0 && errno == EAGAIN {
                // Non-blocking socket with a full buffer: wait a little for the client to read.
                var item = pollfd(fd: connection.descriptor, events: Int16(POLLOUT), revents: 0)
                if poll(&item, 1, 2000) > 0 { continue }
            }
            return false
        }
        return true
    }

    private func drop(_ connection: Connection) {
        connections.removeValue(forKey: connection.descriptor)
        Glibc.close(connection.descriptor)
    }

    /// Stops accepting (shutdown); connections already open are still answered.
    func stopListening() {
        guard let listener else { return }
        try? listener.close()
        self.listener = nil
        unlink(path)
    }

    /// Closes everything and removes the socket file.
    func close() {
        stopListening()
        for connection in connections.values { Glibc.close(connection.descriptor) }
        connections.removeAll()
    }
}
