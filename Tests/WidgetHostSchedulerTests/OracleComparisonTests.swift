import PropertyBased
import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// Runs the shipped, indexed ``ReloadScheduler`` and the plain scan
/// (``ScanScheduler``) side by side on one random scenario
/// (``OracleScenario``) and returns the first difference: every
/// `nextWakeup()`, every `dueReloads(at:)` (each reload's time, trigger,
/// counted/free, deferral, would-have-been deferral, budget), and the whole
/// state after each step. The shipped scheduler gets every other batch's
/// results in one `complete(_:at:)`, the others one at a time; every
/// third call it hands out tickets (``ReloadTicket``), whose decisions are
/// compared, and their results go back by ticket.
struct OracleComparison {
    var reloads = 0
    var wakeups = 0
    /// Batches completed, so that every other one goes back at once.
    var batches = 0
    var difference: String?

    /// `shards`: how many shards the shipped scheduler deals its
    /// instances among (``ShardSet``): its answers must be one engine's.
    init(_ scenario: OracleScenario, shards: Int = 1) {
        let c = scenario.configuration
        var fast = ReloadScheduler(configuration: c, shards: shards, run: 1)
        // Two shards: every wakeup's parts on the shards' threads, however few.
        if shards == 2 { fast.parallelMinimum = 1 }
        // Every batch and the coming reloads read ahead, however few (a
        // scenario has 1-10 instances).
        fast.readAheadMinimum = 1
        fast.comingReadAheadMinimum = 0
        fast.tracksDisplayChanges = true
        var scan = ScanScheduler(configuration: c)
        let end = scenario.end
        var ids: [String] = []
        for (n, choice) in scenario.instances.enumerated() {
            let w = OracleScenario.instance(n, choice)
            fast.add(w, at: t0)
            scan.add(w, at: t0)
            ids.append(w.id)
        }
        var created = scenario.instances.count
        let script = scenario.script

        func compareState(_ at: String) -> Bool {
            guard fast.state == scan.state else {
                difference = "state differs \(at)"
                return false
            }
            guard fast.recordsAreInStep else {
                difference = "a hot record's flags differ from its cold record \(at)"
                return false
            }
            return true
        }
        // What each instance showed at the last wakeup: every one whose
        // displayed entry changed since must be among the display changes
        // the scheduler reports (`simulate --display` and `--html` read
        // only those). Every other wakeup takes only the changes caused by
        // an entry's date (as the daemon's `entry` events do): then every
        // instance whose displayed entry changed without a new timeline
        // must be among them.
        var shown: [String: Double] = [:]
        // When each instance's timeline was received, as of the last wakeup
        // (-infinity: none); an id missing was not there.
        var received: [String: Double] = [:]
        var changed: [Int] = []
        var checks = 0
        func checkDisplayChanges(at now: Double) -> Bool {
            changed.removeAll()
            checks += 1
            let entryDatesOnly = checks % 2 == 0
            fast.takeDisplayChanges(into: &changed, causes: entryDatesOnly ? .entryDate : [.newTimeline, .entryDate])
            guard changed == Array(Set(changed)).sorted() else {
                difference = "display changes at \(now - t0) not in order or repeated: \(changed)"
                return false
            }
            for (p, id) in fast.instanceIDs.enumerated() {
                let date = fast.displayedEntry(of: id, at: now)?.date
                let receivedAt = fast.instanceState(id)?.timelineReceivedAt ?? -.infinity
                defer {
                    shown[id] = date
                    received[id] = receivedAt
                }
                guard date != shown[id] else { continue }
                if entryDatesOnly && received[id] != receivedAt { continue }
                guard changed.contains(p) else {
                    difference =
                        "\(id) shows the entry of \((date ?? .nan) - t0) at \(now - t0), not reported as a display change"
                        + (entryDatesOnly ? " caused by an entry's date" : "")
                    return false
                }
            }
            return true
        }
        var calls = 0
        var tickets: [ReloadTicket] = []
        var spentTickets: [ReloadTicket] = []
        func reloadDue(at now: Double) -> Bool {
            let (fastBefore, scanBefore) = (fast, scan)
            // Every third call by ticket: the batches are made from the
            // tickets' decisions, and the results go back by ticket.
            calls += 1
            let byTicket = calls % 3 == 0
            var a: [ReloadBatch] = []
            if byTicket {
                fast.dueReloads(at: now, into: &tickets)
                for ticket in tickets {
                    guard let decision = fast.decision(for: ticket), let names = fast.pluginAndKind(of: ticket),
                        fast.instance(of: ticket)?.id == decision.instanceID
                    else {
                        difference = "ticket \(ticket) at \(now - t0) names no reload in flight"
                        return false
                    }
                    if a.last?.plugin == names.plugin && a.last?.kind == names.kind {
                        a[a.count - 1].decisions.append(decision)
                    } else {
                        a.append(ReloadBatch(plugin: names.plugin, kind: names.kind, time: now, decisions: [decision]))
                    }
                }
            } else {
                a = fast.dueReloads(at: now)
            }
            let b = scan.dueReloads(at: now)
            guard a == b else {
                difference =
                    "dueReloads(at: \(now - t0)) differ:\n  index \(a)\n  scan  \(b)\n"
                    + Self.plans(fastBefore, scanBefore, ids, at: now)
                return false
            }
            for batch in a {
                // Every other batch of the run goes back in one
                // `complete(_:at:)`, with an id given twice and an id unknown
                // (both ignored, as they are one at a time), the others one
                // at a time; by ticket, a third in one `complete(_:at:)`, a
                // third taken (`complete(taking:at:)`), a third one at a time.
                batches += 1
                var results: [ReloadCompletion] = []
                for d in batch.decisions {
                    let outcome = scenario.outcome(reloads, at: now)
                    reloads += 1
                    results.append(ReloadCompletion(instanceID: d.instanceID, outcome: outcome))
                }
                if byTicket {
                    // The batch's tickets, with a ticket given twice and
                    // one spent in an earlier call (both ignored).
                    let mine = tickets.filter {
                        fast.pluginAndKind(of: $0).map { $0 == (batch.plugin, batch.kind) } ?? false
                    }
                    var byTicket = zip(mine, results).map { TicketCompletion(ticket: $0, outcome: $1.outcome) }
                    if let first = byTicket.first {
                        byTicket.append(TicketCompletion(ticket: first.ticket, outcome: .timedOut))
                    }
                    if let spent = spentTickets.last {
                        byTicket.append(TicketCompletion(ticket: spent, outcome: .timedOut))
                    }
                    spentTickets.append(contentsOf: mine)
                    switch batches % 3 {
                    case 0: fast.complete(byTicket, at: now)
                    case 1:
                        fast.complete(taking: &byTicket, at: now)
                        if !byTicket.isEmpty {
                            difference = "complete(taking:) at \(now - t0) left \(byTicket.count) results"
                            return false
                        }
                    default: for r in byTicket { fast.complete(r.ticket, with: r.outcome, at: now) }
                    }
                } else if batches % 2 == 0, let first = results.first {
                    results.append(ReloadCompletion(instanceID: first.instanceID, outcome: .timedOut))
                    results.append(ReloadCompletion(instanceID: "unknown", outcome: .timedOut))
                    fast.complete(results, at: now)
                } else {
                    for r in results { fast.complete(r.instanceID, with: r.outcome, at: now) }
                }
                for r in results { scan.complete(r.instanceID, with: r.outcome, at: now) }
            }
            return compareState("after the reloads at \(now - t0)")
        }

        var next = 0
        var steps = 0
        // Bounds on the steps and reloads: with answers that are all due at
        // once (an `atEnd` without entries, an `after` in the past), developer
        // mode's 1-second floor reloads every second for days, and the state
        // compared after each holds every one in its ledger. A scenario
        // usually makes about 40 of each; the bounds are 50-100 times that.
        while steps < 4_000 && reloads < 2_000 {
            steps += 1
            let wake = fast.nextWakeup()
            let expected = scan.nextWakeup()
            guard wake == expected else {
                difference = "nextWakeup \(wake.map { $0 - t0 } as Any) != \(expected.map { $0 - t0 } as Any)"
                return
            }
            wakeups += 1
            let eventTime = next < script.count ? script[next].time : .infinity
            if eventTime <= (wake ?? .infinity) && eventTime <= end {
                let (time, step) = script[next]
                next += 1
                switch step {
                case .event(let e):
                    fast.handle(e, at: time)
                    scan.handle(e, at: time)
                case .add(let choice):
                    let w = OracleScenario.instance(created, choice)
                    created += 1
                    let (a, b) = (fast.add(w, at: time), scan.add(w, at: time))
                    guard a == b else {
                        difference = "add(\(w.id)) at \(time - t0) returned \(a) and the scan \(b)"
                        return
                    }
                    ids.append(w.id)
                case .remove(let index):
                    let id = ids[index % ids.count]
                    let (a, b) = (fast.remove(id), scan.remove(id))
                    guard a == b else {
                        difference = "remove(\(id)) at \(time - t0) returned \(a) and the scan \(b)"
                        return
                    }
                case .endHold(let index):
                    guard !ids.isEmpty else { break }
                    let id = ids[index % ids.count]
                    fast.endHold(of: id, at: time)
                    scan.endHold(of: id, at: time)
                case .wake:
                    // A driver woken for something else asks what is due.
                    guard reloadDue(at: time), checkDisplayChanges(at: time) else { return }
                }
                guard compareState("after the event at \(time - t0)") else { return }
                continue
            }
            guard let wake, wake <= end else { break }
            guard reloadDue(at: wake), checkDisplayChanges(at: wake) else { return }
        }
    }
}

