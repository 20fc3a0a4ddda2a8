import PropertyBased
import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// Runs the shipped, indexed ``ReloadScheduler`` and the plain scan
/// (``ScanScheduler``) side by side on one random scenario
/// (``OracleScenario``) and returns the first difference: every
/// `nextWakeup()`, every `dueReloads(at:)` (each reload's time, trigger,
/// counted/free, deferral, would-have-been deferral, budget), and the whole
/// state after each step.
struct OracleComparison {
    var reloads = 0
    var wakeups = 0
    var difference: String?

    init(_ scenario: OracleScenario) {
        let c = scenario.configuration
        var fast = ReloadScheduler(configuration: c)
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
        func reloadDue(at now: Double) -> Bool {
            let a = fast.dueReloads(at: now)
            let b = scan.dueReloads(at: now)
            guard a == b else {
                difference = "dueReloads(at: \(now - t0)) differ:\n  index \(a)\n  scan  \(b)"
                return false
            }
            for batch in a {
                for d in batch.decisions {
                    let outcome = scenario.outcome(reloads, at: now)
                    reloads += 1
                    fast.complete(d.instanceID, with: outcome, at: now)
                    scan.complete(d.instanceID, with: outcome, at: now)
                }
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
                    #expect(fast.add(w, at: time) == scan.add(w, at: time))
                    ids.append(w.id)
                case .remove(let index):
                    let id = ids[index % ids.count]
                    #expect(fast.remove(id) == scan.remove(id))
                case .wake:
                    // A driver woken for something else asks what is due.
                    guard reloadDue(at: time) else { return }
                }
                guard compareState("after the event at \(time - t0)") else { return }
                continue
            }
            guard let wake, wake <= end else { break }
            guard reloadDue(at: wake) else { return }
        }
    }
}

@Suite("The indexed scheduler against the plain scan")
struct OracleComparisonTests {
    /// 1,600 random scenarios in four shards (new ones at every run: a
    /// failure prints its seed, to be given to `.fixedSeed`, and the
    /// scenario shrunk to a small one that still fails).
    @Test("same wakeups, reloads and state over thousands of random scenarios", arguments: 0..<4)
    func sameAsScan(shard: Int) async {
        var reloads = 0
        var wakeups = 0
        await propertyCheck(count: 400, input: OracleScenario.generator) { scenario in
            // Each scenario is synchronous work of up to a second: without a
            // suspension between them, the shards held the test pool's
            // threads and the rest of the suite (tests with time limits,
            // daemons waiting for answers) waited for all of them.
            await Task.yield()
            let run = OracleComparison(scenario)
            reloads += run.reloads
            wakeups += run.wakeups
            #expect(run.difference == nil, "\(run.difference ?? "")")
        }
        // The scenarios must do something: a shard makes 104,000-114,000
        // reloads and 193,000-211,000 wakeups (eight shards, 2026-11-27).
        #expect(reloads > 50_000)
        #expect(wakeups > 90_000)
    }
}
