import Synchronization
import WidgetHostScheduler

/// What a ``StateStore`` holds of each instance's ledgers and failure, as its
/// own transactions last wrote them: an upsert compares with it in memory
/// and writes only the rows that differ, instead of reading them back.
///
/// An instance is known once this store has written its parts (or knows it
/// has none: a row just inserted). A transaction's changes join what is
/// known only when it commits; every other write to those tables (a removal,
/// a whole-state replacement, a row set aside, raw SQL) forgets what it
/// touches, so what is known is always what the file holds. Unknown
/// instances are read back, as before.
final class WrittenParts: Sendable {
    /// An instance's rows beside its `instance` row.
    ///
    /// The ledgers are kept as the scheduler's values, which share their
    /// storage with the instance's state until it records again (and compare
    /// by identity first): as arrays of times, each instance's ledger was
    /// held twice.
    struct Parts: Sendable, Equatable {
        var reloads: RollingLedger
        var pushes: RollingLedger
        var failure: FailureRecord?

        /// No rows: an instance just inserted.
        static let empty = Parts(reloads: RollingLedger(), pushes: RollingLedger(), failure: nil)

        init(reloads: RollingLedger, pushes: RollingLedger, failure: FailureRecord?) {
            self.reloads = reloads
            self.pushes = pushes
            self.failure = failure
        }

        init(_ s: InstanceState) {
            self.init(reloads: s.ledger, pushes: s.pushLedger, failure: s.lastFailure)
        }
    }

    /// One transaction's changes, applied by ``commit(_:)`` once it committed.
    struct Changes {
        var written: [String: Parts] = [:]
        var forgotten: Set<String> = []
        var forgetAll = false

        mutating func wrote(_ id: String, _ parts: Parts) {
            forgotten.remove(id)
            written[id] = parts
        }

        mutating func forget(_ id: String) {
            written[id] = nil
            forgotten.insert(id)
        }

        mutating func forgetEverything() {
            self = Changes()
            forgetAll = true
        }

        var isEmpty: Bool { written.isEmpty && forgotten.isEmpty && !forgetAll }
    }

    private let known = Mutex<[String: Parts]>([:])

    /// What `id`'s rows are, seen from inside a transaction with `changes`
    /// so far; nil when not known.
    func parts(of id: String, within changes: Changes) -> Parts? {
        if let parts = changes.written[id] { return parts }
        if changes.forgetAll || changes.forgotten.contains(id) { return nil }
        return known.withLock { $0[id] }
    }

    /// Applies a committed transaction's changes.
    func commit(_ changes: Changes) {
        guard !changes.isEmpty else { return }
        known.withLock { known in
            if changes.forgetAll { known = [:] }
            for id in changes.forgotten { known[id] = nil }
            known.merge(changes.written) { $1 }
        }
    }

    /// Forgets everything (a write this type does not follow).
    func forgetAll() {
        known.withLock { $0 = [:] }
    }
}
