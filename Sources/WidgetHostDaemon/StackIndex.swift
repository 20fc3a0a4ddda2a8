import WidgetHostModel

/// The stacks (a stack is the instances of one family) with each member's
/// relevance score as the event stream last published it, in the order the
/// Smart Stack uses (docs/control-protocol.md, "Relevance"): the higher
/// score first; equal scores keep the configuration's order.
///
/// Each stack keeps its members in the configuration's order and their
/// scores beside them, so a stack's top and a member's rank are one pass
/// over an array of numbers: no sort and no hashing per member. (The daemon
/// sorted the whole stack, looking each score up by id, at every turn of
/// its loop that changed a score, and again for every `status` answer
/// after one: at 10,000 instances, most of the loop's time.)
///
/// Made from every instance (``Daemon/refreshStacks()``), or follows a
/// change of the instances in place (``follow(_:from:to:)``, the one place
/// that decides which); scores set as the events are published.
struct StackIndex {
    /// An instance in its stack: its id, its family (its stack) and its score.
    typealias Member = (id: String, family: WidgetFamily, score: Double)

    /// One stack: its members in the configuration's order, their scores beside them.
    struct Stack {
        var ids: [String] = []
        var scores: [Double] = []
    }

    /// The stacks by family.
    private(set) var stacks: [WidgetFamily: Stack] = [:]
    /// Where each instance is: its family and its index in that stack.
    private var slots: [String: (family: WidgetFamily, index: Int)] = [:]
    /// ``Daemon/instanceSetGeneration`` when it was made (-1: never made).
    private(set) var generation = -1

    init() {}

    /// The stacks of `members` (in the configuration's order), each with
    /// its score, as of the instance set `generation`.
    init(generation: Int, members: [Member]) {
        self.generation = generation
        slots.reserveCapacity(members.count)
        for member in members { place(member) }
    }

    /// Puts `member` last in its family's stack (after every member placed
    /// before it). The stack is changed in place: one taken out and put back
    /// is copied at each member.
    private mutating func place(_ member: Member) {
        slots[member.id] = (member.family, stacks[member.family]?.ids.count ?? 0)
        stacks[member.family, default: Stack()].ids.append(member.id)
        stacks[member.family, default: Stack()].scores.append(member.score)
    }

    /// The families that have a stack.
    var families: Dictionary<WidgetFamily, Stack>.Keys { stacks.keys }

    /// The score last set for instance `id`; nil if it is in no stack.
    func score(of id: String) -> Double? {
        slots[id].map { stacks[$0.family]!.scores[$0.index] }
    }

    /// The family of instance `id`'s stack; nil if it is in no stack.
    func family(of id: String) -> WidgetFamily? { slots[id]?.family }

    /// Sets instance `id`'s score; false (and nothing changes) if it is in no stack.
    @discardableResult
    mutating func setScore(_ score: Double, of id: String) -> Bool {
        guard let slot = slots[id] else { return false }
        stacks[slot.family]!.scores[slot.index] = score
        return true
    }

    /// The first `count` members of `family`'s stack, top first: one pass
    /// keeping the best `count` in order.
    func top(of family: WidgetFamily, count: Int) -> [String] {
        guard let stack = stacks[family], count > 0 else { return [] }
        var best: [(index: Int, score: Double)] = []
        best.reserveCapacity(count + 1)
        for (index, score) in stack.scores.enumerated() {
            // Members come in order, so one that only ties the last kept stays out.
            if best.count == count && !(score > best[count - 1].score) { continue }
            // After every kept member with a score at least this one's.
            var at = best.count
            while at > 0 && score > best[at - 1].score { at -= 1 }
            best.insert((index, score), at: at)
            if best.count > count { best.removeLast() }
        }
        return best.map { stack.ids[$0.index] }
    }

    /// Instance `id`'s place in its stack (1 on top) and the stack's size;
    /// nil if it is in no stack. One pass: the members before it are those
    /// with a higher score, or an equal one earlier in the configuration.
    func rank(of id: String) -> (rank: Int, size: Int)? {
        guard let slot = slots[id], let stack = stacks[slot.family] else { return nil }
        let score = stack.scores[slot.index]
        var ahead = 0
        stack.scores.withUnsafeBufferPointer { scores in
            for index in scores.indices where scores[index] > score || (scores[index] == score && index < slot.index) {
                ahead += 1
            }
        }
        return (ahead + 1, stack.ids.count)
    }

