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
                    ReloadScheduler.nextEntry(after: now, in: $0, from: hint)
                }
                #expect(index == expected, "hint \(hint), now \(now), dates \(entries.map(\.date))")
                #expect(found == (expected < count ? entries[expected].date : .infinity))
            }
        }
    }
}
