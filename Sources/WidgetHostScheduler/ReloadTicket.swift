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

extension ReloadTicket {
    /// Appends `issued` (in the order of the instances) to `tickets`
    /// grouped by batch, the batches in the order of their plugin and kind
    /// (`ranks`: each group's place in that order, by group number): a
    /// counting sort by rank, which keeps the instances' order within each
    /// batch. `grouped`: they are of more than one group (else they are
    /// appended as they are, the usual case). `counts` is scratch.
    static func appendGrouped(
        _ issued: [ReloadTicket], grouped: Bool, ranks: [Int32], counts: inout [Int], to tickets: inout [ReloadTicket]
    ) {
        guard !issued.isEmpty else { return }
        guard grouped else {
            tickets.append(contentsOf: issued)
            return
        }
        counts.removeAll(keepingCapacity: true)
        counts.append(contentsOf: repeatElement(0, count: ranks.count + 1))
        let start = tickets.count
        // Room for the batches, each ticket written over after: copied
        // from `issued` in one move, where as many copies of one ticket
        // took some ten instructions each.
        tickets.append(contentsOf: issued)
        counts.withUnsafeMutableBufferPointer { counts in
            for ticket in issued { counts[Int(ranks[Int(ticket.group)]) + 1] += 1 }
            for r in 1..<counts.count { counts[r] += counts[r - 1] }
            tickets.withUnsafeMutableBufferPointer { out in
                for ticket in issued {
                    let rank = Int(ranks[Int(ticket.group)])
                    out[start + counts[rank]] = ticket
                    counts[rank] += 1
                }
            }
        }
    }
}
