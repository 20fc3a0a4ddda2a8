import WidgetHostKit

/// One moment of the character-detail widget: the character's health.
struct CharacterHealthEntry: TimelineEntry, Encodable {
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
struct CharacterHealthProvider: TimelineProvider {
    /// Health recovered per hour.
    static let recoveryPerHour = 0.25

    func placeholder(in context: Context) -> CharacterHealthEntry {
        CharacterHealthEntry(date: context.date, character: "Power Panda", healthLevel: 0.75, isSample: true)
    }

    func getSnapshot(in context: Context, completion: @escaping @Sendable (CharacterHealthEntry) -> Void) {
        let character = Self.character(in: context)
        if context.isPreview && context.configuration["health"] == nil {
            // The gallery, and no real data at hand: sample data.
            completion(
                CharacterHealthEntry(date: context.date, character: character, healthLevel: 0.75, isSample: true))
            return
        }
        do {
            completion(
                CharacterHealthEntry(
                    date: context.date, character: character, healthLevel: try Self.health(in: context)))
        } catch {
            context.fail(error)
        }
    }

    func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<CharacterHealthEntry>) -> Void) {
        do {
            completion(
                Self.timeline(
                    character: Self.character(in: context), health: try Self.health(in: context), now: context.date))
        } catch {
            context.fail(error)
        }
    }

    /// Hourly entries from `health` up to full health.
    static func timeline(character: String, health: Double, now: Date) -> Timeline<CharacterHealthEntry> {
        var level = min(max(health, 0), 1)
        if level >= 1 {
            return Timeline(
                entries: [CharacterHealthEntry(date: now, character: character, healthLevel: 1)], policy: .never)
        }
        var entries: [CharacterHealthEntry] = []
        var date = now
        while true {
            entries.append(CharacterHealthEntry(date: date, character: character, healthLevel: level))
            if level >= 1 { break }
            level = min(1, level + recoveryPerHour)
            date = date.addingTimeInterval(3600)
        }
        return Timeline(entries: entries, policy: .atEnd)
    }

    static func character(in context: Context) -> String {
        context.configuration.string("character") ?? "Power Panda"
    }

    /// The "health" parameter: 0.25 when absent, an error when not a number
    /// from 0 to 1.
    static func health(in context: Context) throws -> Double {
        guard let value = context.configuration["health"] else { return 0.25 }
        guard let number = value.numberValue, (0...1).contains(number) else {
            throw TimelineProviderError(
                code: 100,
                message: "parameter \"health\" is \(value), expected a number from 0 to 1, e.g. {\"health\": 0.25}")
        }
        return number
    }
}

/// A hero on the leaderboard.
struct Hero: Codable, Sendable, Hashable {
    var name: String
    var score: Int
}

/// The leaderboard widget's entry: heroes, best first.
struct HeroLeaderboardEntry: TimelineEntry, Encodable {
    var date: Date
    var heroes: [Hero]
    var source: String
}

/// The leaderboard (Emoji Rangers' example), written with `async`: reads
/// `leaderboard.json` (an array of `{"name", "score"}`) from the data
/// directory, or shows the built-in heroes. One entry and `.atEnd`, as in the
/// sample; a malformed file is an error naming it.
struct HeroLeaderboardProvider: TimelineProvider {
    static let availableHeroes = [
        Hero(name: "Spouty", score: 0), Hero(name: "Power Panda", score: 0), Hero(name: "Egghead", score: 0),
    ]

    func placeholder(in context: Context) -> HeroLeaderboardEntry {
        HeroLeaderboardEntry(date: context.date, heroes: Self.availableHeroes, source: "placeholder")
    }

    func snapshot(in context: Context) async throws -> HeroLeaderboardEntry {
        if context.isPreview {
            return HeroLeaderboardEntry(date: context.date, heroes: Self.availableHeroes, source: "sample")
        }
        return try Self.entry(in: context)
    }

    func timeline(in context: Context) async throws -> Timeline<HeroLeaderboardEntry> {
        Timeline(entries: [try Self.entry(in: context)], policy: .atEnd)
    }

    static func entry(in context: Context) throws -> HeroLeaderboardEntry {
        let file = context.dataDirectory.appendingPathComponent("leaderboard.json")
        guard let data = try? Data(contentsOf: file) else {
            return HeroLeaderboardEntry(
                date: context.date, heroes: availableHeroes,
                source: "built-in heroes; write leaderboard.json in \(context.dataDirectoryPath) to change")
        }
        do {
            let heroes = try JSONDecoder().decode([Hero].self, from: data)
            return HeroLeaderboardEntry(
                date: context.date, heroes: heroes.sorted { $0.score > $1.score }, source: file.path)
        } catch {
            throw TimelineProviderError(
                code: 101,
                message: "\(file.path) is not a JSON array of {\"name\": String, \"score\": Int}: \(error)")
        }
    }
}
