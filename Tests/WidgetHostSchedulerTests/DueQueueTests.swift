import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// The due queue against a plain table of positions, keys and payloads,
/// through random moves: every payload stays with its position through the
/// heap's sifts, removals and renumbering, and none is lost or kept.
@Suite("Due queue")
struct DueQueueTests {
    /// A payload that counts how many of its kind are alive, so that one
    /// lost or released twice by the queue's moves shows.
    final class Tracked: Sendable, Hashable {
        let value: Int
        let alive: Counter
        init(_ value: Int, _ alive: Counter) {
            self.value = value
            self.alive = alive
            alive.add(1)
        }
        deinit { alive.add(-1) }
        static func == (a: Tracked, b: Tracked) -> Bool { a.value == b.value }
        func hash(into hasher: inout Hasher) { hasher.combine(value) }
    }

    /// A count shared by the payloads of one test.
    final class Counter: @unchecked Sendable {
        private(set) var count = 0
        func add(_ n: Int) { count += n }
    }

    @Test func payloadsMoveWithTheirPositions() {
        let alive = Counter()
        do {
            var random = SplitMix64(seed: 42)
            var queue = DueQueue<[Tracked]>()
            // The plain table: position -> (key, payload value).
            var table: [Int: (key: Double, value: Int)] = [:]
            var positions = 40
            var serial = 0
            for step in 0..<20_000 {
                let p = Int(random.next() % UInt64(positions))
                switch random.next() % 10 {
                case 0..<5:
                    // Keys on a coarse grid, so that ties are common.
                    let key = Double(random.next() % 50) * 10
                    serial += 1
                    queue.set(p, to: key, payload: [Tracked(serial, alive)])
                    table[p] = (key, serial)
                case 5:
                    queue.set(p, to: .infinity, payload: [])
                    table[p] = nil
                case 6..<9 where !table.isEmpty:
                    // The earliest moves on, keeping its payload (an entry change).
                    let minimum = queue.minimumPosition!
                    let key = queue.minimumKey + Double(random.next() % 8) * 10
                    let moved: Double = random.next() % 6 == 0 ? .infinity : key
                    queue.setMinimumKey(to: moved)
                    table[minimum] = moved < .infinity ? (moved, table[minimum]!.value) : nil
                case 9 where positions > 10 && step % 50 == 0:
                    // An instance removed: later positions move down one.
                    queue.removePosition(p)
                    var renumbered: [Int: (key: Double, value: Int)] = [:]
                    for (q, entry) in table where q != p { renumbered[q > p ? q - 1 : q] = entry }
                    table = renumbered
                    positions -= 1
                default:
                    break
                }
                #expect(queue.count == table.count)
                let expectedMinimum = table.values.map(\.key).min() ?? .infinity
                #expect(queue.minimumKey == expectedMinimum, "step \(step)")
                if let minimum = queue.minimumPosition {
                    #expect(table[minimum]?.key == expectedMinimum, "step \(step)")
                    let value = queue.withMinimumPayload { $0.first?.value }
                    #expect(value == table[minimum]?.value, "step \(step): the earliest's payload")
                }
                if step % 97 == 0 {
                    for q in 0..<positions { #expect(queue.key(of: q) == table[q]?.key ?? .infinity) }
                    var found: [Int] = []
                    queue.collect(upTo: 200, into: &found)
                    #expect(Set(found) == Set(table.filter { $0.value.key <= 200 }.keys), "step \(step)")
                }
            }
            // Every payload still held is the one last given to its position.
            while let minimum = queue.minimumPosition {
                #expect(queue.withMinimumPayload { $0.first?.value } == table[minimum]?.value)
                table[minimum] = nil
                queue.setMinimumKey(to: .infinity)
            }
            #expect(table.isEmpty)
        }
        #expect(alive.count == 0, "a payload was kept after it left the queue")
    }

    /// A queue without payloads stores none.
    @Test func noPayloadStoresNothing() {
        #expect(MemoryLayout<NoPayload>.size == 0)
        var queue = DueQueue<NoPayload>()
        for p in 0..<100 { queue.set(p, to: Double(100 - p)) }
        #expect(queue.minimumPosition == 99)
        queue.setMinimumKey(to: 500)
        #expect(queue.minimumPosition == 98 && queue.key(of: 99) == 500)
    }
}
