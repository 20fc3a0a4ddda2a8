import Foundation
import Testing
import WidgetHostModel
import WidgetHostScheduler

@testable import WidgetHostStore

/// The daemon writes only what changed (issue 16): the diffing save, the
/// upsert that leaves the timeline alone, the hand-written JSON columns, the
/// event log pruned once per transaction and the quarantine list kept in memory.
@Suite("State store: incremental writes")
struct IncrementalWriteTests {
    @Test func savingAgainstTheStoredStateWritesTheDifferenceAndLoadsTheSame() throws {
        let store = try StateStore(path: temporaryPath("diff"))
        let simulated = simulatedDay()
        try store.saveSchedulerState(simulated.state)
        let stored = try store.loadSchedulerState()
        #expect(stored == simulated.state)

        // Remove one, change one, add one.
        var changed = ReloadScheduler(configuration: simulated.configuration, state: stored)
        changed.remove("w0")
        changed.handle(.instanceHidden("w1"), at: t0 + day + 5)
        changed.add(WidgetInstance(id: "w9", plugin: "p0", kind: "k", app: "app0"), at: t0 + day + 6)
        try store.saveSchedulerState(changed.state, storedAs: stored)
        let loaded = try store.loadSchedulerState()
        #expect(loaded == changed.state)
        #expect(loaded.instances.map(\.instance.id) == ["w1", "w2", "w3", "w9"], "order kept, the new one last")
    }

    @Test func anUpsertWithoutTheTimelineLeavesTheStoredOne() throws {
        let store = try StateStore.inMemory()
        let simulated = simulatedDay()
        try store.saveSchedulerState(simulated.state)
        var s = try #require(simulated.state.instances.first { $0.timeline != nil })
        let kept = s.timeline
        s.timeline = TimelineRecord(entries: [], policy: .never)
        s.consecutiveFailures = 3
        try store.transaction { try $0.upsert(s, timeline: false) }
        let loaded = try #require(try store.loadSchedulerState().instances.first { $0.instance.id == s.instance.id })
        #expect(loaded.timeline == kept)
        #expect(loaded.consecutiveFailures == 3)
    }

    @Test func theHandWrittenColumnsDecodeToWhatWasWritten() throws {
        let hostile = "{\"a\":\"quote \\\" backslash \\\\ tab\t newline\n nul\u{0} bell\u{7} é 🌍\"}"
        let entries = [
            EntryRecord(date: t0, contentJSON: hostile),
            EntryRecord(date: t0 + 0.125, relevance: Relevance(score: 1e-7, duration: 86_400), contentJSON: "{}"),
            EntryRecord(date: 253_402_300_799, relevance: Relevance(score: 0), contentJSON: "{\"n\":-0.0}"),
        ]
        #expect(try EntriesBlob.decode(EntriesBlob.encode(entries)) == entries)
        #expect(
            try StateTransaction.decode([EntryRecord].self, StateTransaction.encode(entries), table: "t", key: "k")
                == entries)

        var decision = ReloadDecision(
            instanceID: "w\"1\\", plugin: "p\n", kind: "k\u{1}é", time: t0 + 0.5,
            trigger: .reloadTimelines(kind: "k", app: "a"), charge: .free(.appIntent), attempt: 2,
            deferral: Deferral(from: t0 - 10, until: nil, cause: .hidden),
            wouldHaveBeenDeferred: Deferral(from: t0, until: t0 + 1, cause: .budget), allowance: 70,
            countedInWindow: 3)
        for _ in 0..<2 {
            let flight = InFlightReload(decision: decision, dueSince: t0 - 20)
            let written = try StateTransaction.encodeInFlight(flight) { value in
                switch value {
                case .trigger(let trigger): try StateTransaction.encode(trigger)
                case .charge(let charge): try StateTransaction.encode(charge)
                }
            }
            #expect(try StateTransaction.decode(InFlightReload.self, written, table: "t", key: "k") == flight)
            decision.deferral = nil
            decision.wouldHaveBeenDeferred = nil
            decision.allowance = nil
            decision.countedInWindow = nil
            decision.trigger = .added
            decision.charge = .counted
        }
    }

    @Test func theEventLogIsPrunedOncePerTransactionToItsBound() throws {
        let store = try StateStore.inMemory(retention: EventLogRetention(maximumRows: 5, maximumAge: day))
        try store.transaction { tx in
            for n in 0..<20 { try tx.appendEvent(time: t0 + Double(n), instanceID: nil, kind: "k", message: "\(n)") }
        }
        #expect(try store.recentEvents(limit: 100).map(\.message) == ["15", "16", "17", "18", "19"])
    }

    @Test func theQuarantineListFollowsTheStoresOwnWrites() throws {
        let store = try StateStore.inMemory()
        let file = PluginFileIdentity(path: "/p.so", size: 10, mtime: 20)
        #expect(try store.quarantined().isEmpty)
        try store.quarantine(file, reason: "crashed", crashCount: 3, at: t0)
        #expect(try store.quarantined().map(\.file) == [file])
        try store.unquarantine(path: "/p.so", at: t0 + 1)
        #expect(try store.quarantined().isEmpty)
    }
}
