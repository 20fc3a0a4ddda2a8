import Foundation
import Testing
import WidgetHostControl
import WidgetHostModel
import WidgetHostTestSupport

@testable import WidgetHostDaemon
@testable import WidgetHostStore

/// The event stream over a real SQLite file: ids, replay, gaps, live
/// delivery, the in-process subscription API and its bound.
@Suite("Event log and subscriptions")
struct EventLogTests {
    let directory: String

    init() throws {
        directory = ScratchDirectory.path("eventlog-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func store(retention: EventLogRetention = .standard) throws -> StateStore {
        try StateStore(path: directory + "/state.sqlite", retention: retention)
    }

    func append(_ store: StateStore, _ count: Int, instance: String? = nil, from time: Double = 1_800_000_000) throws {
        try store.transaction { tx in
            for n in 0..<count {
                try tx.appendEvent(
                    time: time + Double(n), instanceID: instance, kind: "reload", message: "n\(n)",
                    data: #"{"reason":"policy","counted":true}"#)
            }
        }
    }

    @Test func replayThenLiveInIdOrderEachOnce() throws {
        let store = try store()
        try append(store, 5)
        let log = EventLog(store: store)
        let subscription = try log.subscribe(after: 2)
        #expect(subscription.start.gap == nil)
        #expect(subscription.start.lastEventId == 5)
        try append(store, 3)
        log.publishCommitted()
        var ids: [Int64] = []
        while case let batch = subscription.take(limit: 2), !batch.isEmpty { ids += batch.map(\.id) }
        #expect(ids == [3, 4, 5, 6, 7, 8])
        // The stored details come back typed.
        let event = try #require(try store.events(after: 7).first.map { EventLog.watchEvent($0) })
        #expect(event.details?.reason == "policy" && event.details?.counted == true)
        // Without an id: new events only.
        let fresh = try log.subscribe()
        #expect(fresh.take().isEmpty)
        try append(store, 1)
        log.publishCommitted()
        #expect(fresh.take().map(\.id) == [9])
    }

    @Test func idsSurvivePruningAndAGapIsReported() throws {
        let store = try store(retention: EventLogRetention(maximumRows: 10, maximumAge: .infinity))
        try append(store, 30)
        let window = try store.eventLogWindow()
        #expect(window.oldestID == 21 && window.newestID == 30)
        let log = EventLog(store: store)
        // Saw up to 20: nothing lost.
        let fine = try log.subscribe(after: 20)
        #expect(fine.start.gap == nil)
        #expect(fine.take().map(\.id) == Array(21...30))
        // Saw up to 5: 6-20 are gone; the stream goes on from the oldest kept.
        let late = try log.subscribe(after: 5)
        let gap = try #require(late.start.gap)
        #expect(gap.reason == "pruned" && gap.after == 5)
        #expect(gap.message.contains("6-20"))
        #expect(late.take().map(\.id) == Array(21...30))
        // An id this log never wrote (another or a reset state file).
        let stranger = try log.subscribe(after: 500)
        #expect(stranger.start.gap?.reason == "unknown")
        #expect(stranger.take().isEmpty)
        // Even an emptied log (every row older than the age bound) keeps counting.
        try store.execute(sql: "DELETE FROM event_log")
        try append(store, 1)
        #expect(try store.eventLogWindow().newestID == 31)
    }

    @Test func aFilterKeepsOnlyThoseInstances() throws {
        let store = try store()
        try append(store, 3, instance: "a")
        try append(store, 3, instance: "b")
        try append(store, 2)
        let log = EventLog(store: store)
        let subscription = try log.subscribe(after: 0, instances: ["b"])
        #expect(subscription.take().map(\.instance) == ["b", "b", "b"])
    }

    @Test func aConsumerThatFallsBehindIsEndedNotBuffered() throws {
        let store = try store()
        let log = EventLog(store: store, maximumQueued: 50)
        let slow = try log.subscribe()
        let quick = try log.subscribe()
        for _ in 0..<6 {
            try append(store, 10)
            log.publishCommitted()
            _ = quick.take(limit: 1000)
        }
        #expect(slow.take().isEmpty)
        #expect(slow.ended == .overflow)
        #expect(quick.ended == nil)
        #expect(log.subscriberCount == 1)
    }

    @Test func inProcessConsumersAwaitEvents() async throws {
        let store = try store()
        let log = EventLog(store: store)
        let subscription = try log.subscribe()
        let waiter = Task { try await subscription.next() }
        try await Task.sleep(for: .milliseconds(50))
        try append(store, 2)
        log.publishCommitted()
        let batch = try await waiter.value
        #expect(batch?.map(\.id) == [1, 2])
        let ending = Task { try await subscription.next() }
        subscription.cancel()
        #expect(try await ending.value == nil)
        #expect(log.subscriberCount == 0)
    }

    /// The `data` column is written by hand: it reads back as the details
    /// written, with the members sorted by name, as `JSONEncoder` would.
    @Test func eventDetailsReadBackAsWritten() throws {
        var generator = SplitMix64(seed: 20_261_127)  // seeded: a failure repeats
        let texts = ["", "policy", "quote \" backslash \\ nl\n tab\t ctl\u{1} é 🌍", "free(instanceAdded)"]
        for round in 0..<500 {
            var d = WatchEventDetails()
            func maybe<T>(_ value: @autoclosure () -> T) -> T? { Bool.random(using: &generator) ? value() : nil }
            d.reason = maybe(texts.randomElement(using: &generator)!)
            d.counted = maybe(Bool.random(using: &generator))
            d.charge = maybe(texts.randomElement(using: &generator)!)
            d.budgetUsed = maybe(Int.random(in: 0...96, using: &generator))
            d.budgetAllowance = maybe(Int.random(in: 40...96, using: &generator))
            d.outcome = maybe(texts.randomElement(using: &generator)!)
            d.entries = maybe(Int.random(in: 0...10_000, using: &generator))
            d.entryDate = maybe(1_800_000_000 + Double.random(in: -1e6...1e6, using: &generator))
            d.nextEntryDate = maybe(Double(Int.random(in: 0...253_402_300_799, using: &generator)))
            d.policy = maybe(texts.randomElement(using: &generator)!)
            d.relevance = maybe([0, 50, 1e-7, -3.25, 1e300].randomElement(using: &generator)!)
            d.plugin = maybe(texts.randomElement(using: &generator)!)
            d.kind = maybe(texts.randomElement(using: &generator)!)
            d.family = maybe(texts.randomElement(using: &generator)!)
            d.app = maybe(texts.randomElement(using: &generator)!)
            d.origin = maybe(texts.randomElement(using: &generator)!)
            d.order = maybe(
                (0..<Int.random(in: 0...3, using: &generator)).map { _ in texts.randomElement(using: &generator)! })
            // A protocol line is the bytes JSONEncoder writes (JSONTextEncoder).
            let event = WatchEvent(
                id: Int64(round), time: 1_800_000_000.25, type: "reload", instance: d.kind, message: texts[round % 4],
                details: d)
            let foundation = JSONEncoder()
            foundation.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let failure = ControlResponse.failure(id: round, .badRequest, texts[round % 4], field: d.app)
            #expect(try ControlCoding.encode(event) == Array(try foundation.encode(event)) + [0x0A])
            #expect(try ControlCoding.encode(failure) == Array(try foundation.encode(failure)) + [0x0A])
            let text = try #require(EventLog.data(d))
            let back = try JSONDecoder().decode(WatchEventDetails.self, from: Data(text.utf8))
            #expect(back == d, "round \(round): \(text)")
            let names = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]).keys
            let positions = names.map { text.range(of: "\"\($0)\":")!.lowerBound }
            #expect(zip(names, positions).sorted { $0.1 < $1.1 }.map(\.0) == names.sorted(), "\(text)")
        }
        var infinite = WatchEventDetails()
        infinite.relevance = .infinity
        infinite.reason = "policy"
        #expect(EventLog.data(infinite) == #"{"reason":"policy"}"#)
    }

    /// An unknown id is answered with the ten nearest ids, not every id:
    /// most leading bytes in common first, then in order of id.
    @Test func theNearestIdsToAnUnknownOne() {
        let ids = (0..<100_000).map { "w\($0)" } + ["kitchen-clock", "kitchen-weather", "kids"]
        let nearest = Daemon.nearest(to: "kitchen-wether", in: ids)
        #expect(nearest.prefix(3) == ["kitchen-weather", "kitchen-clock", "kids"])
        #expect(Daemon.nearest(to: "w4242x", in: ids).first == "w4242")
        #expect(Daemon.nearest(to: "w4242x", in: ids).count == 10)
        #expect(Daemon.nearest(to: "a", in: ["b", "c"]) == ["b", "c"])
        #expect(Daemon.nearest(to: "a", in: []).isEmpty)
    }
}
