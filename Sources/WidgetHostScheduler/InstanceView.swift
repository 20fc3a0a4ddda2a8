/// An instance's two records as the rules read them (``ReloadRules``):
/// pointers into the scheduler's arrays, or into one ``InstanceState``,
/// valid for one call. What is read on every plan comes from the hot
/// record; the cold one is read only when its flags say it holds something
/// (the rare values), or for a counted charge (the ledger).
struct InstanceView {
    let hot: UnsafePointer<HotRecord>
    let cold: UnsafePointer<ColdRecord>

    /// Calls `body` with a view of `state`.
    static func of<R>(_ state: InstanceState, _ body: (InstanceView) -> R) -> R {
        withUnsafePointer(to: state.hot) { hot in
            withUnsafePointer(to: state.cold) { cold in body(InstanceView(hot: hot, cold: cold)) }
        }
    }

    var isInFlight: Bool { hot.pointee.isInFlight }
    var isVisible: Bool { hot.pointee.isVisible }
    var addedAt: Double { hot.pointee.addedAt }
    var policyDue: Double? { hot.pointee.policyDue }
    var timelineReceivedAt: Double? { hot.pointee.timelineReceivedAt }
    var visibleSince: Double? { hot.pointee.visibleSince }
    /// The last counted reload's time (the ledger's last), from the hot record.
    var ledgerLast: Double? { hot.pointee.ledgerLast }
    var views: ViewHistory { hot.pointee.views }
    var consecutiveFailures: Int { hot.pointee.consecutiveFailures }
    var request: PendingRequest? { hot.pointee.hasRare ? cold.pointee.request : nil }
    var locationChangeAt: Double? { hot.pointee.hasRare ? cold.pointee.locationChangeAt : nil }
    var backoffUntil: Double? { hot.pointee.hasRare ? cold.pointee.backoffUntil : nil }
}
