// WidgetKit provider code from Apple's documentation ("TimelineProvider",
// "Keeping a widget up to date"), with `import WidgetKit` replaced by
// `import WidgetHostKit` and nothing else changed in the copied parts.
// The parts the documentation leaves out (`hasHealthLevel`,
// `currentHealthLevel`, `placeholder`, `EmojiRanger`) are filled in below in
// the same style. The documentation prints the leaderboard's completion type
// as `(Timeline) -> Void`, its generic argument lost in HTML; Swift (and
// WidgetKit) needs `Timeline<Entry>`.
import WidgetHostKit

struct CharacterDetailEntry: TimelineEntry {
    var date: Date
    var healthLevel: Double
}

struct CharacterDetailProvider: TimelineProvider {
    var hasHealthLevel = false
    var currentHealthLevel = 0.25

    func placeholder(in context: Context) -> CharacterDetailEntry {
        CharacterDetailEntry(date: Date(), healthLevel: 0.75)
    }

    func getSnapshot(in context: Context, completion: @escaping (Entry) -> Void) {
        let date = Date()
        let entry: CharacterDetailEntry

        if context.isPreview && !hasHealthLevel {
            entry = CharacterDetailEntry(date: date, healthLevel: 0.75)
        } else {
            entry = CharacterDetailEntry(date: date, healthLevel: currentHealthLevel)
        }
        completion(entry)
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<Entry>) -> Void) {
        let entries = [CharacterDetailEntry(date: Date(), healthLevel: currentHealthLevel)]
        // Request a timeline refresh after 2.5 hours.
        let date = Calendar.current.date(byAdding: .minute, value: 150, to: Date())!
        let timeline = Timeline(entries: entries, policy: .after(date))
        completion(timeline)
    }
}

struct EmojiRanger: Encodable {
    var name: String
    var level: Int

    static let availableHeros = [
        EmojiRanger(name: "Spouty", level: 1), EmojiRanger(name: "Power Panda", level: 2),
    ]

    static func loadLeaderboardData(completion: @escaping ([EmojiRanger]?, Error?) -> Void) {
        completion(availableHeros.sorted { $0.level > $1.level }, nil)
    }
}

struct LeaderboardEntry: TimelineEntry {
    let date: Date
    let heros: [EmojiRanger]
}

struct LeaderboardProvider: TimelineProvider {
    func placeholder(in context: Context) -> LeaderboardEntry {
        LeaderboardEntry(date: Date(), heros: EmojiRanger.availableHeros)
    }

    func getSnapshot(in context: Context, completion: @escaping (LeaderboardEntry) -> Void) {
        completion(LeaderboardEntry(date: Date(), heros: EmojiRanger.availableHeros))
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<Entry>) -> Void) {
        EmojiRanger.loadLeaderboardData { (heros, error) in
            guard let heros else {
                let timeline = Timeline(
                    entries: [LeaderboardEntry(date: Date(), heros: EmojiRanger.availableHeros)], policy: .atEnd)

                completion(timeline)

                return
            }
            let timeline = Timeline(entries: [LeaderboardEntry(date: Date(), heros: heros)], policy: .atEnd)
            completion(timeline)
        }
    }
}
