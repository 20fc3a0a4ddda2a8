import Testing
import WidgetHostModel

@testable import WidgetHostDaemon

/// The stacks' order (the Smart Stack's: the higher score first, equal
/// scores in the configuration's order), by top, by one member's rank and
/// by a page's ranks, against a plain sort of the whole stack.
@Suite("Stack index")
struct StackIndexTests {
    /// The order a plain sort gives: what the daemon computed before the index.
    static func sorted(_ members: [(id: String, score: Double)]) -> [String] {
        members.enumerated().sorted {
            $0.element.score != $1.element.score ? $0.element.score > $1.element.score : $0.offset < $1.offset
        }.map(\.element.id)
    }

    @Test func tiesKeepTheConfigurationsOrderAndFamiliesAreApart() {
        let index = StackIndex(
            generation: 1,
            members: [
                ("a", .systemSmall, 0), ("b", .systemMedium, 5), ("c", .systemSmall, 2), ("d", .systemSmall, 2),
                ("e", .systemSmall, 0),
            ])
        #expect(index.top(of: .systemSmall, count: 10) == ["c", "d", "a", "e"])
        #expect(index.top(of: .systemSmall, count: 2) == ["c", "d"])
        #expect(index.top(of: .systemMedium, count: 10) == ["b"])
        #expect(index.top(of: .systemLarge, count: 10) == [])
        #expect(index.rank(of: "a").map { [$0.rank, $0.size] } == [3, 4])
        #expect(index.rank(of: "d").map { [$0.rank, $0.size] } == [2, 4])
        #expect(index.rank(of: "b").map { [$0.rank, $0.size] } == [1, 1])
        #expect(index.rank(of: "zz") == nil)
        #expect(index.score(of: "c") == 2)
        #expect(index.family(of: "b") == .systemMedium && index.family(of: "zz") == nil)
        #expect(index.generation == 1)
    }

