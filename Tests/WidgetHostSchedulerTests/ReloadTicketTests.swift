import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// Reloads handed out as tickets (``ReloadTicket``) and completed by ticket.
/// The oracle comparison checks their decisions and completions against the
/// scan on random scenarios; these check what a ticket names over time.
@Suite("Reload tickets")
struct ReloadTicketTests {
    /// Six instances of two plugins and two kinds, all due at `t0`, dealt
    /// out among `shards` shards (a ticket names the same at any count).
    static func scheduler(shards: Int) -> ReloadScheduler {
        var s = ReloadScheduler(configuration: testConfig(), shards: shards, run: 1)
        for i in 0..<6 {
            // Added in an order that is not the batches' order.
            s.add(instance("w\(i)", kind: "k\(1 - i % 2)", plugin: "p\(1 - i / 3)"), at: t0)
        }
        return s
    }

    @Test("come grouped as dueReloads(at:) batches them, each with its decision", arguments: [1, 2, 3])
    func sameAsBatches(shards: Int) throws {
        var byTicket = Self.scheduler(shards: shards)
        var byDecision = Self.scheduler(shards: shards)
        var tickets: [ReloadTicket] = []
        byTicket.dueReloads(at: t0, into: &tickets)
        let batches = byDecision.dueReloads(at: t0)
        #expect(batches.count == 4)
        let decisions = batches.flatMap(\.decisions)
        try #require(tickets.count == decisions.count)
        for (ticket, decision) in zip(tickets, decisions) {
            #expect(byTicket.decision(for: ticket) == decision)
            #expect(byTicket.instance(of: ticket)?.id == decision.instanceID)
            let batch = try #require(batches.first { $0.decisions.contains(decision) })
            #expect(byTicket.pluginAndKind(of: ticket)! == (batch.plugin, batch.kind))
        }
        #expect(Set(tickets.map(\.serial)).count == tickets.count)
        #expect(byTicket.state == byDecision.state)
    }

    @Test(
        "of counted policy reloads keep their records in the instances' lines, others in the table",
        arguments: [1, 2, 3])
    func policyReloadsKeptInTheLines(shards: Int) {
        var s = Self.scheduler(shards: shards)
        var tickets: [ReloadTicket] = []
        var now = t0
        // The first reloads (free: the instances were added) go to the table.
        s.dueReloads(at: now, into: &tickets)
        #expect(tickets.count == 6 && s.flightsInTable == 6)
        for round in 0..<4 {
            let outcome = ReloadOutcome.success(timeline([now], .after(now + 900)))
            let spent = tickets
            s.complete(tickets.map { TicketCompletion(ticket: $0, outcome: outcome) }, at: now)
            #expect(s.flightsInTable == 0 && (0..<6).allSatisfy { !s.isInFlight(at: $0) })
            now = s.nextWakeup()!
            s.dueReloads(at: now, into: &tickets)
            // Counted policy reloads: none in the table, each read back as issued.
            #expect(tickets.count == 6, "round \(round)")
            #expect(s.flightsInTable == 0, "round \(round)")
            for ticket in tickets {
                let decision = s.decision(for: ticket)
                #expect(decision?.trigger == .policy && decision?.charge == .counted && decision?.time == now)
                #expect(decision?.countedInWindow == round + 1 && decision?.allowance != nil)
            }
            // A spent ticket names nothing: the serial in the line is the new one.
            #expect(spent.allSatisfy { s.decision(for: $0) == nil })
        }
        // Failed: each record read back from its line, the failures counted.
        s.complete(tickets.map { TicketCompletion(ticket: $0, outcome: .failure(reason: "no")) }, at: now)
        #expect(s.flightsInTable == 0 && (0..<6).allSatisfy { s.consecutiveFailures(at: $0) == 1 })
    }

