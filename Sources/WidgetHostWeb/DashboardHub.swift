import WidgetHostControl

/// The dashboard's one consumer of the daemon's event log: it keeps the
/// strip of the past 24 h per instance and the `/metrics` counters, and
/// fans each batch out to the pages following `/events`.
///
/// ```swift
/// let hub = DashboardHub()
/// Task { await hub.follow(source.events()) }
/// ```
public actor DashboardHub {
    /// The past 24 h of each instance: reloads counted or free, failures. A
    /// reload whose plugin was not called (`held`) leaves no mark.
    public private(set) var history: [String: [DashboardMark]] = [:]
    /// Reload counters and latencies, for `/metrics`.
    public nonisolated let metrics = DashboardMetrics()
    private var listeners: [Int: AsyncStream<[WatchEvent]>.Continuation] = [:]
    private var nextListener = 0
    /// Reloads started and not yet finished: instance → (started at, reason, counted).
    private var started: [String: (time: Double, reason: String, counted: Bool)] = [:]

    public init() {}

    /// Consumes `events` until it ends.
    public func follow(_ events: AsyncStream<[WatchEvent]>) async {
        for await batch in events { record(batch) }
    }

    /// Takes in one batch: history, metrics, then the listening pages.
    public func record(_ batch: [WatchEvent]) {
        for event in batch {
            guard let id = event.instance else { continue }
            switch WatchEventType(rawValue: event.type) {
            case .reload?:
                let counted = event.details?.counted ?? false
                started[id] = (event.time, event.details?.reason ?? "unknown", counted)
                append(id, DashboardMark(time: event.time, kind: counted ? .counted : .free), now: event.time)
            case .timeline?, .failure?, .held?:
                let outcome =
                    event.type == "held"
                    ? "notCalled" : event.details?.outcome ?? (event.type == "timeline" ? "ok" : "failed")
                let start = started.removeValue(forKey: id)
                metrics.reloadFinished(
                    reason: start?.reason ?? "unknown", outcome: outcome,
                    seconds: start.map { max(0, event.time - $0.time) })
                if event.type == "failure" {
                    append(id, DashboardMark(time: event.time, kind: .failure), now: event.time)
                } else if event.type == "held", let start {
                    takeBack(id, DashboardMark(time: start.time, kind: start.counted ? .counted : .free))
                }
            case .instanceRemoved?:
                history[id] = nil
                started[id] = nil
            default: break
            }
        }
        metrics.eventsTaken(batch.count)
        for listener in listeners.values { listener.yield(batch) }
    }

    /// Removes the mark of a reload whose plugin was not called (`held`):
    /// the scheduler gave its charge back and does not count its time as a
    /// reload's, so the strip's counts agree with the budget.
    private func takeBack(_ id: String, _ mark: DashboardMark) {
        guard let index = history[id]?.lastIndex(of: mark) else { return }
        history[id]?.remove(at: index)
    }

    private func append(_ id: String, _ mark: DashboardMark, now: Double) {
        var marks = history[id, default: []]
        marks.append(mark)
        if let first = marks.first, first.time < now - 86_400 { marks.removeAll { $0.time < now - 86_400 } }
        history[id] = marks
    }

    /// The batches recorded from now on (one page's `/events`). A page that
    /// falls 64 batches behind loses the oldest; it catches up with the
    /// next change of each card.
    public func listen() -> (id: Int, stream: AsyncStream<[WatchEvent]>) {
        let (stream, continuation) = AsyncStream<[WatchEvent]>.makeStream(bufferingPolicy: .bufferingNewest(64))
        nextListener += 1
        listeners[nextListener] = continuation
        return (nextListener, stream)
    }

    /// Stops sending to a page.
    public func stopListening(_ id: Int) {
        listeners.removeValue(forKey: id)?.finish()
    }

    /// Pages listening now.
    public var listenerCount: Int { listeners.count }
}