    /// The places of `ids` in their stacks (as ``rank(of:)``), for a page or
    /// a whole dashboard: a stack with more than a few of them is ranked
    /// once, by one sort, rather than by a pass per member. Ids in no stack
    /// are left out.
    func ranks(of ids: [String]) -> [String: (rank: Int, size: Int)] {
        var byFamily: [WidgetFamily: [(id: String, index: Int)]] = [:]
        for id in ids {
            if let slot = slots[id] { byFamily[slot.family, default: []].append((id, slot.index)) }
        }
        var result: [String: (rank: Int, size: Int)] = [:]
        result.reserveCapacity(ids.count)
        for (family, members) in byFamily {
            guard let stack = stacks[family] else { continue }
            if members.count <= 16 {
                for member in members { result[member.id] = rank(of: member.id) }
                continue
            }
            let scores = stack.scores
            let order = scores.indices.sorted { scores[$0] != scores[$1] ? scores[$0] > scores[$1] : $0 < $1 }
            var places = [Int](repeating: 0, count: order.count)
            for (place, index) in order.enumerated() { places[index] = place + 1 }
            for member in members { result[member.id] = (places[member.index], stack.ids.count) }
        }
        return result
    }

    // MARK: Following the instances

    /// Follows a change of the instance set that took it from generation
    /// `previous` to `next` (``Daemon/instanceSetChanged(_:)``): the one
    /// place that decides whether the index is updated in place, and so is
    /// as of `next`, or left stale, to be made again from every instance
    /// (``Daemon/refreshStacks()``, a pass over all N instances). An index
    /// updated in place is exactly what that pass would make (the same
    /// members in the same order, the same scores):
    ///
    /// - an index already stale (or never made) stays so;
    /// - `appended` (`instances.add`: the scheduler and the configuration put
    ///   a new instance after every other): the member goes last in its
    ///   family's stack with score 0, as a new instance has until its event
    ///   is published. O(1) amortized;
    /// - `removed` (`instances.remove`; the others keep their order): out of
    ///   its stack, whose later members move up one place. O(that stack's
    ///   size): no other stack is touched;
    /// - `reconfigured` (`instances.update`) in the same family: nothing
    ///   moves (the instance keeps its place and score); into another
    ///   family: stale (its place among the new family's members needs the
    ///   configuration's whole order);
    /// - `replaced` (a configuration applied at SIGHUP, a batch of requests
    ///   undone): stale.
    mutating func follow(_ change: InstanceSetChange, from previous: Int, to next: Int) {
        // Never made (-1): made whole at its first read.
        guard generation >= 0, generation == previous else { return }
        let updated: Bool
        switch change {
        case .appended(let id, let family): updated = append((id, family, 0))
        case .removed(let id): updated = remove(id)
        case .reconfigured(let id, let family): updated = self.family(of: id) == family
        case .replaced: updated = false
        }
        if updated { generation = next }
    }

    /// Puts `member` last in its family's stack; false (and nothing
    /// changes) if it is in a stack already.
    private mutating func append(_ member: Member) -> Bool {
        guard slots[member.id] == nil else { return false }
        place(member)
        return true
    }

    /// Takes instance `id` out of its stack (a stack left empty goes, as
    /// one with no member is never made); false (and nothing changes) if
    /// it is in no stack.
    private mutating func remove(_ id: String) -> Bool {
        guard let slot = slots.removeValue(forKey: id) else { return false }
        stacks[slot.family]?.ids.remove(at: slot.index)
        stacks[slot.family]?.scores.remove(at: slot.index)
        guard let stack = stacks[slot.family], !stack.ids.isEmpty else {
            stacks[slot.family] = nil
            return true
        }
        for index in slot.index..<stack.ids.count { slots[stack.ids[index]]?.index = index }
        return true
    }
}

/// How the set of instances changed, as the stacks follow it
/// (``StackIndex/follow(_:from:to:)``).
enum InstanceSetChange {
    /// Instance `id`, new, placed after every other (`instances.add`).
    case appended(id: String, family: WidgetFamily)
    /// Instance `id` removed; the others keep their order (`instances.remove`).
    case removed(id: String)
    /// Instance `id` changed in place (`instances.update`); `family` is its family now.
    case reconfigured(id: String, family: WidgetFamily)
    /// Any other change: a configuration applied (SIGHUP), a batch of requests undone.
    case replaced
}
