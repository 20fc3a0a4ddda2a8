// The floor of the scheduler's API, shared with Benchmarks/Profile.
import WidgetHostModel

#if !PROFILE
    import WidgetHostScheduler
#endif

/// A scheduler that decides nothing: what the driver and the API's values
/// (decisions, batches, completions, timelines) cost with no scheduling at
/// all, measured in the same run as the shipped scheduler. No scheduler
/// behind ``ReloadScheduler``'s API, driven this way, can be faster.
///
/// It wakes every second and hands out the next `count / 50` decisions
/// (2,000 at 100,000 instances, about the shipped scheduler's batch there)
/// of a list made as the instances were added, in one batch: copies of
/// stored values, where a real scheduler builds each one. Completions are
/// taken and dropped.
struct FloorScheduler: DrivenScheduler {
    private var decisions: [ReloadDecision] = []
    private var next = 0
    private var now = 0.0

    init() {}

    mutating func add(_ instance: WidgetInstance, at time: Double) -> Bool {
        now = max(now, time)
        decisions.append(
            ReloadDecision(
                instanceID: instance.id, plugin: instance.plugin, kind: instance.kind, time: time, trigger: .policy,
                charge: .counted, attempt: 0, allowance: 70, countedInWindow: 1))
        return true
    }

    func nextWakeup() -> Double? { decisions.isEmpty ? nil : now + 1 }

    mutating func allDueReloads(at now: Double) -> [ReloadBatch] {
        self.now = now
        let size = max(1, decisions.count / 50)
        var batch: [ReloadDecision] = []
        batch.reserveCapacity(size)
        for _ in 0..<size {
            var decision = decisions[next]
            decision.time = now
            batch.append(decision)
            next = next + 1 == decisions.count ? 0 : next + 1
        }
        return [ReloadBatch(plugin: batch[0].plugin, kind: batch[0].kind, time: now, decisions: batch)]
    }

    mutating func complete(_ completions: [ReloadCompletion], at time: Double) {}
}
