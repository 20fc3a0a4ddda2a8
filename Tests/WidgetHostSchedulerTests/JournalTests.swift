import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// The undo journal the daemon uses when a commit fails: after
/// `rollBackJournal()` the scheduler must be the one it was at
/// `beginJournal()`, in its state and in every decision it makes after.
@Suite("Scheduler: the undo journal")
struct JournalTests {
    /// A provider that depends on the decision only, so two schedulers fed
    /// the same decisions get the same answers.
    static func answer(_ d: ReloadDecision) -> ReloadOutcome {
        let h = d.instanceID.utf8.reduce(UInt64(d.time)) { $0 &* 31 &+ UInt64($1) }
        if h % 9 == 0 { return .failure(reason: "boom") }
        let policy: ReloadPolicy = h % 3 == 0 ? .atEnd : .after(d.time + Double(600 + h % 5400))
        return .success(timeline([d.time, d.time + 900, d.time + 1800], policy))
    }

    /// With the instances in one shard, and dealt out among three.
    @Test("a random batch of changes, rolled back, leaves the scheduler as it was", arguments: 0..<40, [1, 3])
    func rollingBackRestoresStateAndBehaviour(seed: UInt64, shards: Int) {
        var rng = SplitMix64(seed: seed)
        var s = ReloadScheduler(
            configuration: testConfig(jitter: Bool.random(using: &rng) ? 120 : 0), shards: shards, run: 1)
        s.tracksTouched = true
        var ids: [String] = []
        for i in 0..<Int.random(in: 3...12, using: &rng) {
            let id = "w\(i)"
            ids.append(id)
            s.add(
                instance(
                    id, kind: Bool.random(using: &rng) ? "k1" : "k2", app: Bool.random(using: &rng) ? "a" : "b",
                    visible: Double.random(in: 0..<1, using: &rng) < 0.7, location: Bool.random(using: &rng)),
                at: t0)
        }
        // Some history first: a few hours of reloads and events.
        let start = t0 + Double(Int.random(in: 1...20, using: &rng)) * hour
        _ = drive(&s, until: start, Self.answer)
        // The batch's time, observed before the copy, so the copy and the
        // rolled-back scheduler stand at the same `now`.
        let batchTime = start + Double(Int.random(in: 0...3600, using: &rng))
        s.handle(.instanceShown("nobody"), at: batchTime)
        _ = s.takeTouched()
        let reference = s

        s.beginJournal()
        var inFlight: [String] = []
        for _ in 0..<Int.random(in: 1...15, using: &rng) {
            let id = ids.randomElement(using: &rng)!
            let app = Bool.random(using: &rng) ? "a" : "b"
            switch Int.random(in: 0..<14, using: &rng) {
            case 0: s.handle(.instanceShown(id), at: batchTime)
            case 1: s.handle(.instanceHidden(id), at: batchTime)
            case 2: s.handle(.appForeground(app), at: batchTime)
            case 3: s.handle(.appBackground(app), at: batchTime)
            case 4: s.handle(.sessionStarted(app: app, kind: .audio), at: batchTime)
            case 5: s.handle(.appIntent(instance: id), at: batchTime)
            case 6: s.handle(.significantLocationChange, at: batchTime)
            case 7: s.handle(.reloadTimelines(ofKind: Bool.random(using: &rng) ? "k1" : "k2", app: app), at: batchTime)
            case 8: s.push(kind: "k1", at: batchTime)
            case 9:
                inFlight += s.dueReloads(at: batchTime).flatMap(\.decisions).map(\.instanceID)
            case 10:
                if let done = inFlight.popLast() {
                    s.complete(done, with: .success(timeline([batchTime], .atEnd)), at: batchTime)
                }
            case 11: s.handle(.systemChange(.locale), at: batchTime)
            case 12:
                // Positions move: the journal keeps the whole scheduler from here.
                if Bool.random(using: &rng) {
                    s.add(instance("new\(seed)"), at: batchTime)
                } else {
                    s.remove(ids.removeFirst())
                }
            default: s.handle(.reloadAllTimelines(app: app), at: batchTime)
            }
        }
        s.rollBackJournal()

        #expect(!s.isJournaling)
        #expect(s.state == reference.state)
        #expect(s.nextWakeup() == reference.nextWakeup())
        var after = s
        var expected = reference
        let end = batchTime + day
        #expect(drive(&after, until: end, Self.answer) == drive(&expected, until: end, Self.answer))
        #expect(after.state == expected.state)
    }

    @Test func theStateBeforeTheJournalIsWhatARequestIsComparedWith() {
        var s = ReloadScheduler(configuration: testConfig())
        s.add(instance("w"), at: t0)
        _ = drive(&s, until: t0 + hour, Self.answer)
        let before = s.instanceState("w")
        s.beginJournal()
        s.handle(.appIntent(instance: "w"), at: t0 + hour)
        #expect(s.instanceState("w")?.request != nil)
        #expect(s.instanceStateBeforeJournal("w") == before)
        s.endJournal()
        #expect(s.instanceStateBeforeJournal("w") == s.instanceState("w"))
        #expect(s.instanceState("w")?.request != nil, "endJournal keeps the changes")
    }
}
