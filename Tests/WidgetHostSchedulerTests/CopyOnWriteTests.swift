import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// `ReloadScheduler` is a value: a copy shares its state (one box) until
/// either changes, then each goes its own way, and a copy made by the
/// first change carries every field (``SchedulerCore/clone()``).
@Suite("A copy of the scheduler")
struct CopyOnWriteTests {
    /// Eight instances of two apps run for `hours`, every reload answered.
    static func driven(_ scheduler: inout ReloadScheduler, from start: Double, hours: Double) -> [ReloadDecision] {
        var decisions: [ReloadDecision] = []
        while let wake = scheduler.nextWakeup(), wake <= start + hours * 3_600 {
            for batch in scheduler.dueReloads(at: wake) {
                for d in batch.decisions {
                    decisions.append(d)
                    let policy: ReloadPolicy = decisions.count % 3 == 0 ? .atEnd : .after(wake + 900)
                    scheduler.complete(d.instanceID, with: .success(timeline([wake, wake + 600], policy)), at: wake)
                }
            }
        }
        return decisions
    }

    static func placed() -> ReloadScheduler {
        var scheduler = ReloadScheduler(configuration: testConfig(jitter: 60))
        scheduler.tracksTouched = true
        for i in 0..<8 { scheduler.add(instance("w\(i)", kind: "k\(i % 2)", app: "app\(i % 2)"), at: t0) }
        scheduler.handle(.instanceShown("w1"), at: t0)
        return scheduler
    }

    @Test("is left as it was when the other changes, either way round")
    func copiesAreIndependent() {
        var original = Self.placed()
        _ = Self.driven(&original, from: t0, hours: 2)
        let before = original.state
        var copy = original
        copy.handle(.appForeground("app0"), at: t0 + 2 * 3_600)
        copy.remove("w3")
        _ = Self.driven(&copy, from: t0 + 2 * 3_600, hours: 3)
        #expect(original.state == before)
        #expect(original.instanceCount == 8)
        #expect(copy.instanceCount == 7)
        #expect(copy.state != before)

        let copyState = copy.state
        original.add(instance("w9", kind: "k0", app: "app1"), at: t0 + 2 * 3_600)
        _ = Self.driven(&original, from: t0 + 2 * 3_600, hours: 3)
        #expect(copy.state == copyState)
        #expect(copy.instanceState("w9") == nil)
    }

    @Test("made by a change, goes on exactly as the original would")
    func aCopyCarriesEveryField() {
        var original = Self.placed()
        original.tracksDisplayChanges = true
        original.readAheadMinimum = 1
        _ = Self.driven(&original, from: t0, hours: 5)
        var copy = original
        copy.endJournal()  // a change that changes nothing: the copy is made here
        #expect(copy.tracksTouched && copy.tracksDisplayChanges && copy.readAheadMinimum == 1)
        #expect(copy.state == original.state)
        #expect(copy.latestTime == original.latestTime)
        #expect(copy.takeTouched() == original.takeTouched())
        var a: [Int] = []
        var b: [Int] = []
        copy.takeDisplayChanges(into: &a)
        original.takeDisplayChanges(into: &b)
        #expect(a == b)
        for step in 0..<4 {
            let from = t0 + Double(5 + step * 6) * 3_600
            original.handle(.instanceShown("w\(step)"), at: from)
            copy.handle(.instanceShown("w\(step)"), at: from)
            #expect(Self.driven(&copy, from: from, hours: 6) == Self.driven(&original, from: from, hours: 6))
            #expect(copy.state == original.state)
            #expect(copy.nextWakeup() == original.nextWakeup())
        }
    }
}
