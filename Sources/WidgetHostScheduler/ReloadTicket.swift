/// A reload issued by ``ReloadScheduler/dueReloads(at:limit:into:)``, as
/// plain numbers: which instance, which batch, and the reload's serial
/// number. 16 bytes, no references: handing out a ticket copies no string
/// and retains nothing, where a ``ReloadDecision`` carries three strings and
/// a trigger that may hold two more.
///
/// A driver that calls the provider needs the instance
/// (``ReloadScheduler/instance(of:)``) and gives the result back by ticket
/// (``ReloadScheduler/complete(_:with:at:)-(ReloadTicket,_,_)``); the
/// decision's details (trigger, charge, deferral, budget) are made only
/// when asked for (``ReloadScheduler/decision(for:)``), for a log line or
/// a report.
///
/// ```swift
/// var tickets: [ReloadTicket] = []
/// scheduler.dueReloads(at: now, into: &tickets)
/// for ticket in tickets {
///     let instance = scheduler.instance(of: ticket)!
///     let timeline = provider.timeline(for: instance)
///     scheduler.complete(ticket, with: .success(timeline), at: clock.now())
/// }
/// ```
///
/// A ticket names one issue of one reload: given back twice, or after the
/// reload was completed another way, it is ignored, even when the instance
/// is in flight again meanwhile (a completion by id cannot tell those
/// apart). It stays valid when instances are added or removed and when
/// the configuration changes; a state replaced
/// (``ReloadScheduler/replaceState(_:)``) or restored from its Codable
/// form ends it, as does a ``ReloadScheduler/rollBackJournal()`` that
/// undoes its issue.
public struct ReloadTicket: Sendable, Hashable {
    /// The instance's position when the reload was issued
    /// (``ReloadScheduler/instance(at:)``): removing an instance before it
    /// moves the ones after it down by one, which
    /// ``ReloadScheduler/instance(of:)`` follows.
    public let position: Int32
    /// The reload's batch: one number per plugin and kind
    /// (``ReloadScheduler/pluginAndKind(of:)``). The tickets of one call
    /// come grouped by batch, the batches in the order of their plugin and
    /// kind, each in the order of the instances, as
    /// ``ReloadScheduler/dueReloads(at:limit:)`` orders its decisions.
    public let group: Int32
    /// The reload's serial number, unique in the scheduler's life (from 1).
    public let serial: UInt64

    /// A ticket: the scheduler makes them; a driver only copies them. Public
    /// for schedulers of the same shape (the benchmark's baselines, test
    /// doubles): ``ReloadScheduler`` checks every ticket it is given, and
    /// ignores one it did not issue.
    public init(position: Int32, group: Int32, serial: UInt64) {
        self.position = position
        self.group = group
        self.serial = serial
    }
}

/// How the reload of one ticket ended, as
/// ``ReloadScheduler/complete(_:at:)-([TicketCompletion],_)`` takes a
/// batch of them.
public struct TicketCompletion: Sendable, Hashable {
    /// The reload (from ``ReloadScheduler/dueReloads(at:limit:into:)``).
    public var ticket: ReloadTicket
    /// How it ended.
    public var outcome: ReloadOutcome

    /// The result of the reload of `ticket`.
    public init(ticket: ReloadTicket, outcome: ReloadOutcome) {
        self.ticket = ticket
        self.outcome = outcome
    }
}
