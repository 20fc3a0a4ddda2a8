import CWidgetHostSupport
import Logging
import SystemPackage
import WidgetHostControl
import WidgetHostModel

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's end of the control socket: accepts connections from the
/// daemon's own user only, splits their input into request lines, and
/// queues responses. Driven by the daemon's poll loop; never blocks it:
///
/// - every socket is non-blocking; a response goes to the connection's
///   write buffer and out as the client reads. A client that stops reading
///   is dropped once its buffer holds more than ``Limits/outputBytes`` or
///   nothing has drained for ``Limits/stallSeconds``.
/// - at most ``Limits/connections`` connections; one more is accepted,
///   told `too-many-connections`, and closed. Lowering the limit (SIGHUP)
///   closes no connection: it refuses new ones until fewer are open.
/// - a client that sends part of a request line and no newline for
///   ``Limits/incompleteLineSeconds`` is told `request-timeout` and closed
///   (the loop's poll wakes for that deadline only while such a line is
///   pending: an idle connection holding nothing is kept, at no cost).
/// - a last request line ended by the end of input instead of a newline
///   (the client shut down writing) is answered as a complete line.
/// - when `accept` fails for lack of descriptors (EMFILE, ENFILE), a spare
///   descriptor is given up to accept and refuse the waiting client, and
///   the listener is left alone for a growing pause (10 ms to 1 s): no
///   spinning, one log line per episode.
final class ControlServer {
    /// The server's limits.
    struct Limits: Sendable {
        /// Connections held at once.
        var connections: Int
        /// Bytes queued for a client that does not read before it is dropped.
        var outputBytes = 16 << 20
        /// Seconds a client may leave queued output undrained.
        var stallSeconds = 10.0
        /// Seconds a client may hold part of a request line (bytes and no
        /// newline yet) while the daemon waits for the rest, before it is
        /// answered `request-timeout` and closed (`"daemon":
        /// {"requestLineTimeout"}`).
        var incompleteLineSeconds = 30.0
    }

    let path: String
    let logger: Logger
    var limits: Limits
    /// The connection limit when the configuration sets none (from the
    /// descriptor limit at start).
    let automaticConnections: Int
    private var listener: FileDescriptor?
    private var connections: [Int32: Connection] = [:]
    private let owner = geteuid()
    /// A descriptor kept open to be given up when the process runs out.
    private var spare: Int32 = -1
    /// Accepting is paused until this monotonic time (descriptors ran out).
    private var acceptPausedUntil: Double?
    private var acceptPause = 0.01
    /// Peers refused since the last log line (to log a burst once).
    private var refusedSinceLog = 0
    /// The connections that watch (``deliverWatchEvents()`` visits only these).
    private var watching: Set<Int32> = []

    final class Connection {
        let descriptor: Int32
        let uid: uid_t
        let pid: pid_t
        var input: [UInt8] = []
        /// Where the part of `input` not yet parsed starts.
        var parsed = 0
        /// `input` holds a complete line not yet parsed.
        var hasCompleteLine = false
        /// Since when (monotonic) the server has been waiting for the end of
        /// the request line whose start `input` holds; nil when it holds no
        /// part of a line, or is not waiting for one (complete lines to
        /// parse first).
        var lineStarted: Double?
        /// The client ended its input (or it broke): closed once the lines
        /// it sent are answered.
        var ended = false
        var output: [UInt8] = []
        var written = 0
        /// When queued output last moved (monotonic), while there is some.
        var lastDrained: Double = 0
        /// The client ended its input: closed once its answers are out.
        var closing = false
        /// After `watch`: the events this connection streams, and the request's id and version.
        var watch: (subscription: EventSubscription, id: Int?, version: Int)?
        init(descriptor: Int32, uid: uid_t, pid: pid_t) {
            self.descriptor = descriptor
            self.uid = uid
            self.pid = pid
        }
        var pending: Int { output.count - written }
    }

    /// A parsed request and the connection to answer on.
    struct Incoming {
        var connection: Int32
        var request: Result<ControlRequest, ControlErrorBody>
        var id: Int?
    }

    init(path: String, limits: Limits, logger: Logger) throws(DaemonError) {
        self.path = path
        self.logger = logger
        self.limits = limits
        self.automaticConnections = limits.connections
        do {
            listener = try ControlListener.listen(at: path)
        } catch {
            if case .system(_, _, EADDRINUSE) = error { throw .socketInUse(error.description) }
            throw .socket(error.description)
        }
        spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
    }

