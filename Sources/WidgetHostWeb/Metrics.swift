import Prometheus
import Synchronization
import WidgetHostModel

/// The dashboard's figures for `/metrics`, kept in a swift-prometheus
/// registry and written in Prometheus' text exposition format: reloads by
/// reason and outcome, reload latency as a histogram, budget use per
/// instance, instances, workers, calls running, pages following.
///
/// The counters and the histogram are fed by the event stream the dashboard
/// already consumes (``DashboardHub``); the gauges are set from the
/// daemon's snapshot each time `/metrics` is read, and an instance's gauges
/// go when the instance does.
///
/// ```text
/// widgethost_reloads_total{reason="policy",outcome="ok"} 12
/// widgethost_reload_seconds_bucket{le="0.1"} 9
/// widgethost_budget_used{instance="desk"} 3
/// ```
public final class DashboardMetrics: Sendable {
    /// Upper bounds of the latency histogram's buckets, in seconds.
    public static let buckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

    /// Every metric, and what `/metrics` writes.
    public let registry = PrometheusCollectorRegistry()
    private let latency: ValueHistogram
    private let events: Counter
    private let instances: Gauge
    private let workers: Gauge
    private let callsRunning: Gauge
    private let pages: Gauge
    /// Instances whose budget gauges are registered (unregistered when they go).
    private let instanceGauges = Mutex<[String: (used: Gauge, allowance: Gauge)]>([:])

    public init() {
        latency = registry.makeValueHistogram(
            descriptor: Self.named(
                "widgethost_reload_seconds", "Time from a reload's start to its timeline or failure."),
            buckets: Self.buckets)
        events = registry.makeCounter(
            descriptor: Self.named("widgethost_dashboard_events_total", "Events taken from the daemon's log."))
        instances = registry.makeGauge(descriptor: Self.named("widgethost_instances", "Widget instances."))
        workers = registry.makeGauge(descriptor: Self.named("widgethost_workers", "Plugins loaded (one worker each)."))
        callsRunning = registry.makeGauge(
            descriptor: Self.named("widgethost_calls_running", "Plugin calls running now."))
        pages = registry.makeGauge(descriptor: Self.named("widgethost_dashboard_pages", "Pages following /events."))
    }

    /// A metric's name as swift-prometheus describes it: the whole name
    /// (no namespace or unit of its own) and its help text.
    static func named(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    /// Counts a finished reload; `seconds` from its start (nil: its start was not seen).
    func reloadFinished(reason: String, outcome: String, seconds: Double?) {
        registry.makeCounter(
            descriptor: Self.named("widgethost_reloads_total", "Reloads finished, by reason and outcome."),
            labels: [("reason", reason), ("outcome", outcome)]
        ).increment()
        guard let seconds, seconds.isFinite, seconds >= 0 else { return }
        latency.record(seconds)
    }

    /// Counts events taken from the daemon's log.
    func eventsTaken(_ count: Int) { events.increment(by: Int64(count)) }

    /// The text exposition: the gauges set from `snapshot` and `listeners`,
    /// then every metric of the registry.
    public func exposition(_ snapshot: DashboardSnapshot, listeners: Int) -> String {
        instances.set(Int64(snapshot.widgets.count))
        workers.set(Int64(snapshot.pluginsLoaded))
        callsRunning.set(Int64(snapshot.callsRunning))
        pages.set(Int64(listeners))
        instanceGauges.withLock { gauges in
            var present = Set<String>()
            for widget in snapshot.widgets {
                present.insert(widget.id)
                let pair =
                    gauges[widget.id]
                    ?? (
                        registry.makeGauge(
                            descriptor: Self.named(
                                "widgethost_budget_used", "Counted reloads in the rolling budget window."),
                            labels: [("instance", widget.id)]),
                        registry.makeGauge(
                            descriptor: Self.named(
                                "widgethost_budget_allowance", "Counted reloads allowed in the window."),
                            labels: [("instance", widget.id)])
                    )
                gauges[widget.id] = pair
                pair.used.set(Int64(widget.budgetUsed ?? 0))
                pair.allowance.set(Int64(widget.budgetAllowance ?? 0))
            }
            for (id, pair) in gauges where !present.contains(id) {
                registry.unregisterGauge(pair.used)
                registry.unregisterGauge(pair.allowance)
                gauges[id] = nil
            }
        }
        return registry.emitToString()
    }
}
