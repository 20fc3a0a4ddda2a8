import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// `dueReloads(at:)` at the batch time `nextWakeup()` just found takes its
/// due instances from that call's walk of the reload queue, while the
/// queue is as it was then; after any change to the queue it walks again.
/// Each case runs the same calls on two schedulers, one of which asked
/// `nextWakeup()` first, and expects the same reloads.
@Suite("One walk per wakeup")
struct WakeupWalkTests {
    /// Six instances whose policy reloads fall within one coalescing
    /// window (two batches of kinds), completed once at `t0`.
    static func scheduler() -> ReloadScheduler {
        var s = ReloadScheduler(configuration: testConfig())
        for i in 0..<6 {
            s.add(instance("w\(i)", kind: "k\(i % 2)", app: "a\(i % 3)"), at: t0)
        }
        for batch in s.dueReloads(at: t0) {
            for (n, d) in batch.decisions.enumerated() {
                let next = t0 + 1_800 + Double(40 * n)
                s.complete(d.instanceID, with: .success(timeline([t0], .after(next))), at: t0)
            }
        }
        return s
    }

    /// The ids of the reloads `dueReloads(at:)` issues, in order.
    static func due(_ s: inout ReloadScheduler, at now: Double) -> [String] {
        s.dueReloads(at: now).flatMap(\.decisions).map(\.instanceID)
    }

    /// Two such schedulers, the first having asked `nextWakeup()` (twice:
    /// the first walk makes the room its findings are kept in), and the
    /// batch time it found.
    static func pair() -> (asked: ReloadScheduler, fresh: ReloadScheduler, wake: Double)? {
        let asked = scheduler()
        _ = asked.nextWakeup()
        guard let wake = asked.nextWakeup() else {
            Issue.record("no wakeup planned")
            return nil
        }
        return (asked, scheduler(), wake)
    }

    @Test("the walk's findings give the reloads a walk of the queue gives")
    func sameAsWalkingAgain() {
        guard case (var asked, var fresh, let wake)? = Self.pair() else { return }
        let expected = Self.due(&fresh, at: wake)
        #expect(expected.count >= 2)
        let reused = asked.walksReused
        #expect(Self.due(&asked, at: wake) == expected)
        #expect(asked.walksReused == reused + 1, "the walk was not reused")
        #expect(asked.state == fresh.state)
    }

    @Test(
        "a change to the queue between the two calls is seen",
        arguments: ["remove", "reload one kind", "hide", "complete another"])
    func changeBetween(change: String) {
        guard case (var asked, var fresh, let wake)? = Self.pair() else { return }
        func apply(_ s: inout ReloadScheduler) {
            switch change {
            case "remove":
                // Positions move down: the walk's positions name others.
                s.remove("w0")
            case "reload one kind":
                s.handle(.reloadTimelines(ofKind: "k1", app: "a1"), at: wake - 60)
            case "hide":
                s.handle(.instanceHidden("w2"), at: wake - 60)
            default:
                // A new instance, due at once, issued and completed with a
                // policy reload inside the window.
                s.add(instance("late", kind: "k0", app: "a0"), at: wake - 120)
                for batch in s.dueReloads(at: wake - 120) {
                    for d in batch.decisions {
                        s.complete(d.instanceID, with: .success(timeline([t0], .after(wake - 30))), at: wake - 120)
                    }
                }
            }
        }
        apply(&asked)
        apply(&fresh)
        let expected = Self.due(&fresh, at: wake)
        #expect(!expected.isEmpty)
        let reused = asked.walksReused
        #expect(Self.due(&asked, at: wake) == expected)
        #expect(asked.walksReused == reused, "a walk of a queue changed since was reused")
        #expect(asked.state == fresh.state)
    }
}
