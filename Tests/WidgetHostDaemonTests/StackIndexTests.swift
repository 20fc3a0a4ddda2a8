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
}
