import ArgumentParser
import Dispatch
import WidgetHostIsolation
import WidgetHostModel
import WidgetHostWeb

#if canImport(Glibc)
    import Glibc
#endif

/// `widgethost preview PLUGIN.so`: every kind × family of one plugin drawn
/// in a browser (Xcode's widget previews for widgethost plugins).
struct PreviewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview",
        abstract: "Draw every kind and family of a plugin in the browser: placeholder, snapshot, timeline.",
        discussion: """
            Calls the plugin (through the same isolated workers as every other command) for
            each kind and family: placeholder, snapshot (as in the gallery) and timeline, and
            serves a page on 127.0.0.1 that draws each entry at its family's size through the
            kind's template (or a generic card), with a scrubber over the timeline's dates.
            The URL it prints carries a token; requests that change something need it.

            --watch calls the plugin again and reloads the page whenever the .so changes
            (rebuild it and look). --html FILE writes one self-contained page instead of
            serving (no network at view time) and exits.

            Exit status: 0 served until interrupted or the page was written, 1 the plugin did
            not load, 2 a usage error (unknown kind or family, bad --config, address not on
            loopback without --allow-remote), 3 a host fault (the port is taken, the file
            cannot be written).

            Examples:
              widgethost preview .build/debug/libCountdownPlugin.so --watch
              widgethost preview samples/c/moonphase.so --family systemSmall --port 8766
              widgethost preview my.so --html preview.html
            """
    )

    @Argument(help: ArgumentHelp("The plugin's shared object.", valueName: "plugin.so"))
    var plugin: String

    @Option(help: ArgumentHelp("Only this kind (default: every kind).", valueName: "id"))
    var kind: String?

    @Option(name: .customLong("family"), help: ArgumentHelp("Only this family.", valueName: "family"))
    var familyArgument: FamilyArgument?

    @Option(help: ArgumentHelp("The port to serve on (0: any free one, printed).", valueName: "port"))
    var port: Int = 8765

    @Option(help: ArgumentHelp("The address to listen on (loopback unless --allow-remote).", valueName: "host"))
    var host: String = "127.0.0.1"

    @Flag(help: "Allow a --host other machines can reach (the token still guards changes).")
    var allowRemote = false

    @Option(help: ArgumentHelp("Write one self-contained page to this file and exit.", valueName: "file"))
    var html: String?

    @Flag(help: "Call the plugin again and reload the page when the .so changes.")
    var watch = false

    @Option(help: ArgumentHelp("The instance configuration, a JSON object of parameter values.", valueName: "json"))
    var config: String?

    @Option(
        help: ArgumentHelp(
            "The locale passed to the plugin: a BCP 47 tag (en-US) or a POSIX name (en_US.UTF-8).",
            valueName: "locale"))
    var locale = "en-US"

    @Option(
        help: ArgumentHelp(
            "The plugin's data directory (default: a new temporary one, removed at exit).", valueName: "path"))
    var dataDir: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The time the plugin sees as now: ISO 8601, seconds since the epoch, or an offset such as +1h (default: the real time at each build).",
            valueName: "time"))
    var now: TimeArgument?

    func validate() throws {
        if html != nil && watch {
            throw ValidationError("--watch serves a page; --html writes one and exits: pick one")
        }
        try LocaleCheck.validate(locale)
    }

    func run() throws {
        let address: WebAddress
        do {
            address = try WebAddress(host: host, port: port, allowRemote: allowRemote)
        } catch {
            throw UsageError("--host/--port: \(error)")
        }
        let pluginPath = IsolatedRunnerPath.absolute(plugin)
        guard access(pluginPath, R_OK) == 0 else {
            throw UsageError("\(pluginPath): no such readable file; pass the plugin's .so")
        }
        let temporaryRoot = dataDir == nil ? DataDirectory.makeTemporary() : nil
        if dataDir == nil && temporaryRoot == nil {
            throw HostFault("cannot create a temporary data directory under $TMPDIR or /tmp; pass --data-dir")
        }
        defer { if let temporaryRoot { DataDirectory.removeTree(temporaryRoot) } }
        let directory =
            dataDir.map(IsolatedRunnerPath.absolute)
            ?? DataDirectory.defaultPath(forPlugin: pluginPath, root: temporaryRoot)
        let request = PreviewRequest(
            kind: kind, family: familyArgument?.family, configuration: try parseConfiguration(config), locale: locale,
            dataDirectory: directory, now: now?.seconds)
        let session = PreviewSession(plugin: pluginPath, request: request)
        defer { session.stop() }
        let outcome = BlockingTask.run { () async -> Result<Void, any Error> in
            do {
                if let html {
                    try await Self.writeStatic(session: session, to: html)
                } else {
                    try await Self.serve(session: session, address: address, watch: watch)
                }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try outcome.get()
    }

    /// `--html`: build once, write one page.
    static func writeStatic(session: PreviewSession, to path: String) async throws {
        let document: PreviewDocument
        do {
            document = try await session.build()
        } catch {
            if error.isPluginFailure {
                FileHandleOutput.standardError("error: \(error.description)\n")
                throw ExitStatus.pluginFailed
            }
            throw UsageError(error.description)
        }
        let page = PreviewPage().html(document, nonce: WebSecurity.newNonce(), delivery: .staticFile)
        guard let file = fopen(path, "w") else {
            throw HostFault("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        let written = fputs(page, file)
        let closed = fclose(file)
        guard written >= 0, closed == 0 else {
            throw HostFault("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        print(
            "Wrote \(path): \(document.kinds.count) kinds, \(document.kinds.reduce(0) { $0 + $1.families.count }) families"
        )
    }

    /// Serve until interrupted (SIGINT / SIGTERM).
    static func serve(session: PreviewSession, address: WebAddress, watch: Bool) async throws {
        let started = ContinuousClock.now
        let state = PreviewState()
        let routes = PreviewRoutes(session: session, state: state)
        await routes.rebuild()
        if case .failure(let problem)? = await state.document {
            FileHandleOutput.standardError("error: \(problem.description)\n")
            throw problem.isPluginFailure ? ExitStatus.pluginFailed : ExitStatus.usage
        }
        let server = WebServer(address: address)
        routes.add(to: server.router)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await server.run { url in
                    let elapsed = ContinuousClock.now - started
                    let milliseconds =
                        elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
                    print("Preview of \(session.pluginPath) at \(url)")
                    print(
                        "Built in \(milliseconds) ms\(watch ? "; watching the file, the page reloads when it changes" : ""). Ctrl-C stops."
                    )
                    fflush(nil)
                }
            }
            if watch { group.addTask { await routes.watch(path: session.pluginPath) } }
            // The server returns on SIGINT / SIGTERM (graceful shutdown);
            // then the watch ends too.
            _ = try await group.next()
            group.cancelAll()
        }
    }
}

/// Runs async work from the synchronous command line and waits for it.
enum BlockingTask {
    static func run<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            box.value = await body()
            done.signal()
        }
        done.wait()
        return box.value!
    }

    final class ResultBox<T>: @unchecked Sendable {
        // @unchecked: written once by the task before the semaphore is signalled, read after.
        var value: T?
    }
}
