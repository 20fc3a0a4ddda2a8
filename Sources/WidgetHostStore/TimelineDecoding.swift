import Dispatch
import Synchronization
import WidgetHostModel

/// Reads the timeline rows' entries blobs on a second thread while the
/// caller goes on stepping SQLite (a 100,000-instance restart makes 3.6
/// million content strings: a fifth of its time, now beside the rest).
///
/// The caller copies each blob into a batch (buffers are reused: a batch's
/// memory goes back to a pool once read). Batches wait in a queue that the
/// second thread empties; when more than four wait, the caller reads one
/// itself, and ``finish()`` reads whatever still waits before it collects
/// every outcome, in the order the rows were added: the work is shared,
/// never waited for while there is some to do.
///
/// ```swift
/// var decoding = TimelineDecoding()
/// decoding.add(sequence: 0, id: "w1", policy: .atEnd, blob: bytes)
/// for outcome in decoding.finish() { … }
/// ```
struct TimelineDecoding {
    /// One row's outcome: its timeline, or why it was refused.
    struct Outcome: Sendable {
        var sequence: Int
        var id: String
        var timeline: Result<TimelineRecord, StateStoreError>
    }

    /// A batch's bytes, filled by the caller, then read and emptied by one
    /// thread, then back in the pool: one owner at a time, handed over
    /// through the shared locks (hence unchecked).
    private final class Buffer: @unchecked Sendable {
        var bytes: [UInt8] = []
    }

    private struct Batch: Sendable {
        var buffer: Buffer?
        var rows: [(sequence: Int, id: String, policy: ReloadPolicy, range: Range<Int>)] = []
    }

    private final class Shared: Sendable {
        let queue = DispatchQueue(label: "widgethost.timeline-decoding")
        let group = DispatchGroup()
        let waiting = Mutex<[Batch]>([])
        let pool = Mutex<[Buffer]>([])
        let outcomes = Mutex<[Outcome]>([])

        /// Reads the oldest waiting batch, if any; returns whether there was one.
        func readOne() -> Bool {
            guard let batch = waiting.withLock({ $0.isEmpty ? nil : $0.removeFirst() }), let buffer = batch.buffer
            else { return false }
            var read: [Outcome] = []
            read.reserveCapacity(batch.rows.count)
            buffer.bytes.withUnsafeBytes { all in
                for row in batch.rows {
                    let check = RowCheck(table: "timeline", key: row.id)
                    let timeline = Result { () throws(StateStoreError) in
                        let entries: [EntryRecord]
                        do {
                            entries = try EntriesBlob.decode(UnsafeRawBufferPointer(rebasing: all[row.range]))
                        } catch {
                            throw check.corrupt("entries: \(error)")
                        }
                        return try StateTransaction.checkedTimeline(entries, policy: row.policy, check: check)
                    }
                    read.append(Outcome(sequence: row.sequence, id: row.id, timeline: timeline))
                }
            }
            outcomes.withLock { $0.append(contentsOf: read) }
            buffer.bytes.removeAll(keepingCapacity: true)
            pool.withLock { $0.append(buffer) }
            return true
        }
    }

    private let shared = Shared()
    private var batch = Batch()
    /// Bytes copied into a batch before it is handed over (4 MB).
    let batchBytes: Int
    static let maximumWaiting = 4

    init(batchBytes: Int = 4 << 20) { self.batchBytes = batchBytes }

    /// Adds one row: its blob is copied, read later.
    mutating func add(sequence: Int, id: String, policy: ReloadPolicy, blob: UnsafeRawBufferPointer) {
        let buffer: Buffer
        if let current = batch.buffer {
            buffer = current
        } else {
            buffer = shared.pool.withLock { $0.popLast() } ?? Buffer()
            buffer.bytes.reserveCapacity(batchBytes)
            batch.buffer = buffer
        }
        let start = buffer.bytes.count
        buffer.bytes.append(contentsOf: blob)
        batch.rows.append((sequence, id, policy, start..<buffer.bytes.count))
        if buffer.bytes.count >= batchBytes { send() }
    }

    /// Every row's outcome, in the order added: reads what still waits,
    /// then waits for the batch the other thread may be reading.
    mutating func finish() -> [Outcome] {
        if !batch.rows.isEmpty { send() }
        while shared.readOne() {}
        shared.group.wait()
        return shared.outcomes.withLock { $0 }.sorted { $0.sequence < $1.sequence }
    }

    private mutating func send() {
        let full = batch
        batch = Batch()
        let shared = shared
        let waiting = shared.waiting.withLock { waiting in
            waiting.append(full)
            return waiting.count
        }
        shared.queue.async(group: shared.group) { _ = shared.readOne() }
        if waiting > Self.maximumWaiting { _ = shared.readOne() }
    }
}
