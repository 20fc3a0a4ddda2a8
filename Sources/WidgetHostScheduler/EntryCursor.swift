import WidgetHostModel

/// What the entry queue keeps with each instance's next entry change: the
/// entries of the instance's timeline (the same storage as the timeline's,
/// not a copy) and the index of the queued entry, where the search for the
/// one after it starts.
///
/// Kept in the queue beside the key, so that the earliest entry change is
/// moved on from the queue's first slot alone: at 100,000 instances,
/// reaching the entries through the instance's record and a per-position
/// cursor cost two cache misses one after the other.
struct EntryCursor: Sendable, Hashable {
    /// The timeline's entries, sorted by date.
    let entries: [EntryRecord]
    /// The index of the queued entry in `entries` (a hint:
    /// ``ReloadScheduler/nextEntry(after:in:from:)`` checks it).
    var index: Int32
}
