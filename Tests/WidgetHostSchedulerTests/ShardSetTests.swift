import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// A scheduler whose instances are dealt out among shards (``ShardSet``)
/// answers as one engine does. The oracle comparison checks that over
/// random scenarios; these check the moves it does not make: a
/// reconfiguration that replaces the state, tickets completed after their
/// wakeup was rolled back or their instances removed.
@Suite("Sharded scheduler: one engine's answers")
struct ShardSetTests {
    /// Six instances of two plugins and two kinds, all due at `t0`, dealt
    /// out one at a time (`run` 1) so that every shard holds some; every
    /// part of a wakeup on the shards' threads.
    static func scheduler(shards: Int) -> ReloadScheduler {
        var s = ReloadScheduler(configuration: testConfig(), shards: shards, run: 1)
        s.parallelMinimum = 1
        s.tracksDisplayChanges = true
        for i in 0..<6 { s.add(instance("w\(i)", kind: "k\(i % 2)", plugin: "p\(i / 3)"), at: t0) }
        return s
    }

    @Test("a reconfiguration that changes an instance's kind voids every reload in flight", arguments: [2, 3])
    func reconfigurationReplacesEveryShard(shards: Int) {
        var one = Self.scheduler(shards: 1)
        var many = Self.scheduler(shards: shards)
        var oneTickets: [ReloadTicket] = []
        var manyTickets: [ReloadTicket] = []
        one.dueReloads(at: t0, into: &oneTickets)
        many.dueReloads(at: t0, into: &manyTickets)
        #expect(oneTickets.count == 6 && manyTickets.count == 6)
        var changes: [Int] = []
        one.takeDisplayChanges(into: &changes)
        many.takeDisplayChanges(into: &changes)
        let reconfigured = (
            one.reconfigure("w1", as: instance("w1", kind: "k9", plugin: "p0"), at: t0 + 60),
            many.reconfigure("w1", as: instance("w1", kind: "k9", plugin: "p0"), at: t0 + 60)
        )
        #expect(reconfigured == (true, true))
        // One engine replaced its state: no ticket names a reload in flight.
        for (a, b) in zip(oneTickets, manyTickets) {
            #expect(one.decision(for: a) == nil)
            #expect(many.decision(for: b) == nil)
        }
        var oneChanges: [Int] = []
        var manyChanges: [Int] = []
        one.takeDisplayChanges(into: &oneChanges)
        many.takeDisplayChanges(into: &manyChanges)
        #expect(oneChanges == manyChanges)
        one.complete(oneTickets.map { TicketCompletion(ticket: $0, outcome: .timedOut) }, at: t0 + 60)
        many.complete(manyTickets.map { TicketCompletion(ticket: $0, outcome: .timedOut) }, at: t0 + 60)
        #expect(one.state == many.state)
        let oneDay = drive(&one, until: t0 + day, JournalTests.answer)
        let manyDay = drive(&many, until: t0 + day, JournalTests.answer)
        #expect(oneDay == manyDay)
        #expect(one.state == many.state)
    }

    @Test("with a limit, the first reloads in global order, as one engine issues them", arguments: [2, 3])
    func limitedWakeups(shards: Int) {
        // Twelve instances of three apps, one in the foreground (its policy
        // reloads free, under the host-wide cap: issued in global order),
        // dealt out one at a time; every part on the shards' threads.
        func scheduler(shards: Int) -> ReloadScheduler {
            var s = ReloadScheduler(configuration: testConfig(), shards: shards, run: 1)
            s.parallelMinimum = 1
            for i in 0..<12 {
                s.add(instance("w\(i)", kind: "k\(i % 2)", plugin: "p\(i % 3)", app: "a\(i % 3)"), at: t0)
            }
            s.handle(.appForeground("a1"), at: t0)
            return s
        }
        var one = scheduler(shards: 1)
        var many = scheduler(shards: shards)
        var oneTickets: [ReloadTicket] = []
        // Not empty: each wakeup's tickets replace what the array held,
        // none at all (a limit of 0) included.
        var manyTickets = (0..<5).map { ReloadTicket(position: Int32($0), group: 0, serial: 1) }
        var wakeups = 0
        while let wake = one.nextWakeup(), wake < t0 + day, wakeups < 2_000 {
            #expect(many.nextWakeup() == wake)
            let limit = [3, 1, 0, 7][wakeups % 4]
            one.dueReloads(at: wake, limit: limit, into: &oneTickets)
            many.dueReloads(at: wake, limit: limit, into: &manyTickets)
            #expect(oneTickets.map(\.position) == manyTickets.map(\.position), "wakeup \(wakeups)")
            #expect(oneTickets.map { one.decision(for: $0) } == manyTickets.map { many.decision(for: $0) })
            one.complete(
                oneTickets.map { TicketCompletion(ticket: $0, outcome: JournalTests.answer(one.decision(for: $0)!)) },
                at: wake)
            many.complete(
                manyTickets.map { TicketCompletion(ticket: $0, outcome: JournalTests.answer(many.decision(for: $0)!)) },
                at: wake)
            #expect(one.state == many.state, "wakeup \(wakeups)")
            wakeups += 1
        }
        #expect(wakeups > 100)
    }

