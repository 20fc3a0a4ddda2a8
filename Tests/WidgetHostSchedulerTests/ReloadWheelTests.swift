import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// The reload wheel against a plain table of positions and keys, through
/// random moves whose keys fall in the same bucket, across the ring's end,
/// before its start, past any ring, and on fractions of a second: the
/// earliest, every key and every walk agree with the table at every step,
/// a batch's due keys taken out one at a time or all at once.
@Suite("Reload wheel")
struct ReloadWheelTests {
    /// A key around `now`: mostly within the next hour (one bucket shared by
    /// many), sometimes before `now` (the ring's start moves down), hours
    /// or days later (in `far`, brought in as the ring moves), or huge.
    static func key(around now: Double, _ random: inout SplitMix64) -> Double {
        switch random.next() % 20 {
        case 0..<10: return now + Double(random.next() % 3600)
        case 10..<13: return now + Double(random.next() % 8) + 0.25 * Double(random.next() % 4)
        case 13..<15: return now - Double(random.next() % 20_000)
        case 15..<18: return now + Double(random.next() % 400_000)
        case 18: return now + Double(ReloadWheel.ringSize) + Double(random.next() % 3)
        default: return random.next() % 2 == 0 ? 1e300 : -1e300
        }
    }

    @Test(arguments: [1, 7, 23])
    func matchesAPlainTable(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var wheel = ReloadWheel()
        var table: [Int: Double] = [:]
        // Each queued position's plan (deadline, under the free cap), which
        // the wheel keeps with its key.
        var plans: [Int: (latest: Double, capped: Bool)] = [:]
        var positions = 300
        var now = 1_800_000_000.0
        for step in 0..<30_000 {
            let p = Int(random.next() % UInt64(positions))
            switch random.next() % 12 {
            case 0..<6:
                let key = Self.key(around: now, &random)
                let plan = (latest: key + Double(random.next() % 90), capped: random.next() % 4 == 0)
                if step % 2 == 0 {
                    // `insert`, the completion's path: linked in place when
                    // `p` is not queued, `set` otherwise.
                    wheel.insert(p, at: key, latest: plan.latest, flags: .init(underFreeCap: plan.capped))
                } else {
                    wheel.set(p, to: key, latest: plan.latest, flags: .init(underFreeCap: plan.capped))
                }
                table[p] = key
                plans[p] = plan
            case 6:
                wheel.set(p, to: random.next() % 2 == 0 ? .infinity : .nan)
                table[p] = nil
            case 7..<10 where !table.isEmpty:
                // Time moves on to the earliest, which moves later or
                // leaves (a reload issued).
                let minimum = wheel.minimumPosition!
                now = max(now, min(wheel.minimumKey, 1e12))
                let moved = random.next() % 3 == 0 ? Double.infinity : Self.key(around: now, &random)
                wheel.set(minimum, to: moved, latest: moved, flags: .init(plainPolicy: true))
                table[minimum] = moved < .infinity ? moved : nil
                plans[minimum] = (moved, false)
            case 10:
                // A batch: every key up to a bound taken out, in the
                // order of the positions.
                let bound = now + Double(random.next() % 120)
                var due: [Int] = []
                wheel.collect(upTo: bound, into: &due)
                #expect(Set(due) == Set(table.filter { $0.value <= bound }.keys), "step \(step)")
                #expect(due.count == Set(due).count, "step \(step): a position found twice")
                if random.next() % 2 == 0 {
                    // All at once (a wakeup whose due reloads were all issued).
                    let removed = due.withUnsafeBufferPointer { wheel.removeAll($0, upTo: bound) }
                    #expect(removed == due.count, "step \(step)")
                    for q in due { table[q] = nil }
                } else {
                    for q in due.sorted() {
                        wheel.set(q, to: .infinity)
                        table[q] = nil
                    }
                }
            case 11 where positions > 50 && step % 40 == 0:
                // An instance removed: later positions move down one.
                wheel.removePosition(p)
                var renumbered: [Int: Double] = [:]
                for (q, key) in table where q != p { renumbered[q > p ? q - 1 : q] = key }
                table = renumbered
                var renumberedPlans: [Int: (latest: Double, capped: Bool)] = [:]
                for (q, plan) in plans where q != p { renumberedPlans[q > p ? q - 1 : q] = plan }
                plans = renumberedPlans
                positions -= 1
            default:
                break
            }
            #expect(wheel.count == table.count, "step \(step)")
            let expected = table.values.min() ?? .infinity
            #expect(wheel.minimumKey == expected, "step \(step)")
            if let minimum = wheel.minimumPosition {
                #expect(table[minimum] == expected, "step \(step)")
            } else {
                #expect(table.isEmpty, "step \(step)")
            }
            if step % 53 == 0 {
                for q in 0..<positions { #expect(wheel.key(of: q) == table[q] ?? .infinity, "step \(step)") }
                let bound = now + Double(random.next() % 500_000)
                var found: [Int: Double] = [:]
                wheel.collect(upTo: bound) { position, key in
                    #expect(found[position] == nil, "step \(step): \(position) found twice")
                    found[position] = key
                }
                #expect(found == table.filter { $0.value <= bound }, "step \(step)")
                wheel.collectNodes(upTo: bound) { position, node in
                    #expect(node.key == table[position], "step \(step)")
                    #expect(node.latest == plans[position]?.latest, "step \(step): \(position)'s deadline")
                    #expect(node.underFreeCap == plans[position]?.capped, "step \(step): \(position)'s flag")
                }
                // The keys in (lower, bound]: a lower bound before, in and
                // past the ring, or just below a queued key (in its bucket,
                // which the walk must then read).
                var lower = bound - Double(random.next() % 20_000) - [0, 0.5, 1e6][Int(random.next() % 3)]
                if random.next() % 2 == 0,
                    let key = table.values.filter({ $0 < bound && abs($0) < 1e12 }).randomElement(using: &random)
                {
                    lower = key.rounded(.down) == key ? key - 1e-3 : key.rounded(.down)
                }
                var between: [Int: Double] = [:]
                wheel.collectNodes(after: lower, upTo: bound) { position, node in
                    #expect(between[position] == nil, "step \(step): \(position) found twice")
                    between[position] = node.key
                }
                #expect(between == table.filter { $0.value > lower && $0.value <= bound }, "step \(step)")
                let capped = Set(table.keys.filter { plans[$0]?.capped == true })
                #expect(Set(wheel.positionsUnderFreeCap) == capped, "step \(step)")
            }
        }
        // Emptied from the earliest on, in order.
        var last = -Double.infinity
        while let minimum = wheel.minimumPosition {
            #expect(wheel.minimumKey >= last)
            last = wheel.minimumKey
            #expect(table[minimum] == last)
            table[minimum] = nil
            wheel.set(minimum, to: .infinity)
        }
        #expect(table.isEmpty && wheel.count == 0)
    }

    /// The coming reloads read ahead: whole buckets from a key's on (or
    /// the earliest's, if later), until there are enough, and the key
    /// from which nothing was read; against a plain table, with buckets
    /// that are crowded, sparse, past the ring, and across the ring's end.
    @Test(arguments: [3, 9, 31])
    func collectsTheComingBucketsWhole(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0..<300 {
            var wheel = ReloadWheel()
            var table: [Int: Double] = [:]
            // The ring's start somewhere below the keys, so that the ring's
            // end may fall anywhere among them.
            let now = 1_800_000_000.0 + Double(random.next() % 8192)
            wheel.set(0, to: now)
            table[0] = now
            for p in 1..<Int(2 + random.next() % 40) {
                let key =
                    random.next() % 4 == 0
                    ? now + Double(random.next() % 4) + 0.5
                    : now + Double(random.next() % 12_000)
                wheel.set(p, to: key)
                table[p] = key
            }
            let from =
                switch random.next() % 3 {
                case 0: now - 100
                case 1: now + Double(random.next() % 6_000) + 0.5
                default: now + Double(8_192 + random.next() % 4_000)
                }
            let start = max(from.rounded(.down), now.rounded(.down))
            let atLeast = Int(1 + random.next() % 12)
            var coming: [Int] = []
            let through = wheel.collectComing(from: from, atLeast: atLeast, into: &coming)
            // Every position from `start`'s bucket and below `through`
            // within the ring, none other.
            let ringEnd = now.rounded(.down) + Double(ReloadWheel.ringSize)
            let expected = table.filter { $0.value >= start && $0.value < through && $0.value < ringEnd }.keys
            #expect(coming.sorted() == expected.sorted(), "from \(from), through \(through), table \(table)")
            guard start < ringEnd else {
                #expect(through == max(from, ringEnd))
                continue
            }
            #expect(through <= ringEnd)
            if coming.count >= atLeast {
                // Whole buckets, and no more than it takes: without the
                // last bucket read there were fewer than asked for.
                let lastBucket = through - 1
                #expect(table.values.contains { $0 >= lastBucket && $0 < through })
                #expect(coming.filter { table[$0]! < lastBucket }.count < atLeast)
            } else {
                // Fewer in the rest of the ring: it was read to its end.
                #expect(through == ringEnd)
            }
        }
    }

    /// A bucket whose earliest left twice (a batch issued one wakeup at a
    /// time) is put in order; a position linked into it afterwards, or
    /// moved within it, is still taken at its turn.
    @Test func anOrderedBucketTakesWhatComesIntoItLater() {
        var wheel = ReloadWheel()
        let second = 1_800_000_000.0
        for p in 0..<6 { wheel.set(p, to: second + 0.1 * Double(p)) }
        wheel.set(0, to: .infinity)  // walked once
        wheel.set(1, to: .infinity)  // walked again: in order
        #expect(wheel.minimumPosition == 2)
        wheel.set(6, to: second + 0.35)  // into the ordered bucket, between 3 and 4
        wheel.set(4, to: second + 0.05)  // moved within it, to the front
        var taken: [Int] = []
        while let p = wheel.minimumPosition {
            taken.append(p)
            wheel.set(p, to: .infinity)
        }
        #expect(taken == [4, 2, 3, 6, 5])
    }
}
