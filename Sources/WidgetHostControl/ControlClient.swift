/// A client of the daemon's control socket: sends requests, returns responses.
///
/// ```swift
/// var client = try ControlClient.connect()            // ControlPaths.socket
/// let response = try client.send(ControlRequest(.reload, kind: "org.example.weather", app: "weather"))
/// print(response.scheduled ?? [])
/// ```
public struct ControlClient: Sendable {
    public let path: String
    private var socket: LineSocket
    private var nextID = 1

    /// Connects to the daemon at `path` (default ``ControlPaths/socket``).
    public static func connect(to path: String = ControlPaths.socket) throws(ControlSocketError) -> ControlClient {
        ControlClient(path: path, socket: try LineSocket.connect(to: path))
    }

    private init(path: String, socket: LineSocket) {
        self.path = path
        self.socket = socket
    }

    /// Sends one request and waits for its response. A response with
    /// `ok == false` is returned, not thrown: its `error` says what was wrong.
    public mutating func send(_ request: ControlRequest) throws(ControlSocketError) -> ControlResponse {
        var request = request
        if request.id == nil {
            request.id = nextID
            nextID += 1
        }
        let bytes: [UInt8]
        do { bytes = try ControlCoding.encode(request) } catch { throw .malformedResponse("cannot encode: \(error)") }
        do {
            try socket.write(bytes)
        } catch {
            // A daemon that refuses a connection (another uid) answers and
            // closes before the request arrives: its answer is still readable.
            guard let line = try? socket.readLine(),
                let response = try? ControlCoding.decode(ControlResponse.self, from: line)
            else { throw error }
            return response
        }
        guard let line = try socket.readLine() else { throw .closed }
        do {
            return try ControlCoding.decode(ControlResponse.self, from: line)
        } catch {
            throw .malformedResponse(String(decoding: line.prefix(200), as: UTF8.self))
        }
    }

    /// Starts watching the daemon's events on this connection (which then
    /// carries events only): returns the first answer (``ControlResponse/watch``,
    /// or an error); read the events with ``nextLine()``.
    ///
    /// ```swift
    /// var client = try ControlClient.connect()
    /// let start = try client.watch(after: lastSeen)
    /// while let line = try client.nextLine(), let event = line.event { print(event.id, event.type) }
    /// ```
    public mutating func watch(after lastEventID: Int64? = nil, instances: [String]? = nil)
        throws(ControlSocketError) -> ControlResponse
    {
        var request = ControlRequest(.watch)
        request.lastEventId = lastEventID
        request.instances = instances
        return try send(request)
    }

    /// The next line the daemon sends (an event of a watch); nil when it closed the connection.
    public mutating func nextLine() throws(ControlSocketError) -> ControlResponse? {
        guard let line = try socket.readLine() else { return nil }
        do {
            return try ControlCoding.decode(ControlResponse.self, from: line)
        } catch {
            throw .malformedResponse(String(decoding: line.prefix(200), as: UTF8.self))
        }
    }

    public func close() { socket.close() }
}
