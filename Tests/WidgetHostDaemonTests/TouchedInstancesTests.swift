import Testing
import WidgetHostModel
import WidgetHostScheduler

/// The daemon persists only the instances the scheduler says an event
/// touched (``ReloadScheduler/takeTouched()``): the set must hold every
/// instance whose state changed and, for targeted events, nothing else.
@Suite("Scheduler: touched instances, for incremental persistence")
struct TouchedInstancesTests {
    let t0 = 1_800_000_000.0

    func scheduler() -> ReloadScheduler {
        var s = ReloadScheduler()
        s.tracksTouched = true
        for n in 0..<40 {
            s.add(WidgetInstance(id: "w\(n)", plugin: "p", kind: "k\(n % 2)", app: "app\(n % 4)"), at: t0)
        }
        return s
    }

    @Test func aFreshSchedulerHasTouchedNothingAndAnAddIsTouched() {
        var s = ReloadScheduler(state: scheduler().state)
        s.tracksTouched = true
        #expect(s.takeTouched().isEmpty)
        s.add(WidgetInstance(id: "new", plugin: "p", kind: "k0", app: "app0"), at: t0 + 1)
        #expect(s.takeTouched() == ["new"])
    }

    @Test func everyChangedInstanceIsTouchedAndOnlyTheEventsOwn() {
        var s = scheduler()
        for batch in s.dueReloads(at: t0) {
            for decision in batch.decisions {
                s.complete(
                    decision.instanceID,
                    with: .success(TimelineRecord(entries: [EntryRecord(date: t0, contentJSON: "{}")], policy: .never)),
                    at: t0 + 1)
            }
        }
        _ = s.takeTouched()
        let before = s.state
        s.handle(.reloadTimelines(ofKind: "k1", app: "app1"), at: t0 + 10)
        let touched = s.takeTouched()
        let changed = Set(
            zip(before.instances, s.state.instances).filter { $0.0 != $0.1 }.map(\.1.instance.id))
        #expect(!changed.isEmpty)
        #expect(changed.isSubset(of: touched), "every changed instance is named")
        let own = Set(
            s.state.instances.filter { $0.instance.app == "app1" && $0.instance.kind == "k1" }.map(\.instance.id))
        #expect(touched == own, "and nothing beyond the app's instances of the kind")
        // The same request again changes nothing (the older request stays): nothing to write.
        s.handle(.reloadTimelines(ofKind: "k1", app: "app1"), at: t0 + 11)
        #expect(s.takeTouched().isEmpty)

        let beforeView = s.state
        s.handle(.instanceHidden("w3"), at: t0 + 12)
        #expect(s.takeTouched() == ["w3"])
        #expect(beforeView.instances.count == s.state.instances.count)
    }
}

/// The daemon issues at most a bounded number of reloads per turn of its loop.
@Suite("Scheduler: a bounded number of due reloads per call")
struct BoundedDueReloadsTests {
    @Test func theReloadsBeyondTheLimitStayDueAndAreIssuedNext() {
        let t0 = 1_800_000_000.0
        var s = ReloadScheduler()
        s.tracksTouched = true
        for n in 0..<10 { s.add(WidgetInstance(id: "w\(n)", plugin: "p", kind: "k", app: "a"), at: t0) }
        let first = s.dueReloads(at: t0, limit: 4).flatMap(\.decisions).map(\.instanceID)
        #expect(first == ["w0", "w1", "w2", "w3"])
        #expect(s.nextWakeup().map { $0 <= t0 } == true, "the others are still due")
        let rest = s.dueReloads(at: t0 + 0.001).flatMap(\.decisions).map(\.instanceID)
        #expect(rest == (4..<10).map { "w\($0)" })
        #expect(s.dueReloads(at: t0 + 0.002).isEmpty)
    }

    /// Issuing a storm `limit` at a time gives the decisions one call gives,
    /// in the same order, and the same state, though the instances past the
    /// limit are not planned again at each call; the host-wide free-reload
    /// cap is consumed on the way (the added reloads are capped free ones).
    @Test(arguments: [1, 7, 32])
    func aStormIssuedInChunksIsTheStormIssuedAtOnce(limit: Int) {
        let t0 = 1_800_000_000.0
        var configuration = SchedulerConfiguration()
        configuration.maximumJitter = 0
        configuration.freeReloadLimit = 40
        var once = ReloadScheduler(configuration: configuration)
        for n in 0..<300 {
            once.add(WidgetInstance(id: "w\(n)", plugin: "p\(n % 3)", kind: "k\(n % 5)", app: "a\(n % 4)"), at: t0)
        }
        // Every instance gets its first timeline, then a locale change makes
        // all 300 due at once: free reloads under the cap of 40 a minute.
        for decision in once.dueReloads(at: t0).flatMap(\.decisions) {
            let timeline = TimelineRecord(entries: [EntryRecord(date: t0, contentJSON: "{}")], policy: .never)
            once.complete(decision.instanceID, with: .success(timeline), at: t0 + 1)
        }
        once.handle(.systemChange(.locale), at: t0 + 10)
        var chunked = once
        for now in [t0 + 10, t0 + 40, t0 + 71, t0 + 135] {
            let all = once.dueReloads(at: now).flatMap(\.decisions)
            var pieces: [ReloadDecision] = []
            while case let piece = chunked.dueReloads(at: now, limit: limit).flatMap(\.decisions), !piece.isEmpty {
                #expect(piece.count <= limit)
                pieces += piece
            }
            #expect(Set(pieces.map(\.instanceID)) == Set(all.map(\.instanceID)), "at +\(now - t0) s")
            #expect(pieces.sorted { $0.instanceID < $1.instanceID } == all.sorted { $0.instanceID < $1.instanceID })
            #expect(chunked.state == once.state, "at +\(now - t0) s")
            #expect(chunked.nextWakeup() == once.nextWakeup())
        }
        #expect(once.state.freeLedger.times.count >= 40, "the cap was reached")
    }
}