    @Test("complete the same as by id, and a ticket given twice is ignored", arguments: [1, 2, 3])
    func completeByTicket(shards: Int) {
        var byTicket = Self.scheduler(shards: shards)
        var byID = Self.scheduler(shards: shards)
        var tickets: [ReloadTicket] = []
        var now = t0
        var spent: [ReloadTicket] = []
        for round in 0..<6 {
            byTicket.dueReloads(at: now, into: &tickets)
            let batches = byID.dueReloads(at: now)
            #expect(tickets.count == batches.flatMap(\.decisions).count)
            let outcome = ReloadOutcome.success(timeline([now], .after(now + 900)))
            var results = tickets.map { TicketCompletion(ticket: $0, outcome: outcome) }
            // Spent tickets of instances in flight again now: ignored.
            results += spent.map { TicketCompletion(ticket: $0, outcome: .timedOut) }
            if round % 2 == 0 {
                byTicket.complete(results, at: now)
            } else {
                for r in results { byTicket.complete(r.ticket, with: r.outcome, at: now) }
            }
            for d in batches.flatMap(\.decisions) { byID.complete(d.instanceID, with: outcome, at: now) }
            #expect(byTicket.state == byID.state)
            spent = tickets
            for ticket in tickets { #expect(byTicket.decision(for: ticket) == nil) }
            guard let wake = byTicket.nextWakeup() else { break }
            now = wake
        }
    }

    @Test("follow their instance when an instance before it is removed", arguments: [1, 2, 3])
    func followRemoval(shards: Int) throws {
        var s = Self.scheduler(shards: shards)
        var tickets: [ReloadTicket] = []
        s.dueReloads(at: t0, into: &tickets)
        let last = try #require(tickets.first { s.instance(of: $0)?.id == "w5" })
        let removedTicket = try #require(tickets.first { s.instance(of: $0)?.id == "w1" })
        #expect(last.position == 5)
        s.remove("w1")
        s.remove("w3")
        #expect(s.instance(of: last)?.id == "w5")
        #expect(s.instance(of: removedTicket) == nil)
        #expect(s.decision(for: last)?.instanceID == "w5")
        s.complete(last, with: .success(timeline([t0], .after(t0 + 900))), at: t0)
        #expect(s.instanceState("w5")?.inFlight == nil)
        #expect(s.instanceState("w5")?.timeline?.policy == .after(t0 + 900))
        #expect(s.instanceState("w4")?.inFlight != nil)
    }

    @Test("stay valid through a new configuration, naming the same batch", arguments: [1, 2, 3])
    func validThroughConfiguration(shards: Int) {
        var s = Self.scheduler(shards: shards)
        var tickets: [ReloadTicket] = []
        s.dueReloads(at: t0, into: &tickets)
        let before = tickets.map { (s.decision(for: $0)!, s.pluginAndKind(of: $0)!) }
        // Groups are renumbered in instance order when the index is made
        // again: the tickets' groups must still name their batches.
        s.remove("w0")
        s.add(instance("w6", kind: "k9", plugin: "p9"), at: t0)
        s.configuration.maximumJitter = 60
        for (ticket, (decision, names)) in zip(tickets, before) {
            guard decision.instanceID != "w0" else {
                #expect(s.decision(for: ticket) == nil)
                continue
            }
            #expect(s.decision(for: ticket) == decision)
            #expect(s.pluginAndKind(of: ticket)! == names)
            s.complete(ticket, with: .success(timeline([t0], .after(t0 + 900))), at: t0)
        }
        for i in 1..<6 { #expect(s.instanceState("w\(i)")?.inFlight == nil, "w\(i)") }
    }

    @Test(
        "replace what the array held, longer or shorter, on one thread or both; none due empties it",
        arguments: [(1, 64), (2, 64), (2, 1), (3, 1)])
    func replaceTheArray(shards: Int, parallelMinimum: Int) {
        // The same scheduler three times, its tickets asked into an empty
        // array, one holding more than the wakeup's six and one fewer.
        var held: [[ReloadTicket]] = [
            [],
            (0..<10).map { ReloadTicket(position: Int32($0), group: 7, serial: 99) },
            [ReloadTicket(position: 3, group: 1, serial: 5)],
        ]
        var schedulers = (0..<3).map { _ in Self.scheduler(shards: shards) }
        for k in 0..<3 {
            schedulers[k].parallelMinimum = parallelMinimum
            schedulers[k].dueReloads(at: t0, into: &held[k])
        }
        #expect(held[0].count == 6)
        #expect(held[1] == held[0] && held[2] == held[0])
        // Every instance in flight: nothing due, the array emptied.
        schedulers[1].dueReloads(at: t0 + 60, into: &held[1])
        #expect(held[1].isEmpty)
    }

    @Test("are void once the state is replaced or their issue rolled back", arguments: [1, 2, 3])
    func voidAfterReplaceAndRollBack(shards: Int) throws {
        var s = Self.scheduler(shards: shards)
        var tickets: [ReloadTicket] = []
        s.dueReloads(at: t0, into: &tickets)
        let first = try #require(tickets.first)
        s.replaceState(s.state)
        // Still in flight, as restored, but no longer by this ticket.
        #expect(s.instanceState("w0")?.inFlight != nil)
        #expect(s.decision(for: first) == nil)
        s.complete(first, with: .timedOut, at: t0)
        #expect(s.instanceState("w0")?.consecutiveFailures == 0)

        var j = Self.scheduler(shards: shards)
        j.beginJournal()
        j.dueReloads(at: t0, into: &tickets)
        let rolledBack = tickets
        j.rollBackJournal()
        for ticket in rolledBack { #expect(j.decision(for: ticket) == nil) }
        // Issued again: new serials, the old tickets still void.
        j.dueReloads(at: t0, into: &tickets)
        #expect(Set(tickets.map(\.serial)).isDisjoint(with: rolledBack.map(\.serial)))
        j.complete(rolledBack[0], with: .timedOut, at: t0)
        for i in 0..<6 {
            #expect(j.instanceState("w\(i)")?.consecutiveFailures == 0)
            #expect(j.instanceState("w\(i)")?.inFlight != nil)
        }
        for ticket in tickets { #expect(j.decision(for: ticket) != nil) }
    }
}
