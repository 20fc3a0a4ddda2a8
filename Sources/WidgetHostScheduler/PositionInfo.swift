/// What the scheduler's hot paths read of an instance position besides its
/// queued time: the coalescing deadline of its queued plan, its plugin-and-
/// kind group (batching without hashing strings), its app's number (its
/// charge without hashing the app's name) and whether its plan has a
/// candidate under the host-wide free-reload cap.
///
/// 16 bytes, one record per position: as four arrays, an event read four
/// cache lines at random places (at 100,000 instances, each a miss).
struct PositionInfo: Sendable, Hashable {
    /// The coalescing deadline of the plan queued in the due queue.
    var latest: Double = .infinity
    /// The plugin-and-kind group.
    private var storedGroup: Int32
    /// The app's number; the sign bit is `underFreeCap`.
    private var storedApp: UInt32

    init(group: Int32, app: Int32) {
        precondition(group >= 0 && app >= 0, "group and app numbers are counts, never negative")
        storedGroup = group
        storedApp = UInt32(app)
    }

    /// The plugin-and-kind group, an index.
    var group: Int { Int(storedGroup) }

    /// The app's number, an index.
    var app: Int { Int(storedApp & 0x7FFF_FFFF) }

    /// Whether the queued plan has a candidate under the host-wide free-reload
    /// cap (which moves it later as other instances consume the cap): such a
    /// queued time is planned again before it is used.
    var underFreeCap: Bool {
        get { storedApp & 0x8000_0000 != 0 }
        set { storedApp = newValue ? storedApp | 0x8000_0000 : storedApp & 0x7FFF_FFFF }
    }
}
