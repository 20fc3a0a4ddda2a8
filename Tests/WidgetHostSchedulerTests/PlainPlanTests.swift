import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// `dueReloads(at:)` issues a plain policy reload (counted, on time) as it
/// was planned when queued, without planning it again, only when its
/// viewing tier cannot have changed since its time: a batch that wakes past
/// a whole hour plans it again, and there its tier may have dropped and its
/// budget run out.
@Suite("Plain plans")
struct PlainPlanTests {
    @Test func aBatchPastTheHourPlansAPlainReloadAgain() {
        var c = testConfig()
        c.learningPeriod = 0
        c.deferPolicyReloadsWhileHidden = false
        // One visible hour makes a widget occasional (3 counted reloads a
        // day); none, rare (1).
        c.occasionalVisibleHours = 1
        c.frequentVisibleHours = 100
        c.occasionalAllowance = 3
        c.rareAllowance = 1
        c.coalescingCap = 600
        c.coalescingFraction = 1
        var fast = ReloadScheduler(configuration: c)
        var scan = ScanScheduler(configuration: c)
        // The hour at which a's one visible hour (t0's) leaves its 24 h window.
        let h = t0 + day
        // a: shown for a minute at t0; counted at t0 + 12 h, then asks for
        // h - 30 s (occasional then: planned on time, a plain plan). b,
        // never shown, asks for h + 60 s, within a's coalescing slack, so
        // the batch wakes at h + 60 s, when a is rare and its one counted
        // reload of the day is its whole budget.
        let answers: [String: [ReloadPolicy]] = [
            "a": [.after(t0 + 12 * hour), .after(h - 30), .never],
            "b": [.after(h + 60), .never],
        ]
        var answered: [String: Int] = [:]
        for w in [instance("a", visible: true), instance("b", visible: false)] {
            _ = fast.add(w, at: t0)
            _ = scan.add(w, at: t0)
        }
        fast.handle(.instanceHidden("a"), at: t0 + 60)
        scan.handle(.instanceHidden("a"), at: t0 + 60)
        var issuedAtTheBatch: [String] = []
        for _ in 0..<20 {
            let wake = fast.nextWakeup()
            #expect(wake == scan.nextWakeup())
            guard let wake, wake < h + 2 * hour else { break }
            let batches = fast.dueReloads(at: wake)
            #expect(batches == scan.dueReloads(at: wake), "at t0 + \(wake - t0) s")
            for d in batches.flatMap(\.decisions) {
                if wake == h + 60 { issuedAtTheBatch.append(d.instanceID) }
                let n = answered[d.instanceID, default: 0]
                answered[d.instanceID] = n + 1
                let policy = answers[d.instanceID].map { $0[min(n, $0.count - 1)] } ?? .never
                fast.complete(d.instanceID, with: .success(timeline([], policy)), at: wake)
                scan.complete(d.instanceID, with: .success(timeline([], policy)), at: wake)
            }
            #expect(fast.state == scan.state)
        }
        // The case this covers happened: the batch woke past the hour, and
        // a, queued before it, was held there by its budget.
        #expect(issuedAtTheBatch == ["b"])
        #expect(fast.plannedReload(of: "a", at: h + 60)?.deferral?.cause == .budget)
    }
}