    /// How many connections are open.
    var connectionCount: Int { connections.count }

    /// Applies the daemon settings of a configuration (at start and at
    /// SIGHUP): the connection limit (the automatic one when it sets none)
    /// and the request-line timeout. A lower limit closes nothing: new
    /// connections are refused until fewer than it are open.
    func configure(_ settings: DaemonConfiguration.Settings) {
        limits.connections = settings.maximumConnections ?? automaticConnections
        limits.incompleteLineSeconds = settings.requestLineTimeout
    }

    /// The descriptors to poll: the listener (unless accepting is paused),
    /// then each connection (for output too when it has some queued).
    var descriptors: [pollfd] {
        var list: [pollfd] = []
        if let listener, acceptPausedUntil == nil {
            list.append(pollfd(fd: listener.rawValue, events: Int16(POLLIN), revents: 0))
        }
        for (fd, connection) in connections {
            let events = (wantsInput(connection) ? Int16(POLLIN) : 0) | (connection.pending > 0 ? Int16(POLLOUT) : 0)
            list.append(pollfd(fd: fd, events: events, revents: 0))
        }
        return list
    }

    /// Requests parsed from one connection in one turn of the loop: a
    /// client that sends many lines at once (a pipelining one, or one that
    /// floods) is served a few at a time, between the loop's other work.
    static let requestsPerTurn = 16
    /// Unread answers past which a connection's next requests wait, unread
    /// in the socket: a client that does not read its answers is not
    /// answered further, and the kernel's buffers hold it back.
    static let answerBacklogBytes = 256 << 10

    /// Whether the connection is read: not while it has lines to parse or
    /// answers it has not read (their requests wait in the socket).
    private func wantsInput(_ connection: Connection) -> Bool {
        !connection.closing && !connection.ended && !connection.hasCompleteLine
            && connection.pending <= Self.answerBacklogBytes
    }

    /// Whether the server is waiting for the end of a request line the
    /// connection began (the line's deadline runs only then).
    private func waitsForEndOfLine(_ connection: Connection) -> Bool {
        connection.lineStarted != nil && wantsInput(connection)
    }

    /// Whether the connection has requests the loop can take now.
    private func hasRequestsReady(_ connection: Connection) -> Bool {
        !connection.closing && connection.hasCompleteLine && connection.pending <= Self.answerBacklogBytes
    }

    /// Milliseconds until the server needs the loop again without an event
    /// (the end of an accept pause, a stalled client's deadline, the
    /// deadline of a partial request line); nil when never.
    var acceptPauseTimeout: Int32? {
        let now = wh_monotonic_seconds()
        var deadlines: [Double] = []
        if let until = acceptPausedUntil { deadlines.append(until) }
        if let stalled = connections.values.filter({ $0.pending > 0 }).map(\.lastDrained).min() {
            deadlines.append(stalled + limits.stallSeconds)
        }
        if let started = connections.values.filter(waitsForEndOfLine).compactMap(\.lineStarted).min() {
            deadlines.append(started + limits.incompleteLineSeconds)
        }
        // Lines already read wait for the next turn: no sleep.
        if connections.values.contains(where: hasRequestsReady) { deadlines.append(now) }
        guard let next = deadlines.min() else { return nil }
        return Int32(max(0, min(60_000, (next - now) * 1000)).rounded(.up))
    }

    /// Accepts new connections, writes queued output, reads the ready
    /// connections; returns the complete requests.
    func service(_ ready: ArraySlice<pollfd>) -> [Incoming] {
        let now = wh_monotonic_seconds()
        if let until = acceptPausedUntil, now >= until { acceptPausedUntil = nil }
        var requests: [Incoming] = []
        for item in ready where item.revents != 0 {
            if item.fd == listener?.rawValue {
                acceptAll()
            } else if let connection = connections[item.fd] {
                if item.revents & Int16(POLLOUT) != 0 && !flush(connection) { continue }
                if connection.closing { continue }
                if item.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { receive(connection) }
            }
        }
        for connection in connections.values where waitsForEndOfLine(connection) {
            if let started = connection.lineStarted, now - started >= limits.incompleteLineSeconds {
                timeOutLine(of: connection)
            }
        }
        for connection in connections.values where !connection.closing {
            if hasRequestsReady(connection) { requests += take(connection) }
            if connection.ended && !connection.hasCompleteLine {
                // Answer what was asked before the end of input, then close (``reapClosing()``).
                connection.closing = true
            }
        }
        for connection in connections.values
        where connection.pending > 0 && now - connection.lastDrained > limits.stallSeconds {
            logger.warning(
                "dropped the control client pid \(connection.pid): it left \(connection.pending) bytes of answers unread for \(Int(limits.stallSeconds)) s"
            )
            drop(connection)
        }
        return requests
    }

