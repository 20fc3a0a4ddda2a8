import Foundation
import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// The ledger's ring against the plain sorted array it replaced: the same
/// times, counts and next-allowed times after every step of seeded random
/// records (in and out of order, after short and long gaps: one time or
/// many leaving the window), forgets and copies, through many turns of the
/// ring; and each record's count, the model's count at its time.
@Suite("Rolling ledger: the ring")
struct RollingLedgerTests {
    /// The array ledger, as it was: obviously correct.
    struct Model {
        var times: [Double] = []

        mutating func record(_ time: Double, window: Double) {
            times.insert(time, at: times.firstIndex(where: { $0 > time }) ?? times.count)
            let start = (times.last ?? time) - window
            times.removeAll { $0 <= start }
        }

        func count(at time: Double, window: Double) -> Int {
            times.filter { $0 > time - window && $0 <= time }.count
        }

        func nextAllowed(from time: Double, limit: Int, window: Double) -> Double {
            guard limit > 0 else { return .infinity }
            let inWindow = times.filter { $0 > time - window }
            if inWindow.count < limit { return time }
            return max(time, inWindow[inWindow.count - limit] + window)
        }
    }

    @Test func matchesTheArrayLedgerThroughManyTurnsOfTheRing() {
        var random = SplitMix64(seed: 23)
        let window = 1_000.0
        var ledger = RollingLedger()
        var model = Model()
        var copies: [(RollingLedger, [Double])] = []
        var now = 0.0
        for step in 0..<5_000 {
            now += Double(random.next() % 120)
            switch random.next() % 20 {
            case 0:
                // Out of order, as a restart's shifted times can be.
                let earlier = now - Double(random.next() % 300)
                ledger.record(earlier, window: window)
                model.record(earlier, window: window)
            case 1:
                if let time = model.times.randomElement(using: &random) {
                    let forgotten = ledger.forget(time)
                    #expect(forgotten)
                    model.times.remove(at: model.times.lastIndex(of: time)!)
                }
                let absent = ledger.forget(-1)
                #expect(!absent)
            case 2:
                copies.append((ledger, model.times))
            case 3:
                // A long quiet spell: many times leave the window at the next record.
                now += Double(600 + random.next() % 600)
                let counted = ledger.record(now, window: window)
                model.record(now, window: window)
                #expect(counted == model.count(at: now, window: window), "step \(step)")
            default:
                let counted = ledger.record(now, window: window)
                model.record(now, window: window)
                #expect(counted == model.count(at: now, window: window), "step \(step)")
            }
            #expect(ledger.times == model.times, "step \(step)")
            #expect(ledger.count == model.times.count)
            #expect(ledger.last == model.times.last)
            let probe = now + Double(random.next() % 1_500)
            #expect(ledger.count(at: probe, window: window) == model.count(at: probe, window: window))
            let limit = Int(random.next() % 12)
            #expect(
                ledger.nextAllowed(from: probe, limit: limit, window: window)
                    == model.nextAllowed(from: probe, limit: limit, window: window), "step \(step)")
        }
        // A copy never sees what the original recorded after it.
        for (copy, times) in copies { #expect(copy.times == times) }
        #expect(ledger.capacity < 40, "a ring of at most ~16 live times grew to \(ledger.capacity)")
    }

    @Test func equalityHashAndCodableAreThoseOfTheTimes() throws {
        var wrapped = RollingLedger()
        for time in stride(from: 0.0, through: 900, by: 100) { wrapped.record(time, window: 350) }
        let plain = RollingLedger(times: wrapped.times)
        #expect(wrapped.times == [600, 700, 800, 900])
        #expect(wrapped == plain)
        #expect(wrapped.hashValue == plain.hashValue)
        let json = try JSONEncoder().encode(wrapped)
        #expect(String(decoding: json, as: UTF8.self) == #"{"times":[600,700,800,900]}"#)
        #expect(try JSONDecoder().decode(RollingLedger.self, from: json) == wrapped)
        #expect(RollingLedger(times: [3, 1, 2]).times == [1, 2, 3])
        #expect(RollingLedger() == RollingLedger(times: []))
    }
}