extension OracleComparison {
    /// Each instance's plan and tier at `now` in both schedulers, as they
    /// were before a call whose answers differ: what a reader of a failure
    /// needs first.
    static func plans(_ fast: ReloadScheduler, _ scan: ScanScheduler, _ ids: [String], at now: Double) -> String {
        func text(_ plan: PlannedReload?) -> String {
            guard let plan else { return "none" }
            let deferral = plan.deferral.map { " \($0.cause) from \($0.from - t0)" } ?? ""
            return "at \(plan.time - t0) latest \(plan.latest - t0) \(plan.trigger) \(plan.charge)\(deferral)"
        }
        var lines: [String] = []
        for id in ids where fast.instanceState(id) != nil || scan.instanceState(id) != nil {
            let (a, b) = (fast.plannedReload(of: id, at: now), scan.plannedReload(of: id, at: now))
            let tiers = "tier \(fast.tier(of: id, at: now).map { "\($0)" } ?? "-")"
            let same = a == b && fast.tier(of: id, at: now) == scan.tier(of: id, at: now)
            let queued =
                fast.queuedReload(of: id).map { " (queued at \($0.time - t0), latest \($0.latest - t0))" } ?? ""
            let scanSide = same ? "" : "; scan \(text(b)) tier \(scan.tier(of: id, at: now).map { "\($0)" } ?? "-")"
            lines.append("  \(id) \(tiers): index \(text(a))\(queued)\(scanSide)")
        }
        return "plans at \(now - t0), before the call:\n" + lines.joined(separator: "\n")
    }
}

