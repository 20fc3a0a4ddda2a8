import Foundation
import Testing
import WidgetHostModel

@testable import WidgetHostStore

/// The `entries` column as JSON text (schema v4 and rows the v5 migration
/// left): `StateTransaction.entries(json:)` must read exactly what
/// `JSONDecoder` reads, and leave to it whatever is not the column's shape.
@Suite struct EntriesJSONTests {
    static let pieces = [
        "a", "é", "🌍", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{7}", "\u{1F}", "{\"k\":1}", " ", "日本", "\u{2028}",
    ]

    static func randomEntries(_ rng: inout SplitMix64) -> [EntryRecord] {
        (0..<Int.random(in: 0...6, using: &rng)).map { index in
            let text = (0..<Int.random(in: 0...8, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }
                .joined()
            let relevance: Relevance? =
                Bool.random(using: &rng)
                ? Relevance(
                    score: [0, 1e-7, 50, 1.5e300, -0.0].randomElement(using: &rng)!,
                    duration: [0, 0.125, 86_400].randomElement(using: &rng)!) : nil
            return EntryRecord(
                date: 1_800_000_000 + Double(index) * [1, 0.001, 1e-9].randomElement(using: &rng)!,
                relevance: relevance, contentJSON: "{\"t\":\(String(reflecting: text))}")
        }
    }

    static func decoded(_ text: String) -> [EntryRecord]? {
        try? StateTransaction.decode([EntryRecord].self, text, table: "t", key: "k")
    }

    @Test func readsWhatTheWriterWroteAsJSONDecoderDoes() throws {
        var rng = SplitMix64(seed: 0xE17)
        for _ in 0..<500 {
            let entries = Self.randomEntries(&rng)
            for text in [try StateTransaction.encode(entries)] {
                let fast = try #require(StateTransaction.entries(json: text), "\(text)")
                #expect(fast == entries)
                #expect(fast == Self.decoded(text))
            }
        }
        // Escapes the writers do not use, white space, null relevance, keys in any order.
        let text = #" [ { "relevance" : null , "date" : 1.8e9 , "contentJSON" : "\u00e9\ud83c\udf0d\b\f\r\/" } ] "#
        #expect(StateTransaction.entries(json: text) == [EntryRecord(date: 1.8e9, contentJSON: "é🌍\u{8}\u{C}\r/")])
        #expect(StateTransaction.entries(json: text) == Self.decoded(text))
    }

    /// Anything outside the column's shape goes to JSONDecoder: nil here.
    @Test func leavesTheRestToJSONDecoder() {
        for text in [
            #"[{"date":1,"contentJSON":"x","extra":1}]"#, #"[{"date":"+inf","contentJSON":"x"}]"#,
            #"[{"date":1e400,"contentJSON":"x"}]"#, #"[{"date":01,"contentJSON":"x"}]"#,
            #"[{"date":1,"contentJSON":"x"}"#, #"[{"date":1,"contentJSON":"x"}] x"#, #"[{"date":1}]"#,
            #"[{"date":1,"contentJSON":"x","relevance":{"score":1}}]"#, #"[{"date":-,"contentJSON":"x"}]"#,
            #"[{"date":1.,"contentJSON":"x"}]"#, "", #"{"date":1,"contentJSON":"x"}"#, "[1]",
        ] {
            #expect(StateTransaction.entries(json: text) == nil, "\(text)")
        }
        // What the strict parser leaves to JSONDecoder is read as JSONDecoder reads it, or not at all.
        for text in [#"[{"date":1,"date":2,"contentJSON":"x"}]"#, #"[{"date":1,"contentJSON":"\ud800"}]"#] {
            let read = StateTransaction.entries(json: text)
            #expect(read == nil || read == Self.decoded(text), "\(text)")
        }
    }

    /// Random byte changes to good columns: whenever the fast reader accepts
    /// the result, JSONDecoder must read the same entries.
    @Test func acceptsAMutatedColumnOnlyAsJSONDecoderReadsIt() throws {
        var rng = SplitMix64(seed: 0xBAD)
        let alphabet = Array(#"{}[]":,.-+eE0123456789 \nulrtfa"#.utf8)
        var accepted = 0
        for _ in 0..<3000 {
            var bytes = Array(try StateTransaction.encode(Self.randomEntries(&rng)).utf8)
            guard !bytes.isEmpty else { continue }
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: bytes[at] = alphabet.randomElement(using: &rng)!
                case 1: bytes.remove(at: at)
                default: bytes.insert(alphabet.randomElement(using: &rng)!, at: at)
                }
                if bytes.isEmpty { break }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            if let fast = StateTransaction.entries(json: text) {
                accepted += 1
                #expect(fast == Self.decoded(text), "\(text)")
            }
        }
        #expect(accepted > 100, "the mutations should leave some columns readable")
    }
}
