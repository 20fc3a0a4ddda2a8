import HTTPTypes
import Hummingbird
import WidgetHostModel

/// The page shell's security: the token a mutating request must carry, the
/// CSRF and DNS-rebinding checks, and the headers every response gets.
///
/// - Every request's `Host` must be one of the names the server answers to
///   (its bind address, `localhost`, `127.0.0.1`, `[::1]`, with its port):
///   a page on another site that rebinds its DNS name to 127.0.0.1 gets 421.
/// - A mutating request (POST, PUT, PATCH, DELETE) needs the token printed at
///   start in `X-Widgethost-Token` (as Jupyter prints its token), and, when
///   the browser says where it comes from (`Origin`, `Sec-Fetch-Site`), to
///   come from this server's own origin. A custom header cannot be sent
///   cross-origin without a CORS preflight, which this server never grants:
///   the token check is also the CSRF check, and the origin check a second one.
///   The one exception is `POST /push/KIND` (``pushPathPrefix``): a server
///   behind the widgets holds the kind's push token, not the page's, so the
///   route checks that token itself; the Host and origin checks still apply.
/// - Every response carries the Content-Security-Policy (script only with
///   the response's nonce, no network but this server, no framing), plus
///   `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer` and
///   `Cache-Control: no-store`.
///
/// ```swift
/// let security = WebSecurity(token: WebSecurity.newToken())
/// router.add(middleware: security.middleware(port: 8765))
/// ```
public struct WebSecurity: Sendable {
    /// The secret a mutating request carries in ``tokenHeader``.
    public let token: String
    /// Extra host names the server answers to (a non-loopback bind address).
    public var extraHosts: [String]

    /// The request header that carries the token.
    public static let tokenHeader = "X-Widgethost-Token"

    /// Where pushes arrive (`POST /push/KIND`), authenticated by the kind's
    /// push token instead of the page's token.
    public static let pushPathPrefix = "/push/"

    public init(token: String, extraHosts: [String] = []) {
        self.token = token
        self.extraHosts = extraHosts
    }

    /// 32 random bytes as hex, from the system's random source.
    public static func newToken() -> String { SecretToken.random(bytes: 32) }

    /// A fresh nonce for one response's own script and style.
    public static func newNonce() -> String { SecretToken.random(bytes: 16) }

    /// The page's Content-Security-Policy: nothing by default; its own
    /// script by nonce; inline style (the widget frames inherit this policy
    /// and their templates' `<style>` needs it); images only as `data:`;
    /// connections to this server (the live events) or none (`static`).
    public static func pagePolicy(nonce: String, static isStatic: Bool = false) -> String {
        [
            "default-src 'none'",
            "script-src 'nonce-\(nonce)'",
            "style-src 'unsafe-inline'",
            "img-src data:",
            "font-src data:",
            "connect-src \(isStatic ? "'none'" : "'self'")",
            "frame-src 'self'",
            "base-uri 'none'",
            "form-action 'none'",
        ].joined(separator: "; ") + (isStatic ? "" : "; frame-ancestors 'none'")
    }

    /// Why a request is refused, or nil when it may go on.
    public func refusal(
        method: HTTPRequest.Method, path: String = "/", host: String?, origin: String?, fetchSite: String?,
        token presented: String?, port: Int
    ) -> Refusal? {
        let allowed = (["127.0.0.1", "localhost", "[::1]"] + extraHosts).map { "\($0):\(port)" }
        guard let host, allowed.contains(host.lowercased()) else {
            return Refusal(
                status: .misdirectedRequest, message: "this server answers to \(allowed.joined(separator: ", ")) only")
        }
        let mutating: Set<HTTPRequest.Method> = [.post, .put, .patch, .delete]
        guard mutating.contains(method) else { return nil }
        let push = method == .post && path.hasPrefix(Self.pushPathPrefix)
        guard push || presented.map({ Self.constantTimeEqual($0, token) }) == true else {
            return Refusal(
                status: .forbidden,
                message: "a \(method.rawValue) needs the token printed at start in the \(Self.tokenHeader) header")
        }
        if let origin, !allowed.contains(where: { origin.lowercased() == "http://\($0)" }) {
            return Refusal(status: .forbidden, message: "cross-origin request refused (Origin \(origin))")
        }
        if let fetchSite, fetchSite != "same-origin", fetchSite != "none" {
            return Refusal(status: .forbidden, message: "cross-site request refused (Sec-Fetch-Site \(fetchSite))")
        }
        return nil
    }

    /// A refused request: its status and a message for the client.
    public struct Refusal: Sendable, Hashable {
        public var status: HTTPResponse.Status
        public var message: String
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool { SecretToken.matches(a, b) }

    /// The middleware that applies ``refusal(method:path:host:origin:fetchSite:token:port:)``
    /// and adds the common headers. `port` is read when a request arrives (a
    /// server bound to port 0 learns its port once it runs).
    public func middleware<Context: RequestContext>(port: @escaping @Sendable () -> Int) -> SecurityMiddleware<Context>
    {
        SecurityMiddleware(security: self, port: port)
    }
}

/// ``WebSecurity`` as a Hummingbird middleware.
public struct SecurityMiddleware<Context: RequestContext>: RouterMiddleware {
    let security: WebSecurity
    let port: @Sendable () -> Int

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let fields = request.headers
        if let refusal = security.refusal(
            method: request.method, path: request.uri.path, host: request.head.authority, origin: fields[.origin],
            fetchSite: fields[HTTPField.Name("Sec-Fetch-Site")!],
            token: fields[HTTPField.Name(WebSecurity.tokenHeader)!], port: port())
        {
            var response = Response(
                status: refusal.status, headers: [.contentType: "text/plain; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: refusal.message + "\n")))
            Self.addCommonHeaders(&response, nonce: WebSecurity.newNonce())
            return response
        }
        var response = try await next(request, context)
        if response.headers[.contentSecurityPolicy] == nil {
            Self.addCommonHeaders(&response, nonce: WebSecurity.newNonce())
        }
        return response
    }

    static func addCommonHeaders(_ response: inout Response, nonce: String) {
        response.headers[.contentSecurityPolicy] = WebSecurity.pagePolicy(nonce: nonce)
        response.headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        response.headers[.cacheControl] = "no-store"
    }
}

extension Response {
    /// An HTML page whose own script and style carry `nonce`, with the page
    /// policy for that nonce.
    public static func page(_ html: String, nonce: String) -> Response {
        var response = Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
        SecurityMiddleware<BasicRequestContext>.addCommonHeaders(&response, nonce: nonce)
        return response
    }
}
