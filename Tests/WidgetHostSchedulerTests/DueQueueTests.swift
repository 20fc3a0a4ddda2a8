import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// The due queue against a plain table of positions and keys, through
/// random moves, removals and renumbering: the earliest is always the
/// table's, and a walk finds exactly the keys up to its bound.
@Suite("Due queue")
struct DueQueueTests {
    @Test func keysFollowATable() {
        var random = SplitMix64(seed: 42)
        var queue = DueQueue()
        var table: [Int: Double] = [:]
        var positions = 40
        for step in 0..<20_000 {
            let p = Int(random.next() % UInt64(positions))
            switch random.next() % 10 {
            case 0..<6:
                // Keys on a coarse grid, so that ties are common.
                let key = Double(random.next() % 50) * 10
                queue.set(p, to: key)
                table[p] = key
            case 6..<8:
                queue.set(p, to: .infinity)
                table[p] = nil
            case 8 where !table.isEmpty:
                // The earliest moves on (a recheck made again).
                let minimum = queue.minimumPosition!
                let key = queue.minimumKey + Double(random.next() % 8) * 10
                queue.set(minimum, to: key)
                table[minimum] = key
            case 9 where positions > 10 && step % 50 == 0:
                // An instance removed: later positions move down one.
                queue.removePosition(p)
                var renumbered: [Int: Double] = [:]
                for (q, key) in table where q != p { renumbered[q > p ? q - 1 : q] = key }
                table = renumbered
                positions -= 1
            default:
                break
            }
            #expect(queue.count == table.count)
            let expectedMinimum = table.values.min() ?? .infinity
            #expect(queue.minimumKey == expectedMinimum, "step \(step)")
            if let minimum = queue.minimumPosition {
                #expect(table[minimum] == expectedMinimum, "step \(step)")
            }
            if step % 97 == 0 {
                for q in 0..<positions { #expect(queue.key(of: q) == table[q] ?? .infinity) }
                var found: [Int] = []
                queue.collect(upTo: 200, into: &found)
                #expect(Set(found) == Set(table.filter { $0.value <= 200 }.keys), "step \(step)")
            }
        }
    }
}
