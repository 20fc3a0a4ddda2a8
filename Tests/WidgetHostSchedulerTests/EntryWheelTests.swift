import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// The entry wheel against a plain table of positions, keys and payloads,
/// through random moves: keys in the past, in the current bucket,
/// in the ring and past it (in `far`), the earliest moved on, positions
/// taken out and renumbered. The earliest is always the table's, every
/// payload stays with its position, and none is lost or kept.
@Suite("Entry wheel")
struct EntryWheelTests {
    /// A payload that counts how many of its kind are alive, so that one
    /// lost or released twice by the wheel's moves shows.
    final class Tracked: Sendable {
        let value: Int
        let alive: Counter
        init(_ value: Int, _ alive: Counter) {
            self.value = value
            self.alive = alive
            alive.add(1)
        }
        deinit { alive.add(-1) }
    }

    /// A count shared by the payloads of one test.
    final class Counter: @unchecked Sendable {
        private(set) var count = 0
        func add(_ n: Int) { count += n }
    }

    struct Payload: WheelPayload {
        var tracked: Tracked
        /// Bumped by each move of the earliest, to show the move was in place.
        var moves = 0
        var readAheadBlock: ReadAhead.Block? { nil }
    }

    /// A key around `now`: mostly within a few seconds (ties and the
    /// current bucket), some within the ring, some past it, some before.
    static func key(near now: Double, _ random: inout SplitMix64) -> Double {
        switch random.next() % 8 {
        case 0..<3: return now + Double(random.next() % 40) * 0.25
        case 3..<5: return now + Double(random.next() % 3_000)
        case 5: return now + Double(8_000 + random.next() % 20_000)
        case 6: return now - Double(random.next() % 30)
        default: return (now + Double(random.next() % 20)).rounded(.down)
        }
    }

    @Test(arguments: [1, 2, 3])
    func followsATable(seed: UInt64) {
        let alive = Counter()
        do {
            var random = SplitMix64(seed: seed)
            var wheel = EntryWheel<Payload>()
            // The plain table: position -> (key, payload value, moves).
            var table: [Int: (key: Double, value: Int, moves: Int)] = [:]
            var positions = 60
            var serial = 0
            var now = 1_800_000_000.0
            for step in 0..<30_000 {
                let p = Int(random.next() % UInt64(positions))
                switch random.next() % 12 {
                case 0..<4:
                    let key = Self.key(near: now, &random)
                    serial += 1
                    wheel.set(p, to: key, payload: Payload(tracked: Tracked(serial, alive)))
                    table[p] = (key, serial, 0)
                case 4:
                    wheel.set(p, to: .infinity, payload: Payload(tracked: Tracked(-1, alive)))
                    table[p] = nil
                case 5..<10 where !table.isEmpty:
                    // The earliest moves on in place (an entry change), or leaves.
                    let minimum = wheel.minimumPosition!
                    now = max(now, wheel.minimumKey)
                    let moved: Double = random.next() % 8 == 0 ? .infinity : Self.key(near: now, &random)
                    wheel.moveMinimum { payload in
                        payload.moves += 1
                        return moved
                    }
                    let entry = table[minimum]!
                    table[minimum] = moved < .infinity ? (moved, entry.value, entry.moves + 1) : nil
                case 10 where positions > 10 && step % 40 == 0:
                    // An instance removed: later positions move down one.
                    wheel.removePosition(p)
                    var renumbered: [Int: (key: Double, value: Int, moves: Int)] = [:]
                    for (q, entry) in table where q != p { renumbered[q > p ? q - 1 : q] = entry }
                    table = renumbered
                    positions -= 1
                case 11 where step % 500 == 0:
                    // A long gap: the next keys are hours later (`far` comes in).
                    now += Double(random.next() % 30_000)
                default:
                    break
                }
                #expect(wheel.count == table.count, "step \(step)")
                let expectedMinimum = table.values.map(\.key).min() ?? .infinity
                #expect(wheel.minimumKey == expectedMinimum, "step \(step)")
                if let minimum = wheel.minimumPosition {
                    #expect(table[minimum]?.key == expectedMinimum, "step \(step)")
                    #expect(wheel.payload(of: minimum)?.tracked.value == table[minimum]?.value, "step \(step)")
                }
                if step % 97 == 0 {
                    for q in 0..<positions {
                        #expect(wheel.key(of: q) == table[q]?.key ?? .infinity, "step \(step), position \(q)")
                        #expect(wheel.isQueued(q) == (table[q] != nil))
                        #expect(wheel.payload(of: q)?.moves == table[q]?.moves, "step \(step), position \(q)")
                    }
                }
            }
            // Drained in order of key, each with the payload last given.
            var last = -Double.infinity
            while let minimum = wheel.minimumPosition {
                #expect(wheel.minimumKey >= last)
                last = wheel.minimumKey
                #expect(wheel.payload(of: minimum)?.tracked.value == table[minimum]?.value)
                table[minimum] = nil
                wheel.moveMinimum { _ in .infinity }
            }
            #expect(table.isEmpty && wheel.count == 0)
        }
        #expect(alive.count == 0, "a payload was kept after it left the wheel")
    }