    private func acceptAll() {
        guard let listener else { return }
        while true {
            let fd = Self.accept(listener)
            guard fd >= 0 else {
                let code = errno
                if code == EMFILE || code == ENFILE { outOfDescriptors(code) }
                return  // EAGAIN: nothing more waiting; other errors concern that one client
            }
            if acceptPause > 0.01 {
                logger.notice("descriptors available again: accepting control connections")
                acceptPause = 0.01
            }
            guard let peer = ControlListener.peer(of: FileDescriptor(rawValue: fd)) else {
                Glibc.close(fd)
                continue
            }
            let connection = Connection(descriptor: fd, uid: peer.uid, pid: peer.pid)
            guard peer.uid == owner else {
                logger.warning(
                    "refused a control connection from uid \(peer.uid) (pid \(peer.pid)): only uid \(owner) may use this daemon"
                )
                refuse(
                    connection, .permissionDenied,
                    "this daemon belongs to uid \(owner); uid \(peer.uid) may not control it")
                continue
            }
            if let reason = PeerCheck.refusal(pid: peer.pid) {
                logger.warning("refused a control connection from pid \(peer.pid): \(reason)")
                refuse(
                    connection, .permissionDenied,
                    "control connections from inside a plugin sandbox are refused: \(reason)")
                continue
            }
            guard connections.count < limits.connections else {
                refusedSinceLog += 1
                if refusedSinceLog == 1 {
                    logger.warning(
                        "refused a control connection (pid \(peer.pid)): \(connections.count) are open, the most this daemon takes (\"daemon\": {\"maximumConnections\"})"
                    )
                }
                refuse(
                    connection, .tooManyConnections,
                    "the daemon holds \(connections.count) connections, the most it takes; close one or retry later")
                continue
            }
            if refusedSinceLog > 1 {
                logger.notice("accepting control connections again (\(refusedSinceLog) refused at the limit)")
            }
            refusedSinceLog = 0
            connections[fd] = connection
        }
    }

    /// EMFILE/ENFILE: refuse the waiting client with the spare descriptor,
    /// and pause accepting (10 ms doubling to 1 s) instead of spinning on a
    /// listener that stays readable.
    private func outOfDescriptors(_ code: Int32) {
        if acceptPause <= 0.01 {
            logger.error(
                "out of file descriptors (\(String(cString: strerror(code))), \(connections.count) control connections open): not accepting for a moment; raise LimitNOFILE or lower \"maximumConnections\""
            )
        }
        if spare >= 0, let listener {
            Glibc.close(spare)
            spare = -1
            let fd = Self.accept(listener)
            if fd >= 0 {
                refuse(
                    Connection(descriptor: fd, uid: 0, pid: 0), .tooManyConnections,
                    "the daemon is out of file descriptors; retry later")
            }
            spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
        }
        acceptPausedUntil = wh_monotonic_seconds() + acceptPause
        acceptPause = min(1, acceptPause * 2)
    }