    @Test("tickets of a rolled-back wakeup, or of removed instances, complete nothing", arguments: [2, 3])
    func voidTicketsCompleteNothing(shards: Int) {
        var one = Self.scheduler(shards: 1)
        var many = Self.scheduler(shards: shards)
        for index in 0..<2 {
            var oneTickets: [ReloadTicket] = []
            var manyTickets: [ReloadTicket] = []
            if index == 0 {
                // Instances added and issued under a journal, then rolled back.
                one.beginJournal()
                many.beginJournal()
                for i in 6..<9 {
                    one.add(instance("w\(i)"), at: t0)
                    many.add(instance("w\(i)"), at: t0)
                }
                one.dueReloads(at: t0, into: &oneTickets)
                many.dueReloads(at: t0, into: &manyTickets)
                one.rollBackJournal()
                many.rollBackJournal()
            } else {
                // Issued, then the last instances removed (in every shard).
                one.dueReloads(at: one.nextWakeup() ?? t0, into: &oneTickets)
                many.dueReloads(at: many.nextWakeup() ?? t0, into: &manyTickets)
                for id in ["w5", "w4", "w3"] {
                    one.remove(id)
                    many.remove(id)
                }
            }
            #expect(!manyTickets.isEmpty && manyTickets.count == oneTickets.count, "case \(index)")
            var oneResults = oneTickets.map { TicketCompletion(ticket: $0, outcome: .timedOut) }
            var manyResults = manyTickets.map { TicketCompletion(ticket: $0, outcome: .timedOut) }
            one.complete(taking: &oneResults, at: t0 + 60)
            many.complete(taking: &manyResults, at: t0 + 60)
            #expect(one.state == many.state, "case \(index)")
        }
        let oneDay = drive(&one, until: t0 + day, JournalTests.answer)
        let manyDay = drive(&many, until: t0 + day, JournalTests.answer)
        #expect(oneDay == manyDay)
        #expect(one.state == many.state)
    }

    @Test("an older wakeup's tickets complete their instances after removals in another shard", arguments: [2, 3])
    func olderTicketsAfterRemovals(shards: Int) {
        var one = Self.scheduler(shards: 1)
        var many = Self.scheduler(shards: shards)
        var oneOlder: [ReloadTicket] = []
        var manyOlder: [ReloadTicket] = []
        one.dueReloads(at: t0, into: &oneOlder)
        many.dueReloads(at: t0, into: &manyOlder)
        // A later wakeup's tickets (instances added since) are the last
        // ones issued: the older ones are found through the global places.
        var oneLater: [ReloadTicket] = []
        var manyLater: [ReloadTicket] = []
        for i in 6..<9 {
            one.add(instance("w\(i)"), at: t0 + 60)
            many.add(instance("w\(i)"), at: t0 + 60)
        }
        one.dueReloads(at: t0 + 60, into: &oneLater)
        many.dueReloads(at: t0 + 60, into: &manyLater)
        #expect(manyOlder.count == 6 && manyLater.count == 3)
        // Removed below the others, in the first shard: every later
        // instance moves down, in every shard's global positions.
        for id in ["w0", "w2"] {
            one.remove(id)
            many.remove(id)
        }
        let outcome = ReloadOutcome.success(timeline([t0 + 60], .after(t0 + 3_600)))
        // Each older ticket names the same instance as one engine's (w0's and w2's none).
        #expect(oneOlder.count == manyOlder.count)
        for (a, b) in zip(oneOlder, manyOlder) { #expect(one.instance(of: a)?.id == many.instance(of: b)?.id) }
        #expect(manyOlder.compactMap { many.instance(of: $0)?.id }.count == 4)
        var oneResults = (oneOlder + oneLater).map { TicketCompletion(ticket: $0, outcome: outcome) }
        var manyResults = (manyOlder + manyLater).map { TicketCompletion(ticket: $0, outcome: outcome) }
        one.complete(taking: &oneResults, at: t0 + 60)
        many.complete(taking: &manyResults, at: t0 + 60)
        #expect(one.state == many.state)
        for i in [1, 3, 4, 5, 6, 7, 8] {
            #expect(many.instanceState("w\(i)")?.inFlight == nil, "w\(i)")
            #expect(many.instanceState("w\(i)")?.timeline?.policy == .after(t0 + 3_600), "w\(i)")
        }
    }
}