    @Test func topRankAndPageRanksAgreeWithASortAsScoresChange() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let count = Int.random(in: 1...120, using: &random)
            // Few distinct scores, so that ties are common.
            var members = (0..<count).map { (id: "w\($0)", score: Double(Int.random(in: 0...4, using: &random))) }
            var index = StackIndex(generation: 0, members: members.map { ($0.id, .systemSmall, $0.score) })
            for _ in 0..<20 {
                let changed = Int.random(in: 0..<count, using: &random)
                let score = Double(Int.random(in: 0...4, using: &random)) / 2
                members[changed].score = score
                let set = index.setScore(score, of: members[changed].id)
                #expect(set)
                let expected = Self.sorted(members)
                let k = Int.random(in: 1...12, using: &random)
                #expect(index.top(of: .systemSmall, count: k) == Array(expected.prefix(k)))
                let place = Dictionary(uniqueKeysWithValues: expected.enumerated().map { ($1, $0 + 1) })
                for member in members { #expect(index.rank(of: member.id)?.rank == place[member.id]) }
                // A whole page (one sort) and a few (a pass each) give the same ranks.
                let page = index.ranks(of: members.map(\.id))
                let few = index.ranks(of: Array(members.prefix(5).map(\.id)))
                for member in members { #expect(page[member.id]?.rank == place[member.id]) }
                for member in members.prefix(5) { #expect(few[member.id]?.rank == place[member.id]) }
            }
        }
    }

    /// Made in one pass: 200,000 members in one stack take well under a
    /// second (an index that copied its stack at each member took minutes,
    /// and the daemon 38-48 s to start with 100,000 instances).
    @Test(.timeLimit(.minutes(1))) func twoHundredThousandMembersAreIndexedInOnePass() {
        let members = (0..<200_000).map { ("w\($0)", WidgetFamily.systemSmall, Double($0 % 7)) }
        let index = StackIndex(generation: 0, members: members)
        #expect(index.top(of: .systemSmall, count: 3) == ["w6", "w13", "w20"])
        #expect(index.rank(of: "w0").map { [$0.rank, $0.size] } == [171_429, 200_000])
    }

    @Test func anUnknownIdIsLeftOut() {
        var index = StackIndex(generation: 0, members: [("a", .systemSmall, 1)])
        let set = index.setScore(3, of: "b")
        #expect(!set)
        #expect(index.ranks(of: ["a", "b"]).keys.sorted() == ["a"])
        #expect(index.score(of: "b") == nil)
    }

    // MARK: Following the instances

    /// The instances as the daemon's scheduler holds them (the
    /// configuration's order, each one's family) and the scores the event
    /// stream published, with the generation of the set: what a fresh
    /// index is made of.
    struct Instances {
        var order: [(id: String, family: WidgetFamily)] = []
        var scores: [String: Double] = [:]
        var generation = 0

        /// A fresh index of these instances.
        var rebuilt: StackIndex {
            StackIndex(generation: generation, members: order.map { ($0.id, $0.family, scores[$0.id] ?? 0) })
        }

        /// Counts a change and has `index` follow it, as ``Daemon/instanceSetChanged(_:)`` does.
        mutating func changed(_ change: InstanceSetChange, _ index: inout StackIndex) {
            let previous = generation
            generation &+= 1
            index.follow(change, from: previous, to: generation)
        }

        /// `index`, made again if it is stale, as ``Daemon/refreshStacks()``
        /// does: the members kept keep their scores, a new one's is 0.
        func refreshed(_ index: StackIndex) -> StackIndex {
            guard index.generation != generation else { return index }
            return StackIndex(
                generation: generation, members: order.map { ($0.id, $0.family, index.score(of: $0.id) ?? 0) })
        }
    }

    /// How `index` differs from `fresh` (its stacks, each member's score,
    /// family and rank, each stack's top, the generation); nil if in nothing.
    static func difference(_ index: StackIndex, _ fresh: StackIndex) -> String? {
        if index.generation != fresh.generation { return "generation \(index.generation), not \(fresh.generation)" }
        if Set(index.families) != Set(fresh.families) { return "families \(index.families), not \(fresh.families)" }
        for (family, stack) in fresh.stacks {
            guard let kept = index.stacks[family] else { return "no stack \(family)" }
            if kept.ids != stack.ids || kept.scores != stack.scores {
                return "\(family): \(Array(zip(kept.ids, kept.scores))), not \(Array(zip(stack.ids, stack.scores)))"
            }
            if index.top(of: family, count: 10) != fresh.top(of: family, count: 10) { return "\(family)'s top" }
            for id in stack.ids {
                let rank = index.rank(of: id).map { [$0.rank, $0.size] }
                let expected = fresh.rank(of: id).map { [$0.rank, $0.size] }
                if rank != expected {
                    return "\(id) ranked \(String(describing: rank)), not \(String(describing: expected))"
                }
                if index.score(of: id) != fresh.score(of: id) || index.family(of: id) != fresh.family(of: id) {
                    return "\(id)'s score or family"
                }
            }
        }
        return nil
    }

    /// Runtime adds (in place), removes (in place), reconfigures (in place
    /// in the same family, made again into another one), whole
    /// replacements and published scores, read at random moments: the
    /// index is always what a fresh one of the instances is.
    @Test func followingAddsRemovesAndReconfiguresEqualsAFreshIndex() {
        var random = SystemRandomNumberGenerator()
        let families: [WidgetFamily] = [.systemSmall, .systemMedium, .systemLarge]
        for _ in 0..<40 {
            var instances = Instances()
            for n in 0..<Int.random(in: 0...30, using: &random) {
                instances.order.append(("c\(n)", families.randomElement(using: &random) ?? .systemSmall))
            }
            var index = instances.rebuilt
            var made = 0
            var inPlace = 0
            for step in 0..<200 {
                let existing = instances.order.indices.randomElement(using: &random)
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<4:
                    let member = (id: "r\(step)", family: families.randomElement(using: &random) ?? .systemSmall)
                    instances.order.append(member)
                    instances.changed(.appended(id: member.id, family: member.family), &index)
                case 4..<6:
                    guard let existing else { continue }
                    let id = instances.order.remove(at: existing).id
                    instances.scores[id] = nil
                    instances.changed(.removed(id: id), &index)
                case 6..<8:
                    guard let existing else { continue }
                    instances.order[existing].family = families.randomElement(using: &random) ?? .systemSmall
                    let member = instances.order[existing]
                    instances.changed(.reconfigured(id: member.id, family: member.family), &index)
                case 8:
                    // A configuration applied: another order, a new instance placed among the others.
                    instances.order.shuffle(using: &random)
                    instances.order.insert(("s\(step)", .systemSmall), at: instances.order.count / 2)
                    instances.changed(.replaced, &index)
                default:
                    // A published score: the daemon refreshes the stacks first.
                    guard let existing else { continue }
                    index = instances.refreshed(index)
                    let score = Double(Int.random(in: 0...3, using: &random))
                    instances.scores[instances.order[existing].id] = score
                    index.setScore(score, of: instances.order[existing].id)
                }
                if index.generation == instances.generation { inPlace += 1 }
                // Read now and then: changes in a row may find the index stale.
                guard Bool.random(using: &random) else { continue }
                if index.generation != instances.generation { made += 1 }
                index = instances.refreshed(index)
                let difference = Self.difference(index, instances.rebuilt)
                #expect(difference == nil, "after step \(step): \(difference ?? "")")
                if difference != nil { return }
            }
            // Both paths were taken.
            #expect(inPlace > 0 && made > 0)
        }
    }

