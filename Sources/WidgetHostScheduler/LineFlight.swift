/// A counted policy reload in flight, kept in its instance's line (three
/// bytes of the cold record, ``ColdRecord/lineFlight``) instead of the
/// table of reloads in flight (``InFlightTable``): the steady state's
/// reload, issued on its plan, is nearly all of what the line already
/// holds.
///
/// Its record is rebuilt from the line: its time is the last reload's
/// (``ColdRecord/lastReloadAt``), due since the policy's due time
/// (``HotRecord/policyDue``), its attempt the failures in a row
/// (``HotRecord/consecutiveFailures``), and its deferral, if any, from
/// that due time until its time. What the line does not hold is here: the
/// deferral's cause, the reloads counted in the window and the allowance,
/// each in a byte. A record that the line cannot rebuild exactly (another
/// trigger or charge, names or a would-be deferral, other times, counts
/// over 255) goes to the table; ``init(_:hot:lastReloadAt:)`` decides.
///
/// An issue writes the line it has read, and a completion reads only the
/// line: a plain reload takes no slot of the table, and the table's line
/// is neither written nor read.
struct LineFlight: Sendable {
    /// 0: no deferral; otherwise the cause's code
    /// (``InFlightTable/Stored/code(of:)``).
    private(set) var deferralCause: UInt8 = 0
    /// The reloads counted in the window ending at the reload's time
    /// (``InFlightRecord/countedInWindow``).
    private(set) var countedInWindow: UInt8 = 0
    /// The allowance of the instance's viewing tier at the reload's time
    /// (``InFlightRecord/allowance``).
    private(set) var allowance: UInt8 = 0

    /// Nothing (a new line's value; read only while the line's slot is
    /// ``ColdRecord/keptInLine``).
    init() {}

    /// The line's form of a counted policy reload issued at
    /// `lastReloadAt`, due since `dueSince`, with the `deferral` it was
    /// issued with, `counted` reloads in the window and `allowance`, in an
    /// instance whose hot record is `hot`; nil when the line cannot rebuild
    /// it exactly.
    @inline(__always)
    init?(
        dueSince: Double, deferral: Deferral?, counted: Int, allowance: Int, hot: borrowing HotRecord,
        lastReloadAt: Double
    ) {
        guard dueSince.bitPattern == hot.storedPolicyDue.bitPattern, UInt8(exactly: counted) != nil,
            UInt8(exactly: allowance) != nil
        else { return nil }
        if let deferral {
            guard deferral.from.bitPattern == dueSince.bitPattern,
                let until = deferral.until, until.bitPattern == lastReloadAt.bitPattern
            else { return nil }
            deferralCause = InFlightTable.Stored.code(of: deferral.cause)
        }
        countedInWindow = UInt8(counted)
        self.allowance = UInt8(allowance)
    }

    /// The line's form of `record`, in an instance whose hot record is
    /// `hot` and whose last reload was at `lastReloadAt` (the stored
    /// number: NaN for none); nil when the line cannot rebuild it exactly.
    init?(_ record: borrowing InFlightRecord, hot: borrowing HotRecord, lastReloadAt: Double) {
        guard record.trigger == .policy, record.charge == .counted, record.names == nil,
            record.wouldHaveBeenDeferred == nil, let counted = record.countedInWindow,
            let allowance = record.allowance, record.time.bitPattern == lastReloadAt.bitPattern,
            record.attempt == hot.consecutiveFailures
        else { return nil }
        self.init(
            dueSince: record.dueSince, deferral: record.deferral, counted: counted, allowance: allowance, hot: hot,
            lastReloadAt: lastReloadAt)
    }

    /// The record it keeps, with the serial number `serial`, in an
    /// instance whose hot record is `hot` and whose last reload was at
    /// `lastReloadAt`.
    func record(hot: borrowing HotRecord, lastReloadAt: Double, serial: UInt64) -> InFlightRecord {
        let dueSince = hot.storedPolicyDue
        var record = InFlightRecord(
            time: lastReloadAt, dueSince: dueSince, trigger: .policy, charge: .counted,
            attempt: hot.consecutiveFailures,
            deferral: deferralCause == 0
                ? nil
                : Deferral(
                    from: dueSince, until: lastReloadAt, cause: InFlightTable.Stored.cause(of: deferralCause)),
            wouldHaveBeenDeferred: nil, allowance: Int(allowance), countedInWindow: Int(countedInWindow))
        record.serial = serial
        return record
    }
}
