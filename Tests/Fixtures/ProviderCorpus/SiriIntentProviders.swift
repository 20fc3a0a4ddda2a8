// Corpus: IntentTimelineProvider code (SiriKit-configured widgets). Xcode
// generates the intent classes from an .intentdefinition file; here they
// are written as that code would be, with a `@Parameter` per parameter.
import WidgetHostKit

// MARK: The intents

final class BusStopIntent: INIntent {
    @Parameter(title: "Stop") var stopName: String?
    @Parameter(title: "Show only the next bus", default: false) var nextOnly: Bool
}

final class CharacterSelectionIntent: INIntent {
    @Parameter(title: "Hero", default: "Power Panda") var hero: String
    @Parameter(title: "Level", default: 3) var level: Int
}

final class CurrencyIntent: INIntent {
    @Parameter(title: "Base currency", default: "EUR") var base: String
    @Parameter(title: "Amount", description: "How much to convert", default: 100) var amount: Double
}

final class NoteIntent: INIntent {
    @Parameter(title: "Folder", default: .inbox) var folder: NoteFolder
}

enum NoteFolder: String, AppEnum {
    case inbox, work, personal
    static var typeDisplayRepresentation: TypeDisplayRepresentation = "Folder"
    static var caseDisplayRepresentations: [NoteFolder: DisplayRepresentation] = [
        .inbox: "Inbox", .work: "Work", .personal: DisplayRepresentation(title: "Personal", subtitle: "Only you"),
    ]
}

// MARK: 11. Bus departures for a chosen stop: completion forms, the entry
// keeps the intent (the common template shape).

struct BusEntry: TimelineEntry {
    let date: Date
    let configuration: BusStopIntent
    let minutes: [Int]
}

struct BusProvider: IntentTimelineProvider {
    func placeholder(in context: Context) -> BusEntry {
        BusEntry(date: Date(), configuration: BusStopIntent(), minutes: [3, 12])
    }

    func getSnapshot(for configuration: BusStopIntent, in context: Context, completion: @escaping (BusEntry) -> Void) {
        completion(BusEntry(date: Date(), configuration: configuration, minutes: [3, 12]))
    }

    func getTimeline(
        for configuration: BusStopIntent, in context: Context, completion: @escaping (Timeline<BusEntry>) -> Void
    ) {
        let minutes = configuration.nextOnly ? [4] : [4, 14, 24]
        let entry = BusEntry(date: Date(), configuration: configuration, minutes: minutes)
        completion(Timeline(entries: [entry], policy: .after(Date().addingTimeInterval(300))))
    }
}

// MARK: 12. A chosen hero (game): the entry copies values out of the intent.

struct CharacterEntry: TimelineEntry, Codable {
    let date: Date
    let hero: String
    let level: Int
}

struct CharacterIntentProvider: IntentTimelineProvider {
    typealias Intent = CharacterSelectionIntent
    typealias Entry = CharacterEntry

    func placeholder(in context: Context) -> CharacterEntry {
        CharacterEntry(date: Date(), hero: "Power Panda", level: 1)
    }

    func getSnapshot(for configuration: Intent, in context: Context, completion: @escaping (Entry) -> Void) {
        completion(CharacterEntry(date: Date(), hero: configuration.hero, level: configuration.level))
    }

    func getTimeline(for configuration: Intent, in context: Context, completion: @escaping (Timeline<Entry>) -> Void) {
        let entries = (0..<3).map {
            CharacterEntry(
                date: Date().addingTimeInterval(Double($0) * 3600), hero: configuration.hero,
                level: configuration.level + $0)
        }
        completion(Timeline(entries: entries, policy: .atEnd))
    }

    func recommendations() -> [IntentRecommendation<CharacterSelectionIntent>] {
        ["Power Panda", "Spouty"].map { name in
            let intent = CharacterSelectionIntent()
            intent.hero = name
            return IntentRecommendation(intent: intent, description: name)
        }
    }
}

// MARK: 13. Exchange rates: the async forms of an intent provider.

struct RateEntry: TimelineEntry, Codable {
    let date: Date
    let base: String
    let converted: [String: Double]
}

struct CurrencyProvider: IntentTimelineProvider {
    func placeholder(in context: Context) -> RateEntry {
        RateEntry(date: Date(), base: "EUR", converted: ["USD": 108])
    }

    func snapshot(for configuration: CurrencyIntent, in context: Context) async -> RateEntry {
        placeholder(in: context)
    }

    func timeline(for configuration: CurrencyIntent, in context: Context) async -> Timeline<RateEntry> {
        let rates = ["USD": 1.08, "GBP": 0.86, "JPY": 162.0]
        let converted = rates.mapValues { ($0 * configuration.amount * 100).rounded() / 100 }
        let entry = RateEntry(date: context.date, base: configuration.base, converted: converted)
        return Timeline(entries: [entry], policy: .after(context.date.addingTimeInterval(3600)))
    }
}

// MARK: 14. Notes of a folder: an AppEnum parameter in a SiriKit intent,
// a throwing async timeline.

struct NotesEntry: TimelineEntry {
    let date: Date
    let folder: NoteFolder
    let titles: [String]
}

struct NotesProvider: IntentTimelineProvider {
    func placeholder(in context: Context) -> NotesEntry {
        NotesEntry(date: Date(), folder: .inbox, titles: ["Groceries"])
    }

    func snapshot(for configuration: NoteIntent, in context: Context) async throws -> NotesEntry {
        NotesEntry(date: Date(), folder: configuration.folder, titles: ["Groceries"])
    }

    func timeline(for configuration: NoteIntent, in context: Context) async throws -> Timeline<NotesEntry> {
        let titles: [NoteFolder: [String]] = [.inbox: ["Groceries", "Call mom"], .work: ["Standup"], .personal: []]
        let entry = NotesEntry(date: Date(), folder: configuration.folder, titles: titles[configuration.folder] ?? [])
        return Timeline(entries: [entry], policy: .never)
    }
}

// MARK: 15. The hero again, configured by intent and declared with
// IntentConfiguration.

struct CharacterIntentWidget: Widget {
    let kind = "corpus.character-intent"

    var body: some WidgetConfiguration {
        IntentConfiguration(kind: kind, intent: CharacterSelectionIntent.self, provider: CharacterIntentProvider()) {
            entry in
            CharacterView(entry: entry)
        }
        .configurationDisplayName("Hero")
        .description("Pick a hero.")
        .supportedFamilies([.systemSmall, .accessoryRectangular])
    }
}

struct CharacterView {
    var entry: CharacterEntry
}