    /// Many keys in one second (a busy second at 100,000 instances): taken
    /// in order of key.
    @Test func aCrowdedSecondIsTakenInOrder() {
        let alive = Counter()
        do {
            var random = SplitMix64(seed: 9)
            var wheel = EntryWheel<Payload>()
            let start = 1_800_000_000.0
            var keys: [Double] = []
            for p in 0..<300 {
                let key = start + 5 + Double(random.next() % 1_000) / 1_000
                keys.append(key)
                wheel.set(p, to: key, payload: Payload(tracked: Tracked(p, alive)))
            }
            var taken: [Double] = []
            while wheel.count > 0 {
                taken.append(wheel.minimumKey)
                wheel.moveMinimum { _ in .infinity }
            }
            #expect(taken == keys.sorted())
        }
        #expect(alive.count == 0)
    }

    /// The ring's next bucket that is not empty, against a plain scan of
    /// the bits from `start` round to it.
    @Test func findsTheNextSetBitRoundTheRing() {
        var random = SplitMix64(seed: 21)
        for _ in 0..<500 {
            var bits = [UInt64](repeating: 0, count: 4)
            for _ in 0..<Int(random.next() % 4) {
                let bit = Int(random.next() % 256)
                bits[bit >> 6] |= 1 << UInt64(bit & 63)
            }
            let start = Int(random.next() % 256)
            let expected = (0..<256).map { (start + $0) % 256 }.first { bits[$0 >> 6] & (1 << UInt64($0 & 63)) != 0 }
            #expect(
                bits.withUnsafeBufferPointer { $0.firstSetBit(circularlyFrom: start) } == expected,
                "from \(start) in \(bits)")
        }
    }

    /// Every position at one key (instances placed at one start, their
    /// entries at the same dates), then moved on, moved within the second
    /// and taken out in random order: the earliest and the count stay
    /// right, and the rest drain in order.
    @Test func aCrowdAtOneKeyMovesAndDrains() {
        let alive = Counter()
        do {
            var random = SplitMix64(seed: 17)
            var wheel = EntryWheel<Payload>()
            let start = 1_800_000_000.0
            var table: [Int: Double] = [:]
            for p in 0..<1_000 {
                wheel.set(p, to: start, payload: Payload(tracked: Tracked(p, alive)))
                table[p] = start
            }
            for p in (0..<1_000).shuffled(using: &random) {
                switch random.next() % 3 {
                case 0: table[p] = start + 0.5  // within the second
                case 1: table[p] = start + 300
                default: table[p] = nil
                }
                wheel.set(p, to: table[p] ?? .infinity, payload: Payload(tracked: Tracked(p, alive)))
                #expect(wheel.count == table.count)
                #expect(wheel.minimumKey == table.values.min() ?? .infinity)
            }
            var taken: [Double] = []
            while wheel.count > 0 {
                taken.append(wheel.minimumKey)
                wheel.moveMinimum { _ in .infinity }
            }
            #expect(taken == table.values.sorted())
        }
        #expect(alive.count == 0)
    }

    /// The positions whose payloads were read ahead, in order.
    final class ReadLog: @unchecked Sendable {
        var read: [Int] = []
    }

    /// A payload that logs its read-ahead.
    struct LoggedPayload: WheelPayload {
        let position: Int
        let log: ReadLog
        var readAheadBlock: ReadAhead.Block? {
            log.read.append(position)
            return nil
        }
    }

    /// A crowded second (1,000 positions, each at its own key within it):
    /// each payload is read ahead before its move, once, and never more
    /// than two chunks before it (all at once, a crowd's payloads did not
    /// fit in the cache by the time their moves came).
    @Test func aCrowdedSecondIsReadAheadAChunkAtATime() {
        let log = ReadLog()
        var wheel = EntryWheel<LoggedPayload>()
        let start = 1_800_000_000.0
        // Position 1,000 first, now; the crowd ten seconds later, in the ring.
        wheel.set(1_000, to: start, payload: LoggedPayload(position: 1_000, log: log))
        for p in (0..<1_000).reversed() {
            wheel.set(p, to: start + 10 + Double(p) * 0.000_5, payload: LoggedPayload(position: p, log: log))
        }
        #expect(wheel.minimumPosition == 1_000)
        wheel.moveMinimum { _ in .infinity }  // the crowd's second comes in
        #expect(log.read.count == 2 * EntryWheel<LoggedPayload>.readAheadChunk)
        var moved: [Int] = []
        while let p = wheel.minimumPosition {
            #expect(log.read.contains(p), "position \(p) moved before it was read ahead")
            #expect(log.read.count - moved.count <= 2 * EntryWheel<LoggedPayload>.readAheadChunk)
            moved.append(p)
            wheel.moveMinimum { _ in .infinity }
        }
        #expect(moved == Array(0..<1_000))
        #expect(log.read == Array(0..<1_000))
    }
}
