// The floor of the scheduler's API, shared with Benchmarks/Profile.
import WidgetHostModel

#if !PROFILE
    import WidgetHostScheduler
#endif

/// A scheduler that decides nothing: what the driver and the API's values
/// (tickets, completions, timelines) cost with no scheduling at all,
/// measured in the same run as the shipped scheduler. No scheduler behind
/// ``ReloadScheduler``'s ticket API, driven this way, can be faster.
///
/// It wakes every second and hands out the tickets of the next
/// `count / 50` instances (2,000 at 100,000 instances, about the shipped
/// scheduler's batch there), in one batch. Completions are taken and
/// dropped.
struct FloorScheduler: DrivenScheduler {
    private var count = 0
    private var next = 0
    private var serial: UInt64 = 0
    private var now = 0.0

    init() {}

    mutating func add(_ instance: WidgetInstance, at time: Double) -> Bool {
        now = max(now, time)
        count += 1
        return true
    }

    func nextWakeup() -> Double? { count == 0 ? nil : now + 1 }

    mutating func allDueReloads(at now: Double, into tickets: inout [ReloadTicket]) {
        self.now = now
        tickets.removeAll(keepingCapacity: true)
        for _ in 0..<max(1, count / 50) {
            serial += 1
            tickets.append(ReloadTicket(position: Int32(next), group: 0, serial: serial))
            next = next + 1 == count ? 0 : next + 1
        }
    }

    mutating func complete(taking completions: inout [TicketCompletion], at time: Double) {
        completions.removeAll(keepingCapacity: true)
    }
}
