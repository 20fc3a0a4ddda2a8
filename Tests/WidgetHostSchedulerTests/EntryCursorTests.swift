import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// The search for an instance's next entry from its cursor, against the
/// first entry dated after `now` found by reading them all, for every hint
/// (right, stale, from another timeline, past the end).
@Suite("Next entry from the cursor")
struct EntryCursorTests {
    @Test func findsTheFirstEntryAfterNowWhateverTheHint() {
        var random = SplitMix64(seed: 7)
        for _ in 0..<2_000 {
            let count = Int(random.next() % 14)
            var date = Double(random.next() % 1_000)
            var entries: [EntryRecord] = []
            for _ in 0..<count {
                // Equal dates too (a step of 0).
                date += Double(random.next() % 3) * 300
                entries.append(EntryRecord(date: date, contentJSON: "{}"))
            }
            let now = Double(random.next() % 5_000)
            let expected = entries.firstIndex { $0.date > now } ?? entries.count
            for hint in 0...(count + 2) {
                let (found, index) = entries.withUnsafeBufferPointer {
                    SchedulerCore.nextEntry(after: now, in: $0, from: hint)
                }
                #expect(index == expected, "hint \(hint), now \(now), dates \(entries.map(\.date))")
                #expect(found == (expected < count ? entries[expected].date : .infinity))
            }
        }
    }

    /// A NaN date (only the public API could pass one: the daemon's result
    /// validator refuses it) counts as passed, and is never the next
    /// entry: queued, it would stop the instance's entry changes and break
    /// the queue's order.
    @Test func neverAnswersANaNDate() {
        var random = SplitMix64(seed: 11)
        for _ in 0..<2_000 {
            let count = Int(random.next() % 8) + 1
            var entries = (0..<count).map { EntryRecord(date: Double($0) * 100, contentJSON: "{}") }
            entries[Int(random.next() % UInt64(count))].date = .nan
            let now = Double(random.next() % 900) - 50
            for hint in 0...count {
                let (date, _) = entries.withUnsafeBufferPointer {
                    SchedulerCore.nextEntry(after: now, in: $0, from: hint)
                }
                #expect(!date.isNaN && date > now, "hint \(hint), now \(now), dates \(entries.map(\.date))")
            }
        }
        // The reviewer's case: a NaN first, then two dates.
        let entries = [Double.nan, 100, 200].map { EntryRecord(date: $0, contentJSON: "{}") }
        let next = entries.withUnsafeBufferPointer { SchedulerCore.nextEntry(after: 50, in: $0, from: 0) }
        #expect(next.date == 100 && next.index == 1)
    }
}
