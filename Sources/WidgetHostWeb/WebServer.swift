import Hummingbird
import Logging
import NIOCore
import Synchronization

/// Where the web side listens, checked: loopback only unless the caller
/// says otherwise (`--http-allow-remote`), a port in 0...65535 (0: any free).
///
/// ```swift
/// let address = try WebAddress(parsing: "127.0.0.1:8765")
/// ```
public struct WebAddress: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    /// A typed refusal of an address.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
    }

    /// Names and addresses that are this machine only.
    public static let loopbackHosts: Set<String> = ["127.0.0.1", "localhost", "::1", "[::1]"]

    /// Checks `host` and `port`; a host outside loopback needs `allowRemote`.
    public init(host: String, port: Int, allowRemote: Bool = false) throws(Problem) {
        guard (0...65535).contains(port) else {
            throw Problem(description: "port: expected 0...65535 (0 picks a free one), found \(port)")
        }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        guard !bare.isEmpty else {
            throw Problem(description: "host: expected an address such as 127.0.0.1, found nothing")
        }
        guard allowRemote || Self.loopbackHosts.contains(bare.lowercased()) || bare.hasPrefix("127.") else {
            throw Problem(
                description:
                    "host: \(host) is reachable from other machines; the web side listens on loopback only "
                    + "(127.0.0.1) unless told otherwise (--http-allow-remote)")
        }
        self.host = bare
        self.port = port
    }

    /// Parses `HOST:PORT` (or `[IPv6]:PORT`, or a bare `PORT` on 127.0.0.1).
    public init(parsing text: String, allowRemote: Bool = false) throws(Problem) {
        if let port = Int(text) {
            try self.init(host: "127.0.0.1", port: port, allowRemote: allowRemote)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else {
            throw Problem(description: "address: expected HOST:PORT such as 127.0.0.1:8765, found '\(text)'")
        }
        try self.init(host: String(text[..<colon]), port: port, allowRemote: allowRemote)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// The web side's one HTTP server: a Hummingbird router behind
/// ``WebSecurity``'s middleware, bound to a checked ``WebAddress``. `preview`
/// adds its routes to it; the dashboard of `run --http` adds its own to the
/// same router, so there is one server, one renderer and one page shell.
///
/// ```swift
/// let server = WebServer(address: try WebAddress(parsing: "127.0.0.1:0"))
/// PreviewRoutes(session: session, security: server.security).add(to: server.router)
/// try await server.run { url in print("open \(url)") }
/// ```
public final class WebServer: @unchecked Sendable {
    // @unchecked: `router` (a Hummingbird class) gets its routes before
    // `run`, which builds the responder from it once; nothing writes it after.
    public let address: WebAddress
    public let security: WebSecurity
    /// Add routes here before ``run(onListening:)``.
    public let router: Router<BasicRequestContext>
    private let boundPort: SharedPort

    public init(address: WebAddress, security: WebSecurity = WebSecurity(token: WebSecurity.newToken())) {
        self.address = address
        var security = security
        if !WebAddress.loopbackHosts.contains(address.host) { security.extraHosts.append(address.description) }
        self.security = security
        self.boundPort = SharedPort(address.port)
        self.router = Router()
        let port = boundPort
        router.add(middleware: security.middleware(port: { port.withLock { $0 } }))
    }

    /// The port the server listens on (the real one once it runs, when 0 was asked).
    public var port: Int { boundPort.withLock { $0 } }

    /// Hummingbird's logger: warnings and errors only (the command prints
    /// where it listens itself).
    static let logger: Logger = {
        var logger = Logger(label: "widgethost.web")
        logger.logLevel = .warning
        return logger
    }()

    /// The URL to open, with the token (as Jupyter prints it).
    public var url: String { Self.url(host: address.host, port: port, token: security.token) }

    static func url(host: String, port: Int, token: String) -> String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return "http://\(shown):\(port)/?token=\(token)"
    }

    /// Serves until SIGINT or SIGTERM (a graceful shutdown: open requests
    /// finish, event streams end) or until the task is cancelled;
    /// `onListening` runs once the socket is bound, with ``url``.
    ///
    /// `handlesSignals`: whether SIGTERM and SIGINT stop the server
    /// gracefully (`widgethost preview`). The daemon passes `false`: it owns
    /// those signals (its signalfd) and stops the server itself; a second
    /// reader of them would take a SIGTERM meant for the daemon.
    public func run(
        handlesSignals: Bool = true, onListening: @escaping @Sendable (String) async -> Void = { _ in }
    ) async throws {
        let port = boundPort
        let host = address.host
        let token = security.token
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: address.port), serverName: "widgethost"),

            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? 0
                port.withLock { $0 = bound }
                await onListening(WebServer.url(host: host, port: bound, token: token))
            },
            logger: Self.logger)
        try await app.runService(gracefulShutdownSignals: handlesSignals ? [.sigterm, .sigint] : [])
    }
}

/// The port, shared with the middleware and learnt once the socket is bound.
final class SharedPort: Sendable {
    private let value: Mutex<Int>
    init(_ port: Int) { value = Mutex(port) }
    func withLock<T: Sendable>(_ body: (inout Int) -> T) -> T { value.withLock { body(&$0) } }
}
