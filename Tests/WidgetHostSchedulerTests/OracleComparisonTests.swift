import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// Runs the shipped, indexed ``ReloadScheduler`` and the plain scan
/// (``ScanScheduler``) side by side on one seeded random scenario and returns
/// the first difference: every `nextWakeup()`, every `dueReloads(at:)` (each
/// reload's time, trigger, counted/free, deferral, would-have-been deferral,
/// budget), and the whole state after each step.
struct OracleComparison {
    var reloads = 0
    var wakeups = 0
    var difference: String?

    init(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var c = SchedulerConfiguration()
        c.learningAllowance = Int.random(in: 1...12, using: &rng)
        c.frequentAllowance = Int.random(in: 1...12, using: &rng)
        c.occasionalAllowance = Int.random(in: 1...8, using: &rng)
        c.rareAllowance = Int.random(in: 0...4, using: &rng)
        c.frequentVisibleHours = Int.random(in: 1...6, using: &rng)
        c.occasionalVisibleHours = Int.random(in: 1...2, using: &rng)
        c.learningPeriod = [0, 3 * hour, day, 3 * day].randomElement(using: &rng)!
        c.maximumJitter = [0, 120, 900].randomElement(using: &rng)!
        c.freeReloadLimit = Int.random(in: 1...6, using: &rng)
        c.freeReloadWindow = [60, 600].randomElement(using: &rng)!
        c.coalescingCap = [0, 60, 600].randomElement(using: &rng)!
        c.coalescingFraction = [0, 0.1, 0.5].randomElement(using: &rng)!
        c.deferPolicyReloadsWhileHidden = Double.random(in: 0..<1, using: &rng) < 0.8
        c.developerMode = Double.random(in: 0..<1, using: &rng) < 0.15
        c.pushAllowance = Int.random(in: 0...3, using: &rng)
        var fast = ReloadScheduler(configuration: c)
        var scan = ScanScheduler(configuration: c)
        let days = Double(Int.random(in: 1...4, using: &rng))
        let end = t0 + days * day
        let apps = ["a", "b", "c"]
        let kinds = ["k1", "k2"]
        var ids: [String] = []
        func newInstance(_ n: Int) -> WidgetInstance {
            WidgetInstance(
                id: "i\(n)", plugin: Bool.random(using: &rng) ? "p" : "q", kind: kinds.randomElement(using: &rng)!,
                app: apps.randomElement(using: &rng)!, isVisible: Double.random(in: 0..<1, using: &rng) < 0.7,
                usesLocation: Bool.random(using: &rng))
        }
        let initial = Int.random(in: 1...10, using: &rng)
        for n in 0..<initial {
            let w = newInstance(n)
            fast.add(w, at: t0)
            scan.add(w, at: t0)
            ids.append(w.id)
        }
        var created = initial
        enum Step {
            case event(SchedulerEvent)
            case add
            case remove
            case wake
        }
        var script: [(time: Double, step: Step)] = []
        for _ in 0..<Int.random(in: 5...Int(days) * 60, using: &rng) {
            let time = (t0 + Double.random(in: 0..<(days * day), using: &rng)).rounded()
            let id = "i\(Int.random(in: 0..<(initial + 4), using: &rng))"
            let app = apps.randomElement(using: &rng)!
            let step: Step =
                switch Int.random(in: 0..<17, using: &rng) {
                case 0, 1: .event(.instanceShown(id))
                case 2, 3: .event(.instanceHidden(id))
                case 4: .event(Bool.random(using: &rng) ? .appForeground(app) : .appBackground(app))
                case 5:
                    .event(
                        Bool.random(using: &rng)
                            ? .sessionStarted(app: app, kind: SessionKind.allCases.randomElement(using: &rng)!)
                            : .sessionEnded(app: app, kind: SessionKind.allCases.randomElement(using: &rng)!))
                case 6: .event(.appIntent(instance: id))
                case 7: .event(.systemChange(SystemChange.allCases.randomElement(using: &rng)!))
                case 8: .event(.significantLocationChange)
                case 9, 10: .event(.reloadTimelines(ofKind: kinds.randomElement(using: &rng)!, app: app))
                case 11: .event(.reloadAllTimelines(app: app))
                case 12: .add
                case 13: .remove
                case 14:
                    .event(
                        .push(
                            kind: kinds.randomElement(using: &rng)!,
                            plugin: Bool.random(using: &rng) ? nil : ["p", "q"].randomElement(using: &rng)!))
                default: .wake
                }
            script.append((time, step))
        }
        script.sort { $0.time < $1.time }

        func compareState(_ at: String) -> Bool {
            guard fast.state == scan.state else {
                difference = "seed \(seed): state differs \(at)"
                return false
            }
            guard fast.recordsAreInStep else {
                difference = "seed \(seed): a hot record's flags differ from its cold record \(at)"
                return false
            }
            return true
        }
        func reloadDue(at now: Double) -> Bool {
            let a = fast.dueReloads(at: now)
            let b = scan.dueReloads(at: now)
            guard a == b else {
                difference = "seed \(seed): dueReloads(at: \(now - t0)) differ:\n  index \(a)\n  scan  \(b)"
                return false
            }
            for batch in a {
                for d in batch.decisions {
                    reloads += 1
                    let roll = Double.random(in: 0..<1, using: &rng)
                    let outcome: ReloadOutcome
                    if roll < 0.08 {
                        outcome = .failure(reason: "random")
                    } else if roll < 0.12 {
                        outcome = .timedOut
                    } else {
                        let policy: ReloadPolicy =
                            switch Int.random(in: 0..<8, using: &rng) {
                            case 0: .never
                            case 1, 2, 3: .atEnd
                            case 4: .after(now + Double.random(in: -600..<900, using: &rng).rounded())
                            default: .after((now + Double.random(in: -3600..<(4 * hour), using: &rng)).rounded())
                            }
                        let dates = (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                            (now + Double.random(in: -600..<(3 * hour), using: &rng)).rounded()
                        }.sorted()
                        outcome = .success(timeline(dates, policy))
                    }
                    fast.complete(d.instanceID, with: outcome, at: now)
                    scan.complete(d.instanceID, with: outcome, at: now)
                }
            }
            return compareState("after the reloads at \(now - t0)")
        }

        var next = 0
        var steps = 0
        while steps < 100_000 {
            steps += 1
            let wake = fast.nextWakeup()
            let expected = scan.nextWakeup()
            guard wake == expected else {
                difference =
                    "seed \(seed): nextWakeup \(wake.map { $0 - t0 } as Any) != \(expected.map { $0 - t0 } as Any)"
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
                case .add:
                    let w = newInstance(created)
                    created += 1
                    #expect(fast.add(w, at: time) == scan.add(w, at: time))
                    ids.append(w.id)
                case .remove:
                    guard let id = ids.randomElement(using: &rng) else { continue }
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
    @Test("same wakeups, reloads and state over thousands of random scenarios", arguments: 0..<4)
    func sameAsScan(shard: Int) {
        var reloads = 0
        var wakeups = 0
        for index in 0..<400 {
            let seed = UInt64(7_000_000 + shard * 100_000 + index)
            let run = OracleComparison(seed: seed)
            reloads += run.reloads
            wakeups += run.wakeups
            #expect(run.difference == nil, "\(run.difference ?? "")")
            if run.difference != nil { break }
        }
        // The scenarios must do something.
        #expect(reloads > 15_000)
        #expect(wakeups > 15_000)
    }
}
