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
    func readAhead() -> UInt64 {
        entries.withUnsafeBufferPointer { entries in
            let i = Int(index)
            guard i >= 0 && i < entries.count else { return 0 }
            return entries[i].date.bitPattern &+ (i > 0 ? entries[i - 1].date.bitPattern : 0)
                &+ (i + 1 < entries.count ? entries[i + 1].date.bitPattern : 0)
        }
    }
}

extension TimelineRecord {
    /// Reads every line of the entries ahead (what letting go of them
    /// reads: the array's reference count, beside its first entry, and
    /// each entry's content, to release it). Returns a number made from
    /// what was read.
    func readAheadEntries() -> UInt64 {
        entries.withUnsafeBufferPointer { entries in
            guard let base = entries.baseAddress else { return 0 }
            return ReadAhead.lines(base, bytes: entries.count * MemoryLayout<EntryRecord>.stride)
        }
    }
}
