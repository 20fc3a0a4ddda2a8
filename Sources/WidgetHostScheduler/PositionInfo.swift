/// What the scheduler's hot paths read of an instance position besides its
/// queued reload (whose time, coalescing deadline and free-cap flag the
/// reload wheel keeps together, ``ReloadWheel/Node``): its plugin-and-kind
/// group (batching without hashing strings), its app's number (its charge
/// without hashing the app's name), whether it is queued for a recheck, and
/// its id's jitter fraction (``StableJitter/fraction(for:)``: an id never
/// changes, so it is hashed once, when the instance enters, not at every
/// completion, where hashing it read the cold record's id and took 124 of a
/// reload's 2,731 instructions).
///
/// 16 bytes, in the second cache line of the position's ``InstanceLine``
/// (beside the cold record, which a reload reads too): as separate arrays,
/// an event read several cache lines at random places (at 100,000
/// instances, each a miss).
struct PositionInfo: Sendable, Hashable {
    /// The plugin-and-kind group; the sign bit is `hasRecheck`.
    private var storedGroup: UInt32
    /// The app's number; the sign bit is `mayHaveEntryChange`.
    private var storedApp: UInt32
    /// The instance's jitter fraction, in [0, 1).
    let jitterFraction: Double

    init(group: Int32, app: Int32, jitterFraction: Double) {
        precondition(group >= 0 && app >= 0, "group and app numbers are counts, never negative")
        storedGroup = UInt32(group)
        storedApp = UInt32(app)
        self.jitterFraction = jitterFraction
    }

    /// The plugin-and-kind group, an index.
    var group: Int { Int(storedGroup & 0x7FFF_FFFF) }

    /// Whether the position is queued in the scheduler's rechecks (so that
    /// planning an instance with none, nearly all of them, reads nothing of
    /// that queue: its slot for the position is a cache miss of its own).
    var hasRecheck: Bool {
        get { storedGroup & 0x8000_0000 != 0 }
        set { storedGroup = newValue ? storedGroup | 0x8000_0000 : storedGroup & 0x7FFF_FFFF }
    }

    /// Whether the position may be queued in the scheduler's entry changes:
    /// false when it certainly is not (an entry-less timeline, nearly every
    /// instance of some plugins), so that planning its next entry reads
    /// nothing of that queue (its slot for the position is a cache miss of
    /// its own). True may be stale (the queue let the position go when its
    /// last entry was shown): the queue is then asked.
    var mayHaveEntryChange: Bool {
        get { storedApp & 0x8000_0000 != 0 }
        set { storedApp = newValue ? storedApp | 0x8000_0000 : storedApp & 0x7FFF_FFFF }
    }

    /// The app's number, an index.
    var app: Int { Int(storedApp & 0x7FFF_FFFF) }
}
