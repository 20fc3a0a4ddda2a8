import Foundation
import GRDB
import Testing
import WidgetHostModel
import WidgetHostScheduler
import WidgetHostTestSupport

@testable import WidgetHostStore

let t0 = 1_800_000_000.0
let hour = 3600.0
let day = 86_400.0

func temporaryPath(_ name: String) -> String {
    ScratchDirectory.path("store-\(UUID().uuidString.prefix(8))/\(name).sqlite")
}

/// A scheduler run for a virtual day: policy reloads, failures, explicit
/// requests, apps in the foreground.
func simulatedDay() -> ReloadScheduler {
    var config = SchedulerConfiguration()
    config.maximumJitter = 0
    var s = ReloadScheduler(configuration: config)
    for n in 0..<4 {
        s.add(
            WidgetInstance(
                id: "w\(n)", plugin: "p\(n % 2)", kind: "k", family: n == 3 ? .systemLarge : .systemSmall,
                configuration: "{\"n\":\(n)}", app: "app\(n % 2)", isVisible: n != 2, usesLocation: n == 1),
            at: t0)
    }
    s.handle(.appForeground("app1"), at: t0 + 10)
    var count = 0
    // The day in thirds, with a push to every instance (one kind) between
    // them: the push ledgers fill.
    for third in 1...3 {
        if third > 1 { s.push(kind: "k", at: t0 + Double(third - 1) * 8 * hour) }
        s.run(until: t0 + Double(third) * 8 * hour, clock: VirtualClock(start: t0 + Double(third - 1) * 8 * hour)) {
            decision in
            count += 1
            if count % 7 == 0 { return .failure(reason: "boom \(count)") }
            let t = decision.time
            return .success(
                TimelineRecord(
                    entries: [
                        EntryRecord(
                            date: t, relevance: Relevance(score: 1.5, duration: 60), contentJSON: "{\"c\":\(count)}"),
                        EntryRecord(date: t + 1800, contentJSON: "{}"),
                    ],
                    policy: count % 3 == 0 ? .after(t + 3600) : .atEnd))
        }
    }
    s.handle(.appIntent(instance: "w0"), at: t0 + day)
    s.handle(.sessionStarted(app: "app0", kind: .audio), at: t0 + day)
    _ = s.dueReloads(at: t0 + day)  // leaves a reload in flight
    s.handle(.instanceHidden("w1"), at: t0 + day + 1)
    s.reloadAllTimelines(app: "app0", at: t0 + day + 2)
    return s
}

@Suite struct StateStoreTests {
    @Test func migratesFromEmpty() throws {
        let store = try StateStore.inMemory()
        #expect(try store.appliedMigrations() == ["v1", "v2", "v3", "v4", "v5"])
        #expect(StateStore.knownMigrations == ["v1", "v2", "v3", "v4", "v5"])
        #expect(try store.loadSchedulerState() == SchedulerState())
        #expect(try store.checkIntegrity())
    }

    @Test func walModeOnDisk() throws {
        let path = temporaryPath("wal")
        let store = try StateStore(path: path)
        #expect(try store.journalMode() == "wal")
        #expect(FileManager.default.fileExists(atPath: path))
        // Reopening runs no migration twice.
        let again = try StateStore(path: path)
        #expect(try again.appliedMigrations() == ["v1", "v2", "v3", "v4", "v5"])
    }

    @Test func roundTripsARealSchedulerDay() throws {
        let scheduler = simulatedDay()
        let state = scheduler.state
        #expect(state.instances.contains { $0.inFlight != nil })
        #expect(state.instances.contains { $0.lastFailure != nil } || state.instances.contains { $0.request != nil })
        #expect(state.instances.contains { !$0.ledger.times.isEmpty })
        #expect(state.instances.contains { !$0.pushLedger.times.isEmpty }, "the push budget is part of the state")
        let path = temporaryPath("roundtrip")
        do {
            let store = try StateStore(path: path)
            try store.saveSchedulerState(state)
        }
        let reopened = try StateStore(path: path)
        let loaded = try reopened.loadSchedulerState()
        #expect(loaded == state)
        // Granular writes give the same result as a whole save.
        let granular = try StateStore.inMemory()
        for instance in state.instances { try granular.upsert(instance) }
        try granular.saveApps(state.apps)
        try granular.transaction { tx in
            try tx.replaceFreeLedger(state.freeLedger)
            try tx.observe(state.now!)
        }
        #expect(try granular.loadSchedulerState() == state)
        // A restored scheduler plans the same next wakeup.
        let restored = ReloadScheduler(configuration: scheduler.configuration, state: loaded)
        #expect(restored.nextWakeup() == scheduler.nextWakeup())
    }

