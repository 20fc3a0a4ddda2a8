import WidgetHostModel

@testable import WidgetHostScheduler

/// A whole hour, so view-hour buckets line up.
let t0 = 1_800_000_000.0
let hour = 3600.0
let day = 86_400.0

func testConfig(jitter: Double = 0) -> SchedulerConfiguration {
    var c = SchedulerConfiguration()
    c.maximumJitter = jitter
    return c
}

func instance(
    _ id: String, kind: String = "k", plugin: String = "p", app: String = "app", visible: Bool = true,
    location: Bool = false
) -> WidgetInstance {
    WidgetInstance(id: id, plugin: plugin, kind: kind, app: app, isVisible: visible, usesLocation: location)
}

func timeline(_ dates: [Double], _ policy: ReloadPolicy, relevance: [Relevance?]? = nil) -> TimelineRecord {
    TimelineRecord(
        entries: dates.enumerated().map { i, d in
            EntryRecord(date: d, relevance: relevance?[i], contentJSON: "{\"i\":\(i)}")
        }, policy: policy)
}

/// Drives the scheduler to `end`, completing each reload with `provider`.
func drive(_ s: inout ReloadScheduler, until end: Double, _ provider: (ReloadDecision) -> ReloadOutcome)
    -> [ReloadDecision]
{
    s.run(until: end, clock: VirtualClock(start: s.state.now ?? t0), provider: provider)
}
