import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// The plan of a policy reload held by the budget, as the steady rules
/// find it for an instance shown all day past its learning period
/// (``SteadyRules/heldPlan(_:appCharge:at:)``), is the plan and recheck
/// every rule finds (``ReloadRules``): over ledgers full to their
/// allowance and past it, due times on and around whole hours, and
/// instances the shortcut must leave to the rules.
@Suite("Held plans")
struct HeldPlanTests {
    @Test func theHeldPlanIsTheRulesPlan() {
        var random = SplitMix64(seed: 2026_12_02_1)
        var held = 0
        for round in 0..<20_000 {
            var c = testConfig()
            c.learningPeriod = [0, 3 * day][Int(random.next() % 2)]
            c.frequentAllowance = [0, 4, 12, 70][Int(random.next() % 4)]
            c.frequentVisibleHours = [6, 24, 25][Int(random.next() % 3)]
            c.occasionalAllowance = 3
            c.rareAllowance = [0, 1][Int(random.next() % 2)]
            // A day, shorter than a day, and windows of days, whose
            // returns can lie past the 64 whole hours the rules look ahead.
            c.budgetWindow = [day, 3 * hour, 72 * hour, 7 * day][Int(random.next() % 4)]
            let steady = SteadyRules(c)
            let rules = ReloadRules(configuration: c, freeLedger: RollingLedger())
            let now = t0 + Double(random.next() % UInt64(day)) + [0, 0.5][Int(random.next() % 2)]
            var s = InstanceState(
                instance: instance("w", visible: random.next() % 6 != 0),
                addedAt: now - [2 * day, 3 * day, 5 * day][Int(random.next() % 3)])
            s.visibleSince = s.instance.isVisible ? now - Double(20 + random.next() % 40) * hour : nil
            // Reloads counted over the window before `now`, some minutes apart.
            let gap = Double(5 + random.next() % 60) * 60
            let count = Int(random.next() % 80)
            s.ledger = RollingLedger(
                times: (0..<count).map { now - Double(count - $0) * gap }.filter { $0 > now - day })
            // Due now, at a whole hour, or minutes to hours on.
            let due = [now, (now / hour).rounded(.up) * hour, now + Double(random.next() % 7_200)][
                Int(random.next() % 3)]
            s.timelineReceivedAt = now - 600
            s.policyDue = random.next() % 10 == 0 ? nil : due
            if random.next() % 10 == 0 { s.consecutiveFailures = 1 }
            InstanceView.of(s) { view in
                let rulesPlan = rules.candidate(view, appCharge: .counted, at: now)
                let recheck = rules.recheckTime(
                    view, appCharge: .counted, now: now, planned: rulesPlan?.time ?? .infinity)
                guard let fast = steady.heldPlan(view, appCharge: .counted, at: now) else { return }
                held += 1
                #expect(rulesPlan?.time == fast.time, "round \(round)")
                #expect(rulesPlan?.latest == fast.time, "round \(round)")
                #expect(rulesPlan?.deferral?.cause == .budget, "round \(round)")
                #expect(rulesPlan?.isPlainPolicy == false, "round \(round)")
                #expect(rules.hasCappedCandidate(view, appCharge: .counted) == false, "round \(round)")
                #expect(recheck == fast.recheck, "round \(round)")
            }
        }
        // The shortcut was taken often.
        #expect(held > 1_000)
    }
}
