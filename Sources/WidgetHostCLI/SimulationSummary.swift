/// One instance's summary line of a simulation, accumulated reload by reload
/// (the run keeps no list of reloads).
struct SimulationSummary {
    var instance: String
    var counted = 0
    var free = 0
    var deferrals = 0
    var failures = 0
    /// The most counted reloads in any budget window.
    var maxCountedIn24h = 0
    /// Set at the end (``ScenarioSimulator/Result/summary(_:)``).
    var allowanceAtEnd = 0
    var shortestCountedSpacing: Double?
    var longestVisibleStale: Double = 0
    /// The displayed entry at the end, set with the allowance.
    var shows: String?
    /// The counted reloads of the last budget window, oldest first: the
    /// sliding window behind `maxCountedIn24h` (at most the allowance).
    private var recentCounted: [Double] = []

    init(instance: String) {
        self.instance = instance
    }

    /// Adds a reload of this instance; reloads come in time order.
    mutating func add(_ reload: ScenarioSimulator.Reload, window: Double) {
        let decision = reload.decision
        if decision.charge.isCounted {
            counted += 1
            let time = decision.time
            if let last = recentCounted.last {
                let gap = time - last
                shortestCountedSpacing = min(shortestCountedSpacing ?? gap, gap)
            }
            var expired = 0
            while expired < recentCounted.count && time - recentCounted[expired] >= window { expired += 1 }
            if expired > 0 { recentCounted.removeFirst(expired) }
            recentCounted.append(time)
            maxCountedIn24h = max(maxCountedIn24h, recentCounted.count)
        } else {
            free += 1
        }
        if decision.deferral != nil { deferrals += 1 }
        if reload.failure != nil { failures += 1 }
        if reload.visible, let deferral = decision.deferral {
            longestVisibleStale = max(longestVisibleStale, decision.time - deferral.from)
        }
    }
}
