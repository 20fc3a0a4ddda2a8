import Foundation
import GRDB
import Testing
import WidgetHostModel
import WidgetHostScheduler

@testable import WidgetHostStore

/// The v5 `entries` column: round trips, refuses what is not one (an error,
/// never a trap), and the v5 migration converts the JSON text of older files.
@Suite struct EntriesBlobTests {
    @Test func roundTripsEveryEntry() throws {
        var rng = SplitMix64(seed: 0xB10B)
        for _ in 0..<300 {
            let entries = EntriesJSONTests.randomEntries(&rng)
            #expect(try EntriesBlob.decode(EntriesBlob.encode(entries)) == entries)
        }
        #expect(try EntriesBlob.decode(EntriesBlob.encode([])) == [])
    }

    @Test func refusesWhatIsNotAnEntriesBlob() throws {
        let good = [UInt8](
            EntriesBlob.encode([
                EntryRecord(date: 1_800_000_000, contentJSON: "{\"é\":1}"),
                EntryRecord(date: 1_800_000_060, relevance: Relevance(score: 5), contentJSON: "{}"),
            ]))
        var cases: [(String, [UInt8])] = [
            ("shorter than its header", []), ("shorter than its header", Array(good.prefix(7))),
            ("is not version 1", [2] + good.dropFirst()),
            ("reserved bytes", [1, 0, 7] + good.dropFirst(3)),
            ("holds", Array(good.prefix(8 + 32))),  // the count says 2 entries
            ("bytes after its last content", good + [0x20]),
            ("runs past", Array(good.dropLast())),
        ]
        var badFlags = good
        badFlags[8 + 28] = 2
        cases.append(("unknown flags 2", badFlags))
        var notUTF8 = good
        notUTF8[8 + 64] = 0xFF  // the first content's first byte
        cases.append(("not UTF-8", notUTF8))
        for (expected, bytes) in cases {
            #expect {
                try EntriesBlob.decode(Data(bytes))
            } throws: { error in
                "\(error)".contains(expected)
            }
        }
        // Random damage: an error or entries, never a trap.
        var rng = SplitMix64(seed: 0xDA)
        for _ in 0..<5000 {
            var bytes = good
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            _ = try? EntriesBlob.decode(Data(bytes))
        }
    }

    /// Contents are UTF-8 or refused, including invalid bytes whose repair
    /// would have the same length (a 4-byte sequence cut after 3 bytes, then
    /// an ASCII byte: three bytes become U+FFFD, also three).
    @Test func contentsAreUTF8OrRefused() {
        func read(_ bytes: [UInt8]) -> String? { bytes.withUnsafeBytes { EntriesBlob.utf8($0) } }
        #expect(read([]) == "")
        #expect(read(Array("{\"é🌍\":\"日本\"}".utf8)) == "{\"é🌍\":\"日本\"}")
        #expect(read([0x00, 0x41]) == "\u{0}A")
        for bad: [UInt8] in [
            [0xFF], [0xF0, 0x9F, 0x98, 0x41], [0xE2, 0x82], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0x41, 0x80],
        ] {
            #expect(read(bad) == nil, "\(bad)")
            #expect(read(bad) == String(validating: bad, as: UTF8.self), "\(bad)")
        }
        // The same verdict as the standard library's validation, on random bytes.
        var rng = SplitMix64(seed: 0x0F8)
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 0...6, using: &rng)).map { _ in
                [0x41, 0x80, 0xBF, 0xC3, 0xA9, 0xE2, 0xF0, 0x9F, 0xFF].randomElement(using: &rng)! as UInt8
            }
            #expect(read(bytes) == String(validating: bytes, as: UTF8.self), "\(bytes)")
        }
    }

    /// The entries blobs read on a second thread (`TimelineDecoding`, as a
    /// restart reads them): every row's outcome in the order added, the same
    /// as reading each blob in turn, with damaged ones refused; small batches
    /// so that many are handed over and the caller reads some itself.
    @Test(arguments: [1 << 10, 64 << 10, 4 << 20])
    func blobsReadOnTheSecondThreadMatchReadingInTurn(batchBytes: Int) throws {
        var rng = SplitMix64(seed: 0x7D)
        var blobs: [(id: String, policy: ReloadPolicy, bytes: [UInt8])] = []
        for index in 0..<2_000 {
            var bytes = [UInt8](EntriesBlob.encode(EntriesJSONTests.randomEntries(&rng)))
            if index % 17 == 0 { bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= 0xFF }
            if index % 29 == 0 { bytes.removeLast(Int.random(in: 1...bytes.count, using: &rng)) }
            let policy: ReloadPolicy = index % 3 == 0 ? .atEnd : .after(1_800_000_000 + Double(index))
            blobs.append(("w\(index)", policy, bytes))
        }
        var decoding = TimelineDecoding(batchBytes: batchBytes)
        for (sequence, blob) in blobs.enumerated() {
            blob.bytes.withUnsafeBytes { decoding.add(sequence: sequence, id: blob.id, policy: blob.policy, blob: $0) }
        }
        let outcomes = decoding.finish()
        #expect(outcomes.map(\.sequence) == Array(blobs.indices))
        var refused = 0
        for (outcome, blob) in zip(outcomes, blobs) {
            #expect(outcome.id == blob.id)
            let check = RowCheck(table: "timeline", key: blob.id)
            let inTurn: TimelineRecord? = try? StateTransaction.checkedTimeline(
                EntriesBlob.decode(Data(blob.bytes)), policy: blob.policy, check: check)
            switch outcome.timeline {
            case .success(let timeline): #expect(timeline == inTurn)
            case .failure(let error):
                refused += 1
                #expect(inTurn == nil)
                #expect(error.description.hasPrefix("corrupt row in timeline (\(blob.id)): entries"), "\(error)")
            }
        }
        #expect(refused > 50)
    }

    /// A file written before v5 (entries as JSON text) is converted by the
    /// v5 migration; a row it cannot read stays text and is set aside at load.
    @Test func theV5MigrationConvertsTheTextColumns() throws {
        let path = temporaryPath("v5-migration")
        let saved: SchedulerState
        do {
            let store = try StateStore(path: path)
            try store.saveSchedulerState(simulatedDay().state)
            saved = try store.loadSchedulerState()
            // Back to what v4 wrote: JSON text, and v5 not applied.
            for s in saved.instances {
                guard let timeline = s.timeline else { continue }
                let text = try StateTransaction.encode(timeline.entries)
                try store.execute(sql: "UPDATE timeline SET entries = '\(text)' WHERE instanceID = '\(s.instance.id)'")
            }
            try store.execute(sql: "UPDATE timeline SET entries = '[{\"date\": 1' WHERE instanceID = 'w3'")
            try store.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v5'")
        }
        let store = try StateStore(path: path)
        #expect(try store.appliedMigrations().last == "v5")
        let (state, setAside) = try store.loadSchedulerStateSettingAsideBadRows(at: t0)
        #expect(state.instances == saved.instances.filter { $0.instance.id != "w3" })
        #expect(setAside.map(\.key) == ["w3"])
        let types = try DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT typeof(entries) FROM timeline ORDER BY instanceID")
        }
        #expect(
            !types.isEmpty && types.allSatisfy { $0 == "blob" },
            "converted; the unreadable row went with its instance: \(types)")
    }
}
