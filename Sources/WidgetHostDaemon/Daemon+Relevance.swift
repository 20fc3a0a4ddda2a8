import WidgetHostControl
import WidgetHostModel
import WidgetHostScheduler

/// Relevance, as the Smart Stack uses it (docs/control-protocol.md,
/// "Relevance"): a stack is the instances of one family (a stack holds
/// widgets of one size, from any app); the instance whose displayed entry
/// has the highest `TimelineEntryRelevance` score in force is on top
/// (a score holds for its `duration` after the entry's date, or while the
/// entry is displayed when the duration is 0); equal scores keep the
/// configuration's order.
extension Daemon {
    /// Records every instance's relevance score in force at `now` (what the
    /// event stream compares later scores with); the ranks are made per
    /// stack when asked (``cachedRanks(of:with:)``).
    func primeScores(at now: Double) {
        let ids = scheduler.instanceIDs
        watch.scores.reserveCapacity(ids.count)
        for id in ids { watch.scores[id] = scheduler.relevanceScore(of: id, at: now) }
    }

    /// The ids of the instances of `family` (a stack), in the configuration's
    /// order.
    func members(of family: WidgetFamily) -> [String] {
        var ids: [String] = []
        for position in 0..<scheduler.instanceCount {
            let instance = scheduler.instance(at: position)
            if instance.family == family { ids.append(instance.id) }
        }
        return ids
    }

    /// The ranks of a stack by the scores the event stream last published
    /// (each instance's score is refreshed at its `timeline` and `entry`
    /// events), cached until they change.
    /// An instance the cache does not know (placed by a SIGHUP or a restart
    /// of the stack since) makes it again.
    func cachedRanks(of family: WidgetFamily, with id: String) -> (ranks: [String: Int], size: Int) {
        if let cached = watch.ranks[family], cached.ranks[id] != nil { return cached }
        if !watch.primed { primeScores(at: clock.now()) }
        let members = members(of: family)
        var ranks: [String: Int] = [:]
        for (index, id) in RelevanceOrder.sorted(members, score: { watch.scores[$0] ?? 0 }).enumerated() {
            ranks[id] = index + 1
        }
        watch.ranks[family] = (ranks, members.count)
        return (ranks, members.count)
    }

    /// Adds to a `status` page what v2 says of each instance (origin,
    /// relevance, stack and rank), and orders the instances of each stack
    /// on the page by relevance: they take the places their stack holds on
    /// the page, top first, so that the page holds the same instances (the
    /// cursor still walks the configuration's order).
    func decorate(_ status: inout HostStatus, at now: Double) {
        var places: [String: [Int]] = [:]
        for index in status.instances.indices {
            let id = status.instances[index].id
            let family = scheduler.instanceState(id)?.instance.family ?? .systemSmall
            status.instances[index].origin = (instances[id]?.origin ?? .configuration).rawValue
            status.instances[index].stack = status.instances[index].family
            status.instances[index].relevance = scheduler.relevanceScore(of: id, at: now)
            status.instances[index].stackRank = cachedRanks(of: family, with: id).ranks[id]
            places[status.instances[index].family, default: []].append(index)
        }
        let page = status.instances
        for indices in places.values {
            let ordered = indices.map { page[$0] }.sorted { ($0.stackRank ?? .max) < ($1.stackRank ?? .max) }
            for (index, instance) in zip(indices, ordered) { status.instances[index] = instance }
        }
    }
}
