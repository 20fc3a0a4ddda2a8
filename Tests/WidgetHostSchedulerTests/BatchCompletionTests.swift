import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// `complete(_:at:)` (a batch's results at once, read ahead) against
/// `complete(_:with:at:)` one after another, at the scheduler's own
/// threshold for reading ahead (the oracle comparison lowers it to 1).
@Suite("Completing a batch at once")
struct BatchCompletionTests {
    /// A result for the `n`-th reload: timelines of every policy, failures
    /// and timeouts.
    static func outcome(_ n: Int, _ decision: ReloadDecision) -> ReloadOutcome {
        let now = decision.time
        switch n % 7 {
        case 0: return .failure(reason: "down")
        case 1: return .timedOut
        case 2: return .success(timeline([now, now + 600, now + 1_200], .atEnd))
        case 3: return .success(timeline([now], n % 5 == 0 ? .never : .after(now + 900)))
        default: return .success(timeline([now], .after(now + Double(300 + 300 * (n % 5)))))
        }
    }

    /// 24 instances over two days; 600 over six hours, whose batches (300
    /// at the start) are read ahead a chunk at a time, across chunks.
    @Test(
        "gives the same decisions and state as one result at a time, duplicates and unknown ids ignored",
        arguments: [(24, 2.0), (600, 0.25)])
    func sameAsOneAtATime(count: Int, days: Double) {
        var batched = ReloadScheduler(configuration: testConfig(jitter: 120))
        var single = ReloadScheduler(configuration: testConfig(jitter: 120))
        #expect(count >= 3 * batched.readAheadMinimum)
        for i in 0..<count {
            let w = instance("widget-with-a-long-identifier-\(i)", kind: "k\(i % 2)", app: "app\(i % 3)")
            batched.add(w, at: t0)
            single.add(w, at: t0)
        }
        var reloads = 0
        var largest = 0
        var now = t0
        while now < t0 + days * day {
            guard let wake = batched.nextWakeup() else { break }
            #expect(single.nextWakeup() == wake)
            now = wake
            let a = batched.dueReloads(at: now)
            let b = single.dueReloads(at: now)
            #expect(a == b)
            guard a == b else { return }
            for batch in a {
                var results = batch.decisions.enumerated().map { n, d in
                    ReloadCompletion(instanceID: d.instanceID, outcome: Self.outcome(reloads + n, d))
                }
                reloads += results.count
                largest = max(largest, results.count)
                if let first = results.first {
                    results.append(ReloadCompletion(instanceID: first.instanceID, outcome: .timedOut))
                }
                results.append(ReloadCompletion(instanceID: "nobody", outcome: .timedOut))
                batched.complete(results, at: now)
                for r in results { single.complete(r.instanceID, with: r.outcome, at: now) }
            }
            #expect(batched.state == single.state)
            guard batched.state == single.state else { return }
        }
        // The batches were large enough to be read ahead, and there were many.
        #expect(largest >= batched.readAheadMinimum)
        if count > 2 * SchedulerCore.readAheadChunk { #expect(largest > 2 * SchedulerCore.readAheadChunk) }
        #expect(reloads > Int((2.5 * days).rounded(.up)) * count)
    }

    /// Tickets completed with `complete(taking:at:)`: the outcomes moved in,
    /// the array left empty with its capacity; a ticket given twice and a
    /// spent one ignored, as one at a time.
    @Test("by ticket, taken from the array, the same as one at a time", arguments: [24, 600])
    func takingSameAsOneAtATime(count: Int) {
        var taking = ReloadScheduler(configuration: testConfig(jitter: 120))
        var single = ReloadScheduler(configuration: testConfig(jitter: 120))
        for i in 0..<count {
            let w = instance("w\(i)", kind: "k\(i % 2)", app: "app\(i % 3)")
            taking.add(w, at: t0)
            single.add(w, at: t0)
        }
        var tickets: [ReloadTicket] = []
        var other: [ReloadTicket] = []
        var results: [TicketCompletion] = []
        var spent: ReloadTicket?
        var reloads = 0
        var now = t0
        while now < t0 + day {
            guard let wake = taking.nextWakeup() else { break }
            #expect(single.nextWakeup() == wake)
            now = wake
            taking.dueReloads(at: now, into: &tickets)
            single.dueReloads(at: now, into: &other)
            #expect(tickets == other)
            guard tickets == other else { return }
            for (n, ticket) in tickets.enumerated() {
                let decision = taking.decision(for: ticket)!
                results.append(TicketCompletion(ticket: ticket, outcome: Self.outcome(reloads + n, decision)))
            }
            reloads += tickets.count
            if let first = tickets.first { results.append(TicketCompletion(ticket: first, outcome: .timedOut)) }
            if let spent { results.append(TicketCompletion(ticket: spent, outcome: .timedOut)) }
            spent = tickets.last
            let given = results.map { $0 }  // a copy of its own: `results` stays unique
            let capacity = results.capacity
            taking.complete(taking: &results, at: now)
            #expect(results.isEmpty && results.capacity == capacity)
            for r in given { single.complete(r.ticket, with: r.outcome, at: now) }
            #expect(taking.state == single.state)
            guard taking.state == single.state else { return }
        }
        #expect(reloads > 2 * count)
    }
}
