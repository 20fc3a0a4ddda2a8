import Foundation
import GRDB
import Testing
import WidgetHostModel
import WidgetHostScheduler

@testable import WidgetHostStore

/// Counts statements on the writer's connection (used only on that thread).
final class StatementCounter: @unchecked Sendable {
    var count = 0
    var snapshots: [String] = []
}

@Suite struct CrashConsistencyTests {
    /// What `kill -9` leaves is the files as they are between two writes to
    /// them. The writer's connection copies its database and WAL files (no
    /// shared-memory index, as after a crash) before every 7th statement,
    /// often in the middle of a transaction; each copy, opened as a store,
    /// must pass the integrity checks and show whole transactions only.
    @Test func copiesTakenMidTransactionShowWholeTransactionsOnly() throws {
        let path = temporaryPath("crash")
        let directory = (path as NSString).deletingLastPathComponent
        let store = try StateStore(path: path)
        let counter = StatementCounter()
        store.writer.writeWithoutTransaction { db in
            db.trace(options: .statement) { _ in
                counter.count += 1
                guard counter.count % 7 == 0 else { return }
                let copy = directory + "/copy-\(counter.count)"
                try? FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
                for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: path + suffix) {
                    try? FileManager.default.copyItem(atPath: path + suffix, toPath: copy + "/state.sqlite" + suffix)
                }
                counter.snapshots.append(copy + "/state.sqlite")
            }
        }
        // Transaction n: instance w(n % 6) with consecutiveFailures = n, a
        // ledger of n % 5 + 1 times, a failure record saying n, one event "n".
        for n in 1...120 {
            var s = InstanceState(
                instance: WidgetInstance(id: "w\(n % 6)", plugin: "p", kind: "k", app: "app"), addedAt: t0)
            s.consecutiveFailures = n
            for k in 0...(n % 5) { s.ledger.record(t0 + Double(n * 10 + k), window: day) }
            s.timeline = TimelineRecord(entries: [EntryRecord(date: t0, contentJSON: "{\"n\":\(n)}")], policy: .atEnd)
            try store.transaction { tx in
                try tx.upsert(s)
                try tx.appendEvent(time: t0 + Double(n), instanceID: s.instance.id, kind: "write", message: "\(n)")
            }
        }
        store.writer.writeWithoutTransaction { db in db.trace(options: .statement, nil) }
        #expect(counter.snapshots.count > 50)
        var checked = 0
        for snapshot in counter.snapshots where FileManager.default.fileExists(atPath: snapshot) {
            let copy = try StateStore(path: snapshot)
            #expect(try copy.checkIntegrity())
            let state = try copy.loadSchedulerState()
            let events = try copy.recentEvents(limit: 1000).compactMap { Int($0.message) }
            let newest = state.instances.map(\.consecutiveFailures).max() ?? 0
            // The newest transaction present is whole: its event is there, and no later one.
            #expect((events.max() ?? 0) == newest)
            for s in state.instances {
                let n = s.consecutiveFailures
                #expect(s.ledger.times.count == n % 5 + 1, "instance \(s.instance.id) n=\(n) in \(snapshot)")
                #expect(s.timeline?.entries.first?.contentJSON == "{\"n\":\(n)}")
                #expect(events.contains(n))
            }
            checked += 1
        }
        #expect(checked > 50)
    }
}
