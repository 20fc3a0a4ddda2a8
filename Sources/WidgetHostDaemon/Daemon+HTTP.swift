import Logging
import WidgetHostControl
import WidgetHostModel
import WidgetHostWeb

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's side of `run --http`: the web dashboard's ``DashboardSource``.
///
/// The data path is daemon → web. Hummingbird serves on its own NIO
/// threads; whatever the dashboard needs from the daemon's state is a job
/// posted to the loop's ``Mailbox`` (an eventfd the loop polls with its
/// other descriptors) and answered there, between the loop's other work,
/// so the web side never touches the state from another thread and never
/// blocks the loop: a job is a snapshot (read only) or a control request
/// answered by the same code, checks and group commit as the control
/// socket's (`instances.add`, `instances.remove`). Live updates come from
/// the daemon's ``EventLog`` in-process, one subscription for the dashboard.
final class DaemonWeb: DashboardSource {
    typealias Job = @Sendable (Daemon) -> Void
    let jobs: Mailbox<Job>
    let log: EventLog

    init(log: EventLog) throws(DaemonError) {
        self.jobs = try Mailbox()
        self.log = log
    }

    func snapshot(instances: [String]?) async -> DashboardSnapshot {
        await withCheckedContinuation { continuation in
            jobs.post { daemon in continuation.resume(returning: daemon.dashboardSnapshot(instances)) }
        }
    }

    func perform(_ request: ControlRequest) async -> ControlResponse {
        await withCheckedContinuation { continuation in
            jobs.post { daemon in
                let incoming = ControlServer.Incoming(connection: -1, request: .success(request), id: request.id)
                let answer = daemon.answers(to: [incoming]).first?.response
                continuation.resume(returning: answer ?? .failure(id: request.id, .internalError, "no answer"))
            }
        }
    }

    /// The event log as batches: what is still kept (the strip of the past
    /// 24 h is built from it), then every new event.
    func events() -> AsyncStream<[WatchEvent]> {
        let log = self.log
        return AsyncStream { continuation in
            let subscription: EventSubscription
            do {
                subscription = try log.subscribe(after: 0)
            } catch {
                continuation.finish()
                return
            }
            let task = Task {
                while let batch = try? await subscription.next() { continuation.yield(batch) }
                continuation.finish()
            }
            continuation.onTermination = { _ in
                subscription.cancel()
                task.cancel()
            }
        }
    }
}

/// The running web side: the server's task and the hub's.
struct DaemonWebService {
    let bridge: DaemonWeb
    let tasks: [Task<Void, Never>]
}

extension Daemon {
    /// Starts the dashboard on `address` (``DaemonOptions/http``): one
    /// ``WebServer`` (the security middleware, loopback unless told
    /// otherwise), the dashboard's routes, and the event hub. Prints the
    /// URL with its token to standard error once the socket is bound.
    func startWeb(_ address: WebAddress) throws(DaemonError) {
        let bridge = try DaemonWeb(log: events)
        let server = WebServer(address: address)
        let routes = DashboardRoutes(source: bridge, security: server.security)
        routes.add(to: server.router)
        let hub = routes.hub
        let logger = self.logger
        let follow = Task { await hub.follow(bridge.events()) }
        let serve = Task {
            do {
                try await server.run(handlesSignals: false) { url in
                    let line = "widgethost: dashboard at \(url)\n"
                    _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
                }
            } catch {
                logger.error("the dashboard stopped: \(error) (the daemon goes on without it)")
            }
        }
        web = DaemonWebService(bridge: bridge, tasks: [follow, serve])
    }

    /// Stops the dashboard (at shutdown) after answering the jobs waiting.
    func stopWeb() {
        guard let web else { return }
        serviceWeb()
        for task in web.tasks { task.cancel() }
        self.web = nil
    }

    /// Runs the dashboard's jobs waiting in the mailbox (once per turn of the loop).
    func serviceWeb() {
        guard let web else { return }
        for job in web.bridge.jobs.take() { job(self) }
    }

    /// The descriptor the loop polls for the dashboard's jobs (-1: none).
    var webDescriptor: Int32 { web?.bridge.jobs.descriptor ?? -1 }

    /// What the dashboard draws: `ids` (nil: every instance), as the loop
    /// sees them now, each with its place in its stack by relevance (the
    /// ranks `status` and `watch` give).
    func dashboardSnapshot(_ ids: [String]?) -> DashboardSnapshot {
        let now = clock.now()
        var widgets: [DashboardWidget] = []
        let ids = ids ?? scheduler.instanceIDs
        refreshStacks()
        let ranks = watch.stacks.ranks(of: ids)
        for id in ids {
            guard let s = scheduler.instanceState(id) else { continue }
            let instance = s.instance
            let explanation = scheduler.explain(id, at: now)
            var lastOutcome: String?
            if s.consecutiveFailures > 0 {
                lastOutcome = s.lastFailure?.reason ?? "failed"
            } else if s.timeline != nil {
                lastOutcome = "ok"
            }
            widgets.append(
                DashboardWidget(
                    id: id, plugin: instance.plugin, kind: instance.kind, family: instance.family,
                    origin: (instances[id]?.origin ?? .configuration).rawValue,
                    entry: scheduler.displayedEntry(of: id, at: now),
                    template: workers[instance.plugin]?.description?.template(
                        kind: instance.kind, family: instance.family),
                    budgetUsed: explanation?.countedInWindow, budgetAllowance: explanation?.allowance,
                    nextReload: explanation?.next?.time, nextReason: explanation?.next.map(Self.reason),
                    entryDates: s.timeline?.entries.map(\.date) ?? [], consecutiveFailures: s.consecutiveFailures,
                    lastOutcome: lastOutcome, inFlight: s.isInFlight,
                    unavailable: unavailability(of: instance.plugin),
                    stackRank: ranks[id]?.rank,
                    relevance: scheduler.relevanceScore(of: id, at: now)))
        }
        let plugins = configuration.plugins.map {
            DashboardPlugin(name: $0.name, kinds: workers[$0.name]?.description?.kinds ?? [])
        }
        return DashboardSnapshot(
            now: now, widgets: widgets, plugins: plugins,
            pluginsLoaded: workers.values.count { $0.description != nil },
            callsRunning: workers.values.count(where: \.isCalling))
    }
}
