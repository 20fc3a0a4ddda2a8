import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle

/// The preview's state behind the routes: the latest document (or why there
/// is none), its generation, and the pages listening for changes.
public actor PreviewState {
    public private(set) var document: Result<PreviewDocument, PreviewProblem>?
    /// Goes up by one each time the preview is built again.
    public private(set) var generation = 0
    private var listeners: [Int: AsyncStream<Int>.Continuation] = [:]
    private var nextListener = 0

    public init() {}

    /// Keeps `document` as generation + 1 and tells every listening page.
    public func publish(_ document: Result<PreviewDocument, PreviewProblem>) {
        self.document = document
        generation += 1
        for listener in listeners.values { listener.yield(generation) }
    }

    /// A stream of generations from now on (a page's `/events`).
    func listen() -> (id: Int, stream: AsyncStream<Int>) {
        let (stream, continuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingNewest(4))
        nextListener += 1
        listeners[nextListener] = continuation
        return (nextListener, stream)
    }

    func stopListening(_ id: Int) {
        listeners.removeValue(forKey: id)?.finish()
    }

    /// Pages listening now.
    public var listenerCount: Int { listeners.count }
}

/// `widgethost preview`'s routes on the ``WebServer``'s router:
///
/// - `GET /`: the page (``PreviewPage``), with a fresh script nonce;
/// - `GET /events`: server-sent events, `event: reload` with the new
///   generation as its id whenever the preview was built again (a page that
///   reconnects with an older `Last-Event-ID` is told at once);
/// - `POST /api/reload`: make the calls again (needs the token);
/// - `GET /healthz`: `ok` and the generation.
public struct PreviewRoutes: Sendable {
    public let session: PreviewSession
    public let state: PreviewState
    public let page: PreviewPage

    public init(session: PreviewSession, state: PreviewState, page: PreviewPage = PreviewPage()) {
        self.session = session
        self.state = state
        self.page = page
    }

    /// Builds the preview again and publishes it.
    public func rebuild() async {
        do {
            await state.publish(.success(try await session.build()))
        } catch {
            await state.publish(.failure(error))
        }
    }

    /// Adds the routes to `router`.
    public func add(to router: Router<BasicRequestContext>) {
        let state = self.state
        let page = self.page
        router.get("/") { _, _ -> Response in
            let nonce = WebSecurity.newNonce()
            switch await state.document {
            case .success(let document)?:
                return .page(page.html(document, nonce: nonce, delivery: .live), nonce: nonce)
            case .failure(let problem)?:
                return .page(Self.problemPage(problem.description, nonce: nonce), nonce: nonce)
            case nil:
                return .page(Self.problemPage("the preview is being built", nonce: nonce), nonce: nonce)
            }
        }
        router.get("/healthz") { _, _ -> String in "ok \(await state.generation)\n" }
        router.post("/api/reload") { _, _ -> Response in
            await rebuild()
            let generation = await state.generation
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "{\"generation\":\(generation)}\n")))
        }
        router.get("/events") { request, _ -> Response in
            let lastSeen = request.headers[HTTPField.Name("Last-Event-ID")!].flatMap { Int($0) }
            let (id, stream) = await state.listen()
            let current = await state.generation
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: "retry: 1000\n: generation \(current)\n\n"))
                    if let lastSeen, lastSeen < current {
                        try await writer.write(ByteBuffer(string: Self.event(current)))
                    }
                    // A graceful shutdown (SIGINT, SIGTERM) ends the stream, so
                    // the server does not wait for pages that never leave.
                    await withGracefulShutdownHandler {
                        for await generation in stream {
                            do {
                                try await writer.write(ByteBuffer(string: Self.event(generation)))
                            } catch {
                                break
                            }
                        }
                    } onGracefulShutdown: {
                        Task { await state.stopListening(id) }
                    }
                    await state.stopListening(id)
                    try await writer.finish(nil)
                })
        }
    }

    static func event(_ generation: Int) -> String { "id: \(generation)\nevent: reload\ndata: \(generation)\n\n" }

    static func problemPage(_ message: String, nonce: String) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Preview</title></head>
        <body><h1>No preview</h1><pre class="problem">\(HTMLText.escape(message))</pre>
        <script nonce="\(nonce)">new EventSource('/events').addEventListener('reload', () => location.reload());</script>
        </body></html>
        """
    }

    /// Watches the plugin's file: when its stamp changes and then holds
    /// still for one more poll (a linker writing it), builds the preview
    /// again and tells the pages. Runs until the task is cancelled.
    public func watch(path: String, every interval: Duration = .milliseconds(250)) async {
        var settled = FileStamp.of(path: path)
        var seen = settled
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            let now = FileStamp.of(path: path)
            defer { seen = now }
            guard let now, now != settled, now == seen else { continue }
            settled = now
            await rebuild()
        }
    }
}
