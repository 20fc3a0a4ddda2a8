import WidgetHostKit

/// One moment of the character-detail widget: the character's health.
struct CharacterDetailEntry: TimelineEntry {
    var date: Date
    var character: String
    /// Health from 0 to 1.
    var healthLevel: Double
    /// Whether the level is sample data (the gallery, no real data).
    var isSample: Bool = false
}

/// The game character whose health recovers 25% an hour (Apple's
/// `TimelineProvider` example): hourly entries until 100%, then `.atEnd`; a
/// character at full health gets one entry and `.never`, since nothing will
/// change until the game says so.
struct CharacterDetailProvider: TimelineProvider {
    /// Health recovered per hour.
    static let recoveryPerHour = 0.25

    func placeholder(in context: Context) -> CharacterDetailEntry {
        CharacterDetailEntry(date: context.date, character: "Power Panda", healthLevel: 0.75, isSample: true)
    }

    func getSnapshot(in context: Context, completion: @escaping (CharacterDetailEntry) -> Void) {
        let character = Self.character(in: context)
        if context.isPreview, Self.health(in: context) == nil {
            completion(CharacterDetailEntry(date: context.date, character: character, healthLevel: 0.75, isSample: true))
        } else {
            completion(
                CharacterDetailEntry(
                    date: context.date, character: character, healthLevel: Self.health(in: context) ?? 0.75))
        }
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<CharacterDetailEntry>) -> Void) {
        guard let health = Self.health(in: context) else {
            context.fail(
                TimelineProviderError(
                    code: 100, message: "parameter \"health\" must be a number from 0 to 1, e.g. {\"health\": 0.25}"))
            return
        }
        completion(Self.timeline(character: Self.character(in: context), health: health, now: context.date))
    }

    /// Hourly entries from `health` up to full health.
    static func timeline(character: String, health: Double, now: Date) -> Timeline<CharacterDetailEntry> {
        var level = min(max(health, 0), 1)
        if level >= 1 {
            return Timeline(entries: [CharacterDetailEntry(date: now, character: character, healthLevel: 1)], policy: .never)
        }
        var entries: [CharacterDetailEntry] = []
        var date = now
        while true {
            entries.append(CharacterDetailEntry(date: date, character: character, healthLevel: level))
            if level >= 1 { break }
            level = min(1, level + recoveryPerHour)
            date = date.addingTimeInterval(3600)
        }
        return Timeline(entries: entries, policy: .atEnd)
    }

    static func character(in context: Context) -> String {
        context.configuration.string("character") ?? "Power Panda"
    }

    static func health(in context: Context) -> Double? {
        guard let value = context.configuration.number("health"), (0...1).contains(value) else { return nil }
        return value
    }
}

/// A hero on the leaderboard.
struct Hero: Codable, Sendable, Hashable {
    var name: String
    var score: Int
}

/// The leaderboard widget's entry: heroes, best first.
struct LeaderboardEntry: TimelineEntry {
    var date: Date
    var heroes: [Hero]
    var source: String
}

/// The leaderboard (Emoji Rangers' example), written with `async`: reads
/// `leaderboard.json` (an array of `{"name", "score"}`) from the data
/// directory, or shows the built-in heroes. One entry and `.atEnd`, as in the
/// sample; a malformed file is an error naming it.
struct LeaderboardProvider: TimelineProvider {
    static let availableHeroes = [
        Hero(name: "Spouty", score: 0), Hero(name: "Power Panda", score: 0), Hero(name: "Egghead", score: 0),
    ]

    func placeholder(in context: Context) -> LeaderboardEntry {
        LeaderboardEntry(date: context.date, heroes: Self.availableHeroes, source: "placeholder")
    }

    func snapshot(in context: Context) async throws -> LeaderboardEntry {
        if context.isPreview {
            return LeaderboardEntry(date: context.date, heroes: Self.availableHeroes, source: "sample")
        }
        return try Self.entry(in: context)
    }

    func timeline(in context: Context) async throws -> Timeline<LeaderboardEntry> {
        Timeline(entries: [try Self.entry(in: context)], policy: .atEnd)
    }

    static func entry(in context: Context) throws -> LeaderboardEntry {
        let file = context.dataDirectory.appendingPathComponent("leaderboard.json")
        guard let data = try? Data(contentsOf: file) else {
            return LeaderboardEntry(
                date: context.date, heroes: availableHeroes,
                source: "built-in heroes; write leaderboard.json in \(context.dataDirectory.path) to change")
        }
        do {
            let heroes = try JSONDecoder().decode([Hero].self, from: data)
            return LeaderboardEntry(
                date: context.date, heroes: heroes.sorted { $0.score > $1.score }, source: file.path)
        } catch {
            throw TimelineProviderError(
                code: 101,
                message: "\(file.path) is not a JSON array of {\"name\": String, \"score\": Int}: \(error)")
        }
    }
}
