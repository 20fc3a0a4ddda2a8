/// How many instances there are, shown, reloading and failing: `status`'s
/// summary, counted by ``ReloadScheduler/instanceCounts()`` in one pass over
/// the instances' hot records.
public struct InstanceCounts: Sendable, Equatable {
    /// Every instance.
    public var instances = 0
    /// The instances shown.
    public var visible = 0
    /// The instances with a reload in flight.
    public var inFlight = 0
    /// The instances whose last reload failed.
    public var failing = 0

    public init() {}
}
