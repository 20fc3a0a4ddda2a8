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
    /// Reads the dates of the queued entry and the one before it (what
    /// ``ReloadScheduler/nextEntry(after:in:from:)`` reads first).
    func readAhead() -> UInt64 {
        entries.withUnsafeBufferPointer { entries in
            let i = Int(index)
            guard i >= 0 && i < entries.count else { return 0 }
            return entries[i].date.bitPattern &+ (i > 0 ? entries[i - 1].date.bitPattern : 0)
        }
    }
}
