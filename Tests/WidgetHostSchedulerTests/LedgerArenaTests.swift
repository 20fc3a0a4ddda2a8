import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// The scheduler's ledgers in one arena against the plain sorted arrays
/// they stand for (``RollingLedgerTests/Model``): the same times, counts and
/// next-allowed times at every position after every step of seeded random
/// records (in and out of order, after short and long gaps), replacements,
/// removals and appends, through rings that fill and move, compactions and
/// copies.
@Suite("Ledger arena: every instance's ledger in one array")
struct LedgerArenaTests {
    typealias Model = RollingLedgerTests.Model

    /// Checks every position of `arena` against `models`.
    static func expectSame(_ arena: borrowing LedgerArena, _ models: [Model], step: Int) -> Bool {
        guard arena.count == models.count else {
            Issue.record("step \(step): \(arena.count) positions, expected \(models.count)")
            return false
        }
        for (p, model) in models.enumerated() where arena.ledger(at: p).times != model.times {
            Issue.record("step \(step), position \(p): \(arena.ledger(at: p).times), expected \(model.times)")
            return false
        }
        return true
    }

    @Test(arguments: [1, 2, 3])
    func matchesTheArrayLedgers(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let window = 1_000.0
        // Compacted as soon as the garbage passes an eighth (and two lines).
        var arena = LedgerArena(minimumGarbage: 2 * LedgerArena.blockStep)
        var models: [Model] = []
        // A copy, checked when the next is taken and at the end.
        var copy: LedgerArena? = nil
        var copyModels: [Model] = []
        var now = 0.0
        var compactions = 0
        for step in 0..<6_000 {
            now += Double(random.next() % 40)
            let garbageBefore = arena.garbage
            switch random.next() % 40 {
            case 0 where models.count < 40, 1 where models.isEmpty:
                // A position added, with a ledger of its own (empty or not).
                var ledger = RollingLedger()
                var model = Model()
                for _ in 0..<(random.next() % 30) {
                    now += 7
                    ledger.record(now, window: window)
                    model.record(now, window: window)
                }
                arena.append(ledger)
                models.append(model)
            case 2 where !models.isEmpty:
                let p = Int(random.next() % UInt64(models.count))
                arena.remove(at: p)
                models.remove(at: p)
            case 3 where !models.isEmpty:
                // A state's ledger written back: shorter, or longer than the block.
                let p = Int(random.next() % UInt64(models.count))
                var times = models[p].times
                if random.next() % 2 == 0 {
                    times.removeFirst(min(times.count, Int(random.next() % 5)))
                } else {
                    for _ in 0..<(random.next() % 20) { times.append((times.last ?? now) + 1) }
                }
                arena.replace(at: p, with: RollingLedger(times: times))
                models[p].times = times
            case 4 where !models.isEmpty:
                // Out of order, as a restart's shifted times can be.
                let p = Int(random.next() % UInt64(models.count))
                let earlier = now - Double(random.next() % 300)
                let told = arena.record(at: p, earlier, window: window)
                models[p].record(earlier, window: window)
                #expect(told.counted == models[p].count(at: earlier, window: window), "step \(step)")
                #expect(told.held == models[p].times.count && told.last == models[p].times.last, "step \(step)")
            case 5:
                if let taken = copy.take() { _ = Self.expectSame(taken, copyModels, step: step) }
                copy = arena.clone()
                copyModels = models
            default:
                guard !models.isEmpty else { continue }
                let p = Int(random.next() % UInt64(models.count))
                if random.next() % 10 == 0 { now += 1_200 }  // every time leaves the window
                let told = arena.record(at: p, now, window: window)
                models[p].record(now, window: window)
                #expect(told.counted == models[p].count(at: now, window: window), "step \(step)")
                #expect(told.held == models[p].times.count && told.last == models[p].times.last, "step \(step)")
            }
            if arena.garbage < garbageBefore { compactions += 1 }
            if let overlap = arena.overlap() {
                Issue.record("step \(step): \(overlap)")
                return
            }
            guard Self.expectSame(arena, models, step: step) else { return }
            if !models.isEmpty {
                let p = Int(random.next() % UInt64(models.count))
                let probe = now + Double(random.next() % 1_500)
                let limit = Int(random.next() % 12)
                let fromArena = arena.reading(at: p) { ring in
                    (ring.count(at: probe, window: window), ring.nextAllowed(from: probe, limit: limit, window: window))
                }
                #expect(fromArena.0 == models[p].count(at: probe, window: window), "step \(step)")
                #expect(
                    fromArena.1 == models[p].nextAllowed(from: probe, limit: limit, window: window), "step \(step)")
            }
            // The garbage stays under an eighth of the live times (and a few
            // lines), give or take the block a ring just left.
            let live = arena.timesHeld - arena.garbage
            let largest = models.indices.map { Int(arena.slot(at: $0).capacity) }.max() ?? 0
            #expect(
                arena.garbage <= max(live / 8, 2 * LedgerArena.blockStep) + largest,
                "step \(step): \(arena.garbage) garbage for \(live) live")
        }
        #expect(compactions > 0, "the run compacted the arena")
        // A copy never sees what the original did after it.
        if let taken = copy.take() { _ = Self.expectSame(taken, copyModels, step: -1) }
    }

    /// The read-ahead finds the lines of each ring's oldest, second oldest
    /// and newest times from its slot, as the ring turns (the newest
    /// before the oldest in memory once it wrapped), and nothing in an
    /// empty ring.
    @Test func readAheadFindsTheOldestAndNewestTimes() {
        var arena = LedgerArena()
        arena.append(RollingLedger())
        #expect([0].withUnsafeBufferPointer { arena.readAheadTimes($0) } == nil)
        var model = Model()
        for step in 0..<500 {
            let time = Double(step) * 37
            _ = arena.record(at: 0, time, window: 1_000)
            model.record(time, window: 1_000)
            let found = [0].withUnsafeBufferPointer { arena.readAheadTimes($0) }.map {
                (
                    $0.oldest.load(as: Double.self), $0.secondOldest.load(as: Double.self),
                    $0.newest.load(as: Double.self)
                )
            }
            let second = model.times.dropFirst().first ?? model.times.first
            #expect(
                found?.0 == model.times.first && found?.1 == second && found?.2 == model.times.last, "step \(step)")
            if found?.0 != model.times.first || found?.1 != second { return }
        }
        let slot = arena.slot(at: 0)
        #expect(slot.start > 0, "the ring turned")
        #expect(Int(slot.capacity) % LedgerArena.blockStep == 0 && Int(slot.offset) % LedgerArena.blockStep == 0)
    }

    /// A ring that fills moves to a block a line larger; the block it left
    /// is garbage, taken by the next ring that needs a block of its size.
    @Test func aFullRingMovesToALargerBlock() {
        var arena = LedgerArena()
        arena.append(RollingLedger())
        arena.append(RollingLedger(times: [1, 2, 3]))
        for i in 0..<8 { _ = arena.record(at: 0, Double(i), window: 1_000) }
        #expect(arena.slot(at: 0).capacity == 8 && arena.garbage == 0, "eight times fill a line")
        _ = arena.record(at: 0, 8, window: 1_000)
        #expect(arena.slot(at: 0).capacity == 16)
        #expect(arena.garbage == 8)
        #expect(arena.ledger(at: 0).times == (0..<9).map(Double.init))
        #expect(arena.ledger(at: 1).times == [1, 2, 3])
        let left = arena.slot(at: 0).offset == 16 ? UInt32(8) : nil
        #expect(left != nil, "the ring moved to the end: \(arena.slot(at: 0))")
        arena.append(RollingLedger())
        _ = arena.record(at: 2, 100, window: 1_000)
        #expect(arena.slot(at: 2).offset == left && arena.garbage == 0, "the block left is taken again")
        #expect(arena.timesHeld == 32)
    }
}
