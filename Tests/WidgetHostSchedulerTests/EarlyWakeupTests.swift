import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// `dueReloads(at:)` at a time when nothing is due issues nothing, even
/// when a plan queued by then was moved later by the free-reload cap and an
/// instance was added after that time (found by review: a shortcut there
/// issued a counted reload the rules do not allow yet).
@Suite("Early wakeups")
struct EarlyWakeupTests {
    @Test func aWakeupBeforeAnInstanceWasAddedIssuesNothingNotDue() {
        var c = SchedulerConfiguration()
        c.learningPeriod = 0
        c.learningAllowance = 5
        c.rareAllowance = 0
        c.freeReloadLimit = 1
        c.freeReloadWindow = 60
        c.maximumJitter = 0
        var s = ReloadScheduler(configuration: c)
        let added = t0 + 1_000
        _ = s.add(instance("y", kind: "ky", app: "a", visible: false), at: added)
        _ = s.add(instance("x", kind: "kx", app: "a", visible: false, location: true), at: added)
        for batch in s.dueReloads(at: added) {
            for d in batch.decisions { s.complete(d.instanceID, with: .success(timeline([], .never)), at: added) }
        }
        s.handle(.appIntent(instance: "y"), at: added)
        s.handle(.instanceShown("x"), at: added - 3)
        s.handle(.reloadTimelines(ofKind: "kx", app: "a"), at: added - 3)
        s.handle(.significantLocationChange, at: added - 3)
        // y's free reload fills the cap; x stays queued, its plan moved later.
        let first = s.dueReloads(at: added, limit: 1)
        #expect(first.flatMap(\.decisions).map(\.instanceID) == ["y"])
        for batch in first {
            for d in batch.decisions { s.complete(d.instanceID, with: .success(timeline([], .never)), at: added) }
        }
        // The clock two seconds back (under the daemon's jump tolerance).
        #expect(s.dueReloads(at: added - 2).isEmpty)
    }
}
