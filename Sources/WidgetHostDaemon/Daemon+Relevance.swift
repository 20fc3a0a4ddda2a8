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
    /// Makes the stacks (``WatchState/stacks``) with every instance's
    /// relevance score in force at `now`: what the event stream compares
    /// later scores with.
    func primeScores(at now: Double) {
        let scores = scheduler.relevanceScores(at: now)
        watch.stacks = StackIndex(
            generation: instanceSetGeneration, members: stackMembers { position, _ in scores[position] })
    }

    /// Makes the stacks again if the instances changed since they were made
    /// and the stacks did not follow the change in place
    /// (``instanceSetChanged(_:)``): the instances kept keep the scores last
    /// published; a new one's is 0 until its event is published.
    func refreshStacks() {
        if watch.stacks.generation < 0 { primeScores(at: clock.now()) }
        guard watch.stacks.generation != instanceSetGeneration else { return }
        let old = watch.stacks
        watch.stacks = StackIndex(
            generation: instanceSetGeneration, members: stackMembers { _, id in old.score(of: id) ?? 0 })
    }

    /// Every instance as a member of its stack, in the configuration's
    /// order, with the score `score` gives it (from its position and id):
    /// what the stacks are made of. One pass over the scheduler's instances.
    func stackMembers(score: (_ position: Int, _ id: String) -> Double) -> [StackIndex.Member] {
        var members: [StackIndex.Member] = []
        members.reserveCapacity(scheduler.instanceCount)
        scheduler.forEachInstance { position, instance in
            members.append((instance.id, instance.family, score(position, instance.id)))
        }
        return members
    }

    /// Counts a change of the instance set (``instanceSetGeneration``) and
    /// has the stacks follow it: updated in place, or left to be made again
    /// at the next read (``StackIndex/follow(_:from:to:)`` decides). Every
    /// change of the set goes through here.
    func instanceSetChanged(_ change: InstanceSetChange) {
        let previous = instanceSetGeneration
        instanceSetGeneration &+= 1
        watch.stacks.follow(change, from: previous, to: instanceSetGeneration)
    }

    /// Instance `id`'s place in its stack by the scores the event stream
    /// last published (each instance's score is refreshed at its
    /// `timeline` and `entry` events), and the stack's size.
    func stackRank(of id: String) -> (rank: Int, size: Int)? {
        refreshStacks()
        return watch.stacks.rank(of: id)
    }

    /// Adds to a `status` page what v2 says of each instance (origin,
    /// relevance, stack and rank), and orders the instances of each stack
    /// on the page by relevance: they take the places their stack holds on
    /// the page, top first, so that the page holds the same instances (the
    /// cursor still walks the configuration's order).
    func decorate(_ status: inout HostStatus, at now: Double) {
        refreshStacks()
        let ranks = watch.stacks.ranks(of: status.instances.map(\.id))
        var places: [String: [Int]] = [:]
        for index in status.instances.indices {
            let id = status.instances[index].id
            status.instances[index].origin = (instances[id]?.origin ?? .configuration).rawValue
            status.instances[index].stack = status.instances[index].family
            status.instances[index].relevance = scheduler.relevanceScore(of: id, at: now)
            status.instances[index].stackRank = ranks[id]?.rank
            places[status.instances[index].family, default: []].append(index)
        }
        let page = status.instances
        for indices in places.values {
            let ordered = indices.map { page[$0] }.sorted { ($0.stackRank ?? .max) < ($1.stackRank ?? .max) }
            for (index, instance) in zip(indices, ordered) { status.instances[index] = instance }
        }
    }
}
