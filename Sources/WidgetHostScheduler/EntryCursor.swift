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
/// wheel reads it ahead (``readAhead()``) when its second comes up.
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
    func readAhead() {
        entries.withUnsafeBufferPointer { entries in
            let i = Int(index)
            guard i >= 0 && i < entries.count, let base = entries.baseAddress else { return }
            let first = i > 0 ? i - 1 : i
            let last = i + 1 < entries.count ? i + 1 : i
            ReadAhead.lines(base + first, bytes: (last - first + 1) * MemoryLayout<EntryRecord>.stride)
        }
    }
}

extension TimelineRecord {
    /// Reads every line of the entries ahead (what letting go of them
    /// reads: the array's reference count, beside its first entry, and
    /// each entry's content, to release it).
    func readAheadEntries() {
        // The block's address and size first, the prefetches after: no copy
        // of the array held over them, which the compiler cannot see into
        // (holding one was a retain and a release per timeline).
        let (base, bytes) = entries.withUnsafeBufferPointer {
            (UnsafeRawPointer($0.baseAddress), $0.count * MemoryLayout<EntryRecord>.stride)
        }
        if let base { ReadAhead.lines(base, bytes: bytes) }
    }
}
