import Foundation
import Testing
import WidgetHostModel
import WidgetHostScheduler

@testable import WidgetHostStore

/// An upsert compares an instance's ledgers and failure with what the
/// store last wrote of them (``WrittenParts``) instead of reading them back:
/// what it remembers must always be what the file holds, through rolled-back
/// transactions, removals, whole-state saves and raw SQL.
@Suite("State store: the parts it wrote")
struct WrittenPartsTests {
    /// What the file holds of one instance beside its row.
    struct Parts: Equatable, CustomStringConvertible {
        var reloads: [Double]
        var pushes: [Double]
        var failure: FailureRecord?

        init(_ s: InstanceState) {
            reloads = s.ledger.times
            pushes = s.pushLedger.times
            failure = s.lastFailure
        }

        var description: String { "reloads \(reloads), pushes \(pushes), failure \(failure.map { "\($0)" } ?? "none")" }
    }

    struct Rollback: Error {}

    @Test(arguments: [1, 2, 3] as [UInt64])
    func whatAnUpsertRemembersIsWhatTheFileHolds(seed: UInt64) throws {
        let store = try StateStore(path: temporaryPath("parts"))
        var random = SplitMix64(seed: seed)
        let ids = (0..<5).map { "w\($0)" }
        // The states in memory, and what the file should hold.
        var memory: [String: InstanceState] = [:]
        var file: [String: Parts] = [:]
        for id in ids {
            memory[id] = InstanceState(
                instance: WidgetInstance(id: id, plugin: "p", kind: "k", app: "a"), addedAt: t0)
        }
        var clock = t0
        func times(_ count: Int) -> [Double] {
            (0..<count).map { _ in clock - Double(Int.random(in: 0..<86_400, using: &random)) }
        }

        for step in 0..<400 {
            clock += 300
            // Change some instances in memory, as the scheduler would.
            for id in ids where Int.random(in: 0..<3, using: &random) == 0 {
                var s = memory[id]!
                switch Int.random(in: 0..<7, using: &random) {
                case 0: s.ledger = RollingLedger(times: s.ledger.times + [clock])
                case 1: s.ledger = RollingLedger(times: Array(s.ledger.times.dropFirst(2)) + [clock])
                case 2: s.ledger = RollingLedger(times: times(Int.random(in: 0..<6, using: &random)))
                case 3: s.pushLedger = RollingLedger(times: s.pushLedger.times + [clock, clock])
                case 4: s.pushLedger = RollingLedger()
                case 5:
                    s.lastFailure = FailureRecord(
                        time: clock, reason: "crash \(step)", consecutiveFailures: step % 4 + 1, retryAt: clock + 60)
                default: s.lastFailure = nil
                }
                memory[id] = s
            }
            // Write some of them; one transaction in five is rolled back.
            let written = ids.filter { _ in Bool.random(using: &random) }
            let rolledBack = Int.random(in: 0..<5, using: &random) == 0
            do {
                try store.transaction { tx in
                    for id in written { try tx.upsert(memory[id]!, timeline: false) }
                    if rolledBack { throw Rollback() }
                }
                for id in written { file[id] = Parts(memory[id]!) }
            } catch is Rollback {}
            // Now and then, writes that do not go through an upsert.
            switch Int.random(in: 0..<25, using: &random) {
            case 0:
                let id = ids.randomElement(using: &random)!
                try store.transaction { tx in _ = try tx.removeInstance(id) }
                file[id] = nil
            case 1:
                let id = ids.randomElement(using: &random)!
                try store.execute(sql: "DELETE FROM reload_ledger WHERE instanceID = '\(id)'")
                file[id]?.reloads = []
            case 2:
                var state = SchedulerState()
                state.instances = ids.map { memory[$0]! }
                try store.saveSchedulerState(state)
                for id in ids { file[id] = Parts(memory[id]!) }
            default: break
            }
            let loaded = try store.loadSchedulerState()
            var held: [String: Parts] = [:]
            for s in loaded.instances { held[s.instance.id] = Parts(s) }
            try #require(held == file, "step \(step) (seed \(seed)): the file holds \(held), expected \(file)")
        }
    }
}
