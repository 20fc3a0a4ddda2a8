import Testing
import WidgetHostModel
import WidgetHostScheduler
import WidgetHostStore

@testable import WidgetHostDaemon

@Suite("Clock jumps while the daemon runs")
struct ClockWatchTests {
    @Test func agreeingClocksAndSuspendAreNotJumps() {
        var watch = ClockWatch(wall: 1000, boot: 50)
        #expect(watch.observe(wall: 1010, boot: 60) == nil)
        // A suspend of an hour moves CLOCK_BOOTTIME with the wall clock.
        #expect(watch.observe(wall: 4610, boot: 3660) == nil)
        // Drift within the tolerance.
        #expect(watch.observe(wall: 4613, boot: 3660) == nil)
        #expect(watch.wall == 4613)
    }

    @Test func aJumpKeepsItsReferenceUntilAccepted() {
        var watch = ClockWatch(wall: 1000, boot: 50)
        #expect(watch.observe(wall: 1000 + 3600 + 1, boot: 51) == 3600)
        // Reloads in flight: not accepted yet, so the next look still sees it.
        #expect(watch.observe(wall: 1000 + 3600 + 2, boot: 52) == 3600)
        watch.accept(wall: 4602, boot: 52)
        #expect(watch.observe(wall: 4603, boot: 53) == nil)
        #expect(watch.observe(wall: 4603 - 86_400, boot: 54) == -86_401)
    }

    /// What the daemon does with a jump: the restart rules, with the real
    /// elapsed time, so a day forward neither expires the ledger nor makes
    /// more than one reload due.
    @Test func aForwardJumpGrantsNoBudget() {
        var scheduler = ReloadScheduler()
        let start = 1_000_000.0
        scheduler.add(WidgetInstance(id: "w", plugin: "p", kind: "k", app: "a"), at: start)
        for batch in scheduler.dueReloads(at: start) {
            for decision in batch.decisions {
                scheduler.complete(
                    decision.instanceID,
                    with: .success(TimelineRecord(entries: [], policy: .after(start + 600))), at: start)
            }
        }
        var state = scheduler.state
        state.instances[0].ledger = RollingLedger(times: [start - 100, start - 50])
        var watch = ClockWatch(wall: start, boot: 10)
        let jump = watch.observe(wall: start + 86_400 + 1, boot: 11)
        #expect(jump == 86_400)
        let moved = RestartPlanner.reconcile(state: state, lastSeen: start, now: start + 86_401, monotonicElapsed: 1)
        // The ledger entries moved with the clock: still inside the window, still counted.
        #expect(moved.state.instances[0].ledger.count(at: start + 86_401, window: 86_400) == 2)
        // Without the real elapsed time (what ClockWatch supplies), the same jump
        // would look like a day of downtime and the ledger would expire: budget granted.
        let unmoved = RestartPlanner.reconcile(state: state, lastSeen: start, now: start + 86_401)
        #expect(unmoved.state.instances[0].ledger.count(at: start + 86_401, window: 86_400) == 0)
    }
}