    /// `accept(2)`, the descriptor made close-on-exec and non-blocking.
    private static func accept(_ listener: FileDescriptor) -> Int32 {
        let fd = Glibc.accept(listener.rawValue, nil, nil)
        if fd >= 0 {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        return fd
    }

    /// Sends one error (best effort, never waiting) and closes.
    private func refuse(_ connection: Connection, _ code: ControlErrorCode, _ message: String) {
        if let bytes = try? ControlCoding.encode(ControlResponse.failure(id: nil, code, message)) {
            _ = bytes.withUnsafeBytes {
                Glibc.send(connection.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
        }
        Glibc.close(connection.descriptor)
    }

    /// Reads what the connection sent, up to a line of
    /// ``ControlProtocol/maximumLineBytes``; a longer line is refused and
    /// the connection ends. A last line ended by the end of input instead
    /// of a newline is taken as complete.
    private func receive(_ connection: Connection) {
        guard !connection.ended, !connection.hasCompleteLine else { return }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var endOfInput = false
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(connection.descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                connection.input.append(contentsOf: chunk[..<count])
                if chunk[..<count].contains(UInt8(ascii: "\n")) { connection.hasCompleteLine = true }
                if connection.hasCompleteLine || connection.input.count > ControlProtocol.maximumLineBytes { break }
                continue
            }
            if count < 0 && errno == EINTR { continue }
            if count == 0 || errno != EAGAIN { connection.ended = true }
            endOfInput = count == 0
            break
        }
        if !connection.hasCompleteLine && connection.input.count - connection.parsed > ControlProtocol.maximumLineBytes
        {
            reply(
                to: connection.descriptor,
                with: .failure(
                    id: nil, .tooLarge, "a request line is longer than \(ControlProtocol.maximumLineBytes) bytes"))
            connection.input = []
            connection.parsed = 0
            connection.ended = true
        }
        if endOfInput && !connection.hasCompleteLine && connection.input.count > connection.parsed {
            // `shutdown(SHUT_WR)` after a last line without its newline: that line is complete.
            connection.input.append(UInt8(ascii: "\n"))
            connection.hasCompleteLine = true
        }
        if connection.ended || connection.hasCompleteLine {
            connection.lineStarted = nil
        } else if connection.input.count > connection.parsed && connection.lineStarted == nil {
            connection.lineStarted = wh_monotonic_seconds()
        }
    }

    /// A request line begun and not ended within ``Limits/incompleteLineSeconds``:
    /// answered `request-timeout`; the connection closes once that is out.
    private func timeOutLine(of connection: Connection) {
        let held = connection.input.count - connection.parsed
        let seconds = Timestamp.duration(limits.incompleteLineSeconds)
        logger.warning(
            "closing the control connection of pid \(connection.pid): it sent \(held) bytes of a request line and no newline for \(seconds)"
        )
        reply(
            to: connection.descriptor,
            with: .failure(
                id: nil, .requestTimeout,
                "the request line was not finished: \(held) bytes and no newline for \(seconds); end every request with \"\\n\" (docs/control-protocol.md). Closing the connection"
            ))
        connection.input = []
        connection.parsed = 0
        connection.lineStarted = nil
        connection.ended = true
    }

    /// Parses up to ``requestsPerTurn`` of the lines read.
    private func take(_ connection: Connection) -> [Incoming] {
        var requests: [Incoming] = []
        var start = connection.parsed
        while requests.count < Self.requestsPerTurn,
            let newline = connection.input[start...].firstIndex(of: UInt8(ascii: "\n"))
        {
            let line = connection.input[start..<newline]
            start = newline + 1
            if line.allSatisfy({ $0 == 32 || $0 == 13 || $0 == 9 }) { continue }
            requests.append(Self.parse(Array(line), connection: connection.descriptor))
        }
        connection.parsed = start
        connection.hasCompleteLine = connection.input[start...].contains(UInt8(ascii: "\n"))
        // The start of a line read with complete ones: its wait begins now.
        connection.lineStarted =
            !connection.hasCompleteLine && connection.input.count > start ? wh_monotonic_seconds() : nil
        // What was parsed is let go once it is most of the buffer (not at
        // every turn: a long burst would be moved again and again).
        if !connection.hasCompleteLine || start > connection.input.count / 2 {
            connection.input.removeSubrange(..<start)
            connection.parsed = 0
        }
        return requests
    }

    /// Closes the connections whose client ended its input, once their answers are out.
    func reapClosing() {
        for connection in connections.values where connection.closing && connection.pending == 0 { drop(connection) }
    }

    /// Decodes one request line (the control-protocol decoder, also fuzzed).
    static func parse(_ line: [UInt8], connection: Int32) -> Incoming {
        do {
            let request = try ControlCoding.decode(ControlRequest.self, from: line)
            return Incoming(connection: connection, request: .success(request), id: request.id)
        } catch {
            let text = String(decoding: line.prefix(120), as: UTF8.self)
            let reason = error is JSONNesting.TooDeep ? " (\(error))" : ""
            return Incoming(
                connection: connection,
                request: .failure(
                    ControlErrorBody(
                        .badRequest,
                        "not a request: expected one JSON object per line with \"v\" and \"op\" (docs/control-protocol.md); got: \(text)\(reason)"
                    )), id: nil)
        }
    }

    /// Queues a response and writes what the socket takes now. A client
    /// whose unread answers pass ``Limits/outputBytes`` is dropped.
    func reply(to descriptor: Int32, with response: ControlResponse) {
        guard let connection = connections[descriptor] else { return }
        let bytes: [UInt8]
        do {
            bytes = try ControlCoding.encode(response)
        } catch {
            logger.error("could not encode a response: \(error)")
            return
        }
        if connection.pending == 0 {
            connection.output = bytes
            connection.written = 0
            connection.lastDrained = wh_monotonic_seconds()
        } else {
            connection.output += bytes
        }
        guard flush(connection) else { return }
        if connection.pending > limits.outputBytes {
            logger.warning(
                "dropped the control client pid \(connection.pid): \(connection.pending) bytes of answers unread (limit \(limits.outputBytes))"
            )
            drop(connection)
        }
    }

    /// Writes queued output until the socket would block; false when the
    /// client went away (it is dropped).
    private func flush(_ connection: Connection) -> Bool {
        while connection.pending > 0 {
            let written = connection.output.withUnsafeBytes {
                Glibc.send(
                    connection.descriptor, $0.baseAddress! + connection.written, connection.pending,
                    Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if written > 0 {
                connection.written += written
                connection.lastDrained = wh_monotonic_seconds()
                continue
            }
            if written < 0 && errno == EINTR { continue }
            if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return true }
            drop(connection)
            return false
        }
        connection.output = []
        connection.written = 0
        return true
    }

    private func drop(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.descriptor) != nil else { return }
        watching.remove(connection.descriptor)
        connection.watch?.subscription.cancel()
        Glibc.close(connection.descriptor)
    }

    // MARK: Watch

    /// Output a watching connection may hold before its events wait in its
    /// subscription instead (which ends it when too many wait).
    static let watchOutputBytes = 256 << 10

    /// Makes the connection stream `subscription`'s events (after the
    /// answer already queued). False when the connection is gone.
    func watch(_ descriptor: Int32, _ subscription: EventSubscription, id: Int?, version: Int) -> Bool {
        guard let connection = connections[descriptor] else { return false }
        connection.watch = (subscription, id, version)
        watching.insert(descriptor)
        return true
    }

    /// Whether the connection streams events (it takes no more requests).
    func isWatching(_ descriptor: Int32) -> Bool { connections[descriptor]?.watch != nil }

    /// Watching connections.
    var watcherCount: Int { watching.count }

    /// Moves the waiting events of each watching connection to its output,
    /// while that holds less than ``watchOutputBytes``: never blocks, never
    /// buffers more for a client that does not read (its events wait in its
    /// subscription, bounded, and its output's stall limit applies). A
    /// subscription that ended gets a last error line, then the connection closes.
    func deliverWatchEvents() {
        for descriptor in watching {
            guard let connection = connections[descriptor], let watch = connection.watch, !connection.closing else {
                continue
            }
            while connection.pending < Self.watchOutputBytes {
                let events = watch.subscription.take(limit: 256)
                if events.isEmpty { break }
                var bytes: [UInt8] = []
                for event in events {
                    var line = ControlResponse(id: watch.id)
                    line.v = watch.version
                    line.event = event
                    if let encoded = try? ControlCoding.encode(line) { bytes += encoded }
                }
                if connection.pending == 0 {
                    connection.output = bytes
                    connection.written = 0
                    connection.lastDrained = wh_monotonic_seconds()
                } else {
                    connection.output += bytes
                }
                guard flush(connection) else { break }
            }
            guard connections[connection.descriptor] != nil, let ended = watch.subscription.ended else { continue }
            let message: String
            switch ended {
            case .overflow:
                message =
                    "the watch fell more than \(watch.subscription.maximumQueued) events behind and was ended; reconnect with the last id seen"
                logger.warning("ended the watch of the control client pid \(connection.pid): it fell behind")
            case .cancelled: message = "the watch was ended"
            case .storage(let detail): message = "the event log cannot be read (\(detail)); reconnect later"
            }
            var line = ControlResponse.failure(id: watch.id, .internalError, message)
            line.v = watch.version
            reply(to: connection.descriptor, with: line)
            connection.closing = true
        }
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
        for connection in connections.values {
            _ = flush(connection)
            connection.watch?.subscription.cancel()
            Glibc.close(connection.descriptor)
        }
        connections.removeAll()
        watching.removeAll()
        if spare >= 0 { Glibc.close(spare) }
        spare = -1
    }
}
