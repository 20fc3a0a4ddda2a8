import WidgetHostModel

/// What the entry queue keeps with each instance's next entry change: the
/// entries of the instance's timeline (the same storage as the timeline's,
/// not a copy) and the index of the queued entry, where the search for the
/// one after it starts.
///
/// Kept in the entry queue (``EntryWheel``) as the position's payload, so
/// that the earliest entry change is moved on without reading the
/// instance's records (at 100,000 instances, reaching the entries through
/// the instance's record cost two cache misses one after the other); the
/// wheel reads it ahead (``readAheadBlock``) when its second comes up.
struct EntryCursor: Sendable, Hashable {
    /// The timeline's entries, sorted by date.
    let entries: [EntryRecord]
    /// The index of the queued entry in `entries` (a hint:
    /// ``ReloadScheduler/nextEntry(after:in:from:)`` checks it).
    var index: Int32
}

extension EntryCursor: WheelPayload {
    /// Reads the dates of the queued entry and its neighbours: what
    /// ``ReloadScheduler/nextEntry(after:in:from:)`` reads when the queued
    /// entry's date has come (the one before, to trust the index; the
    /// queued one, passed; the one after, the answer). An entry is 48
    /// bytes: the three are on two or three cache lines.
    var readAheadBlock: ReadAhead.Block? {
        entries.withUnsafeBufferPointer { entries in
            let i = Int(index)
            guard i >= 0 && i < entries.count, let base = entries.baseAddress else { return nil }
            let first = i > 0 ? i - 1 : i
            let last = i + 1 < entries.count ? i + 1 : i
            return (UnsafeRawPointer(base + first), (last - first + 1) * MemoryLayout<EntryRecord>.stride)
        }
    }
}

extension TimelineRecord {
    /// Where the entries are, nil when there is none, for their every line
    /// to be read ahead of a reload (what letting go of them reads: the
    /// array's reference count, beside its first entry, and each entry's
    /// content, to release it). For prefetching only: not to be read through.
    var entriesBlock: ReadAhead.Block? {
        entries.withUnsafeBufferPointer { entries in
            entries.baseAddress.map { (UnsafeRawPointer($0), entries.count * MemoryLayout<EntryRecord>.stride) }
        }
    }
}
