import Testing
import WidgetHostABI
import WidgetHostKit

// Entries that are not Encodable, exported by reflection of their stored
// properties (TimelineEntry's rules), through the C ABI.

private struct Item: Hashable {
    var name: String
    var count: Int
}

private enum LoadError: LocalizedError {
    case offline
    var errorDescription: String? { "You are offline." }
}

private struct ResultEntry: TimelineEntry {
    var date: Date
    var items: Result<[Item], any Error>
}

private enum ModeEntry: TimelineEntry {
    case empty(Date)
    case full(Date, count: Int)
    var date: Date {
        switch self {
        case .empty(let date), .full(let date, _): date
        }
    }
}

private struct AnyEntry: TimelineEntry, @unchecked Sendable {
    var date: Date
    var values: [String: Any]
}

private final class Node: @unchecked Sendable {
    var name = "root"
    var next: Node?
}

private struct Coded: Codable { var a: Int }

private struct MixedEntry: TimelineEntry, @unchecked Sendable {
    var date: Date
    var node: Node
    var url: URL
    var id: UUID
    var optional: String?
    var ratio: Double
    var nan: Double
    var pair: (Int, String)
    var coded: Coded
    var closure: () -> Void
}

private struct Answers<Entry: TimelineEntry>: TimelineProvider, @unchecked Sendable {
    let entry: Entry
    func placeholder(in context: Context) -> Entry { entry }
    func snapshot(in context: Context) async throws -> Entry { entry }
    func timeline(in context: Context) async throws -> Timeline<Entry> { Timeline(entries: [entry], policy: .never) }
}

private let date = Date(timeIntervalSince1970: 1_795_000_000)

private func exported<Entry: TimelineEntry>(_ entry: Entry, id: String) async -> String? {
    let d = descriptor(
        PluginInfo(id: "test.reflect.\(id)", name: "R", version: "1"),
        kinds: [WidgetKind("test.\(id)", displayName: id, provider: Answers(entry: entry))])
    let result = await call(kind(d, 0), .timeline)
    return result.entries.first?.json
}

@Suite struct ReflectedEntryTests {
    @Test func resultWithAnError() async {
        let ok = await exported(ResultEntry(date: date, items: .success([Item(name: "a", count: 2)])), id: "ok")
        #expect(ok == #"{"date":"2026-11-18T11:06:40Z","items":{"success":[{"count":2,"name":"a"}]}}"#)
        let failed = await exported(ResultEntry(date: date, items: .failure(LoadError.offline)), id: "failed")
        #expect(failed == #"{"date":"2026-11-18T11:06:40Z","items":{"failure":"You are offline."}}"#)
    }

    @Test func enumEntries() async {
        #expect(await exported(ModeEntry.empty(date), id: "empty") == #"{"empty":"2026-11-18T11:06:40Z"}"#)
        #expect(
            await exported(ModeEntry.full(date, count: 3), id: "full")
                == #"{"full":{".0":"2026-11-18T11:06:40Z","count":3}}"#)
    }

    @Test func anyDictionary() async {
        let json = await exported(
            AnyEntry(date: date, values: ["n": 1, "s": "x", "list": [1, 2], "nested": ["k": true]]), id: "any")
        #expect(json == #"{"date":"2026-11-18T11:06:40Z","values":{"list":[1,2],"n":1,"nested":{"k":true},"s":"x"}}"#)
    }

    @Test func classesCyclesAndScalars() async throws {
        let node = Node()
        node.next = node
        let id = try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        let entry = MixedEntry(
            date: date, node: node, url: URL(string: "https://example.com/a")!, id: id, optional: nil, ratio: 0.25,
            nan: .nan, pair: (1, "b"), coded: Coded(a: 5), closure: {})
        let json = await exported(entry, id: "mixed")
        #expect(
            json
                == #"{"closure":"(Function)","coded":{"a":5},"date":"2026-11-18T11:06:40Z","id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","nan":null,"node":{"name":"root","next":"<cycle: Node>"},"optional":null,"pair":[1,"b"],"ratio":0.25,"url":"https://example.com/a"}"#
        )
    }

    @Test func theWarningNamesTheTypeAndTheFix() {
        // What `widgethost load` shows for a reflected entry (written to stderr per call).
        let text = WidgetHostExport.reflectionWarning(for: ResultEntry.self)
        #expect(text.contains("ResultEntry is not Encodable"))
        #expect(text.contains("make it Codable"))
    }
}