    @Test func recordReloadAndCompletionFollowTheScheduler() throws {
        var config = SchedulerConfiguration()
        config.maximumJitter = 0
        var s = ReloadScheduler(configuration: config)
        let store = try StateStore.inMemory()
        s.add(WidgetInstance(id: "a", plugin: "p", kind: "k", app: "app"), at: t0)
        try store.upsert(s.instanceState("a")!)
        var time = t0
        for round in 0..<30 {
            guard let wake = s.nextWakeup() else { break }
            time = wake
            for batch in s.dueReloads(at: time) {
                for d in batch.decisions {
                    try store.recordReload(d, instance: s.instanceState(d.instanceID)!, freeLedger: s.state.freeLedger)
                    let outcome: ReloadOutcome =
                        round % 5 == 4
                        ? .timedOut
                        : .success(
                            TimelineRecord(
                                entries: [EntryRecord(date: time, contentJSON: "{}")], policy: .after(time + 900)))
                    s.complete(d.instanceID, with: outcome, at: time)
                    try store.recordCompletion(
                        instanceID: d.instanceID, outcome: outcome, instance: s.instanceState(d.instanceID)!, at: time)
                }
            }
        }
        let loaded = try store.loadSchedulerState()
        #expect(loaded.instances == s.state.instances)
        #expect(loaded.now == s.state.now)
        #expect(try store.recentEvents(limit: 5).count == 5)
        #expect(try store.recentEvents(limit: 1000).contains { $0.kind == "failure" })
    }

    @Test func aFailedTransactionLeavesNothing() throws {
        let store = try StateStore.inMemory()
        let state = simulatedDay().state
        try store.saveSchedulerState(state)
        struct Injected: Error {}
        var changed = state.instances[0]
        changed.consecutiveFailures = 99
        changed.ledger = RollingLedger()
        #expect(throws: Injected.self) {
            try store.transaction { tx in
                try tx.upsert(changed)
                try tx.removeInstance("w1")
                try tx.appendEvent(time: t0, instanceID: nil, kind: "x", message: "partial")
                throw Injected()
            }
        }
        #expect(try store.loadSchedulerState() == state)
        #expect(try store.recentEvents().allSatisfy { $0.kind != "x" })
    }

    @Test func eventLogRetentionIsBounded() throws {
        let store = try StateStore.inMemory(retention: EventLogRetention(maximumRows: 50, maximumAge: hour))
        for n in 0..<200 { try store.appendEvent(time: t0 + Double(n), kind: "e", message: "\(n)") }
        #expect(try store.eventCount() == 50)
        let events = try store.recentEvents(limit: 100)
        #expect(events.first?.message == "150")
        #expect(events.last?.message == "199")
        try store.appendEvent(time: t0 + 2 * hour, kind: "e", message: "late")
        #expect(try store.eventCount() == 1)
        #expect(try store.pruneEventLog(now: t0 + 3 * hour + 1) == 1)
    }

    @Test func quarantineIsKeyedByPathSizeAndMtime() throws {
        let store = try StateStore.inMemory()
        let file = PluginFileIdentity(path: "/plugins/a.so", size: 1000, mtime: 1_700_000_000_123_456_789)
        try store.quarantine(file, reason: "crashed", crashCount: 3, at: t0)
        #expect(try store.isQuarantined(file))
        var touched = file
        touched.mtime += 1
        #expect(try !store.isQuarantined(touched))
        var resized = file
        resized.size = 1001
        #expect(try !store.isQuarantined(resized))
        let again = try store.quarantine(file, reason: "crashed again", crashCount: 4, at: t0 + 10)
        #expect(again.since == t0 && again.crashCount == 4)
        try store.quarantine(touched, reason: "new build crashed", crashCount: 1, at: t0 + 20)
        #expect(try store.quarantined().map(\.file) == [touched])
        #expect(try store.unquarantine(path: file.path, at: t0 + 30))
        #expect(try store.quarantined().isEmpty)

        let real = ScratchDirectory.make("store-file") + "/file.so"
        try Data("x".utf8).write(to: URL(fileURLWithPath: real))
        let identity = try #require(PluginFileIdentity.of(path: real))
        #expect(identity.size == 1)
        try store.quarantine(identity, reason: "r", crashCount: 1, at: t0)
        try Data("xy".utf8).write(to: URL(fileURLWithPath: real))
        #expect(try !store.isQuarantined(#require(PluginFileIdentity.of(path: real))))
    }
}