    @Test func aStaleOrUnmadeIndexStaysSoAndAKnownIdIsNotAppendedTwice() {
        var never = StackIndex()
        never.follow(.appended(id: "a", family: .systemSmall), from: -1, to: 0)
        #expect(never.generation == -1 && never.rank(of: "a") == nil)
        var index = StackIndex(generation: 3, members: [("a", .systemSmall, 2)])
        index.follow(.appended(id: "b", family: .systemSmall), from: 4, to: 5)
        #expect(index.generation == 3 && index.rank(of: "b") == nil)
        index.follow(.appended(id: "a", family: .systemMedium), from: 3, to: 4)
        #expect(index.generation == 3 && index.family(of: "a") == .systemSmall)
        index.follow(.removed(id: "zz"), from: 3, to: 4)
        #expect(index.generation == 3)
        index.follow(.appended(id: "b", family: .systemSmall), from: 3, to: 4)
        #expect(index.generation == 4 && index.rank(of: "b").map { [$0.rank, $0.size] } == [2, 2])
        index.follow(.removed(id: "a"), from: 4, to: 5)
        #expect(index.generation == 5 && index.rank(of: "b").map { [$0.rank, $0.size] } == [1, 1])
        index.follow(.removed(id: "b"), from: 5, to: 6)
        #expect(index.generation == 6 && index.families.isEmpty)
    }

    /// A runtime add appends in place: 5,000 adds to 100,000 instances, each
    /// followed by a rank (what `instances.add` answers), take 3.3 s in a
    /// debug build, 0.2 s of it the index and the adds, the rest the ranks
    /// (each a pass over the stack's scores); an index made again from every
    /// instance at each add took 814 s (163 ms an add).
    @Test(.timeLimit(.minutes(1))) func fiveThousandAddsToAHundredThousandAreInPlace() {
        var instances = Instances()
        instances.order = (0..<100_000).map { ("w\($0)", WidgetFamily.systemSmall) }
        instances.order.reserveCapacity(105_000)
        var index = StackIndex(
            generation: 0, members: instances.order.map { ($0.id, $0.family, Double($0.id.utf8.count % 7)) })
        var ranks: [Int] = []
        for n in 0..<5_000 {
            let member = (id: "r\(n)", family: WidgetFamily.systemSmall)
            instances.order.append(member)
            instances.changed(.appended(id: member.id, family: member.family), &index)
            index = instances.refreshed(index)
            ranks.append(index.rank(of: member.id)?.rank ?? 0)
        }
        // A new member's score is 0: last, after every member before it.
        #expect(ranks == (0..<5_000).map { 100_001 + $0 })
        #expect(index.generation == 5_000)
    }
}