@Suite("The indexed scheduler against the plain scan")
struct OracleComparisonTests {
    /// 1,600 random scenarios in four shards, the same at every run unless
    /// `WIDGETHOST_PROPERTY_SEED` says otherwise; a failing one is shrunk
    /// (see ``checkScenarios(count:of:shard:shrinkSeconds:sourceLocation:_:)``).
    @Test("same wakeups, reloads and state over thousands of random scenarios", arguments: 0..<4)
    func sameAsScan(shard: Int) async {
        var reloads = 0
        var wakeups = 0
        let held = await checkScenarios(count: 400, of: OracleScenario.generator, shard: shard) { scenario in
            let run = OracleComparison(scenario)
            reloads += run.reloads
            wakeups += run.wakeups
            return run.difference
        }
        guard held else { return }
        // The scenarios must do something: a shard makes 104,000-114,000
        // reloads and 193,000-211,000 wakeups (eight shards, 2026-11-27).
        #expect(reloads > 50_000 * ScenarioSeeds.scale)
        #expect(wakeups > 90_000 * ScenarioSeeds.scale)
    }

    /// The same with the instances dealt out among 2 and 3 shards: a
    /// scenario's 1-10 instances, added and removed as it goes, so that
    /// every shard holds some, some shards none, and a wakeup's batch
    /// merges reloads of several shards.
    /// Two shards run every wakeup's parts on the shards' threads, three
    /// on the caller's (a handoff per part makes two shards' scenarios
    /// several times slower on a busy machine: fewer of them).
    @Test("the same at 2 and 3 shards", arguments: [2, 3])
    func shardedSameAsScan(shards: Int) async {
        var reloads = 0
        let count = shards == 2 ? 100 : 300
        let held = await checkScenarios(count: count, of: OracleScenario.generator, shard: shards) { scenario in
            let run = OracleComparison(scenario, shards: shards)
            reloads += run.reloads
            return run.difference
        }
        guard held else { return }
        #expect(reloads > 100 * count * ScenarioSeeds.scale)
    }

    /// Scenarios the random ones found, kept as their seeds: the first
    /// scenario `OracleScenario.generator` makes from each (as
    /// `.fixedSeed` would). If the generator changes, a seed makes another
    /// scenario: then add the small scenario the failure shrank to as a
    /// rule test (RuleTests) instead.
    @Test(
        "scenarios that once differed",
        arguments: [
            // 2026-11-27: a counted reload held by the budget until its tier rose at
            // the next hour was, at that hour, due since it came due (with the
            // coalescing slack of a reload not deferred), and batched with a
            // reload 94 s later; the index, not replanning it at that hour,
            // issued it alone at the hour (`recheckTime` covered only reloads
            // already held when planned).
            "Df5ieXDabq3+IDUaH5vf2h9+WuXpvYIs7/yvRRbPK0c="
        ])
    func onceDiffered(seed: String) throws {
        var rng = try #require(Xoshiro(seed: seed))
        let run = OracleComparison(OracleScenario.generator.run(using: &rng))
        #expect(run.difference == nil, "\(run.difference ?? "")")
        #expect(run.reloads > 100)
    }
}
