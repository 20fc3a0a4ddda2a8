import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// The viewing tier as the steady rules find it (``SteadyRules/tier(_:at:)``,
/// which knows an instance shown all day without counting its hours) is
/// the tier the oracle counts, hour by hour, from the same state: around
/// the hours where the count changes and the shortcut's 25-hour edge, at
/// hour boundaries, with a history marked past the time asked about or
/// none, and with thresholds a whole day cannot reach.
@Suite("Viewing tier")
struct ViewTierTests {
    @Test func theShownAllDayTierIsTheCountedOne() {
        var random = SplitMix64(seed: 2026_12_02)
        var shownAllDay = 0
        for round in 0..<20_000 {
            var c = testConfig()
            c.learningPeriod = [0, 3 * day][Int(random.next() % 2)]
            c.frequentVisibleHours = [6, 24, 25][Int(random.next() % 3)]
            c.occasionalVisibleHours = [2, 24][Int(random.next() % 2)]
            let steady = SteadyRules(c)
            // The oracle's tier: its history marked on a copy, then its visible hours counted.
            let oracle = ScanScheduler(configuration: c)
            let addedAt = t0 - Double(random.next() % 10) * day
            var s = InstanceState(instance: instance("w", visible: random.next() % 4 != 0), addedAt: addedAt)
            // Shown from 21 to 26 hours before the time asked about (a few
            // seconds either side of a whole number of hours, where the
            // hours counted change: from 23, every hour of the window), a
            // day and more before, or never.
            let time = t0 + Double(random.next() % UInt64(2 * day)) + [0, 0.25, 3599.75][Int(random.next() % 3)]
            let edge = [-2.0, -0.5, 0, 0.5, 2, -30 * hour][Int(random.next() % 6)]
            let hoursBefore = Double(21 + random.next() % 6)
            s.visibleSince = random.next() % 8 == 0 ? nil : time - hoursBefore * hour + edge
            // A history marked up to an hour before, at, or after the time's hour.
            if random.next() % 5 != 0 {
                let marked = time + [-3 * hour, -hour, 0, hour, 2 * hour][Int(random.next() % 5)]
                s.views.markVisible(from: marked - Double(random.next() % 30) * hour, to: marked)
            }
            let fast = InstanceView.of(s) { steady.tier($0, at: time) }
            #expect(fast == oracle.tier(s, at: time), "round \(round): \(s.views), since \(s.visibleSince as Any)")
            if s.instance.isVisible, let since = s.visibleSince, since <= time - SteadyRules.shownThroughTheWindow {
                shownAllDay += 1
            }
        }
        // The case the shortcut takes came up often.
        #expect(shownAllDay > 1_000)
    }
}
