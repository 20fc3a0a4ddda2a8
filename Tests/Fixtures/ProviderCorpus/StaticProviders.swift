// Corpus: TimelineProvider code in the shapes public apps use (written for
// this corpus after reading real providers; no code copied). Each file
// compiles with `import WidgetKit` replaced by `import WidgetHostKit` and
// nothing else. See Tests/Fixtures/README.md.
import WidgetHostKit

// MARK: 1. A hero's health recovering hour by hour (game sample): completion
// handlers, a Codable entry with relevance, `.after` when not yet full.

struct HeroEntry: TimelineEntry, Codable {
    let date: Date
    let heroName: String
    let health: Double
    var relevance: TimelineEntryRelevance? {
        TimelineEntryRelevance(score: Float(1 - health) * 100, duration: 3600)
    }
}

struct HeroHealthProvider: TimelineProvider {
    func placeholder(in context: Context) -> HeroEntry {
        HeroEntry(date: Date(), heroName: "Spouty", health: 0.8)
    }

    func getSnapshot(in context: Context, completion: @escaping (HeroEntry) -> Void) {
        completion(HeroEntry(date: Date(), heroName: "Spouty", health: 0.8))
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<HeroEntry>) -> Void) {
        var entries: [HeroEntry] = []
        let start = Date()
        var health = 0.4
        for hour in 0..<4 {
            let date = Calendar.current.date(byAdding: .hour, value: hour, to: start)!
            entries.append(HeroEntry(date: date, heroName: "Spouty", health: health))
            health = min(1, health + 0.2)
        }
        let next = Calendar.current.date(byAdding: .hour, value: 4, to: start)!
        completion(Timeline(entries: entries, policy: health >= 1 ? .never : .after(next)))
    }
}

struct HeroHealthWidget: Widget {
    let kind: String = "corpus.hero-health"

    var body: some WidgetConfiguration {
        StaticConfiguration(kind: kind, provider: HeroHealthProvider()) { entry in
            HeroView(entry: entry)
        }
        .configurationDisplayName("Hero Health")
        .description("See your hero recover.")
        .supportedFamilies([.systemSmall, .systemMedium])
    }
}

/// Stands in for the SwiftUI view (views do not build on Linux).
struct HeroView {
    var entry: HeroEntry
}

// MARK: 2. Days until an event: async TimelineProvider, `.after` midnight;
// the event's date comes from the app's server when the app configured one
// (URLSession; the corpus's tests configure none, and the kind has no network).

struct CountdownEntry: TimelineEntry, Encodable {
    let date: Date
    let title: String
    let daysLeft: Int
}

struct EventCountdownProvider: TimelineProvider {
    let eventDate = Date(timeIntervalSince1970: 1_830_000_000)

    func placeholder(in context: Context) -> CountdownEntry {
        CountdownEntry(date: Date(), title: "Launch", daysLeft: 42)
    }

    func snapshot(in context: Context) async throws -> CountdownEntry {
        entry(at: context.date)
    }

    func timeline(in context: Context) async throws -> Timeline<CountdownEntry> {
        if let address = UserDefaults(suiteName: "group.corpus.events")?.string(forKey: "eventURL"),
            let url = URL(string: address)
        {
            let (data, response) = try await URLSession.shared.data(from: url)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw URLError(.badServerResponse) }
            _ = try JSONDecoder().decode([String: Date].self, from: data)
        }
        let calendar = Calendar(identifier: .gregorian)
        let midnight = calendar.startOfDay(for: context.date.addingTimeInterval(86_400))
        return Timeline(entries: [entry(at: context.date)], policy: .after(midnight))
    }

    private func entry(at date: Date) -> CountdownEntry {
        let days = Calendar.current.dateComponents([.day], from: date, to: eventDate).day ?? 0
        return CountdownEntry(date: date, title: "Launch", daysLeft: max(0, days))
    }
}

// MARK: 3. Unread articles (feed reader): a plain app struct as entry (not
// Encodable: exported by reflection), data read from the shared container.

struct FeedSummary {
    var unread: Int
    var starred: Int
    var latestTitles: [String]
}

struct UnreadEntry: TimelineEntry {
    let date: Date
    let summary: FeedSummary
}

struct UnreadProvider: TimelineProvider {
    func placeholder(in context: Context) -> UnreadEntry {
        UnreadEntry(date: Date(), summary: FeedSummary(unread: 12, starred: 3, latestTitles: ["Hello"]))
    }

    func getSnapshot(in context: Context, completion: @escaping (UnreadEntry) -> Void) {
        completion(context.isPreview ? placeholder(in: context) : UnreadEntry(date: Date(), summary: load(context)))
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<UnreadEntry>) -> Void) {
        let entry = UnreadEntry(date: Date(), summary: load(context))
        completion(Timeline(entries: [entry], policy: .never))
    }

    private func load(_ context: Context) -> FeedSummary {
        let file = context.dataDirectory.appendingPathComponent("widget-data.json")
        guard let data = try? Data(contentsOf: file),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return FeedSummary(unread: 0, starred: 0, latestTitles: []) }
        return FeedSummary(
            unread: object["unread"] as? Int ?? 0, starred: object["starred"] as? Int ?? 0,
            latestTitles: object["titles"] as? [String] ?? [])
    }
}

// MARK: 4. Apps to refresh (sideloading store): the entry holds a Result
// with `any Error`, exported by reflection; the failure shows its
// localizedDescription.

struct InstalledApp: Hashable {
    var name: String
    var expires: Date
}

struct AppsEntry: TimelineEntry {
    var date: Date
    var apps: Result<[InstalledApp], any Error>
}

enum StoreError: LocalizedError {
    case notSignedIn
    var errorDescription: String? { "Sign in to see your apps." }
}

struct AppsProvider: TimelineProvider {
    func placeholder(in context: Context) -> AppsEntry {
        AppsEntry(date: Date(), apps: .success([InstalledApp(name: "Delta", expires: Date())]))
    }

    func getSnapshot(in context: Context, completion: @escaping (AppsEntry) -> Void) {
        completion(placeholder(in: context))
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<AppsEntry>) -> Void) {
        let signedIn = UserDefaults(suiteName: "group.corpus.store")?.bool(forKey: "signedIn") ?? false
        let apps: Result<[InstalledApp], any Error> =
            signedIn
            ? .success([InstalledApp(name: "Delta", expires: Date().addingTimeInterval(7 * 86_400))])
            : .failure(StoreError.notSignedIn)
        completion(
            Timeline(entries: [AppsEntry(date: Date(), apps: apps)], policy: .after(Date().addingTimeInterval(3600))))
    }
}

// MARK: 5. Site stats (blogging app): the entry is an enum, one case of
// which keeps the context.

struct SiteStats: Codable {
    var views: Int
    var visitors: Int
}

enum StatsEntry: TimelineEntry {
    case loggedOut(Date)
    case siteSelected(Date, SiteStats, TimelineProviderContext)

    var date: Date {
        switch self {
        case .loggedOut(let date): return date
        case .siteSelected(let date, _, _): return date
        }
    }
}

struct SiteStatsProvider: TimelineProvider {
    func placeholder(in context: Context) -> StatsEntry {
        .siteSelected(Date(), SiteStats(views: 120, visitors: 80), context)
    }

    func getSnapshot(in context: Context, completion: @escaping (StatsEntry) -> Void) {
        completion(placeholder(in: context))
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<StatsEntry>) -> Void) {
        let defaults = UserDefaults(suiteName: "group.corpus.blog")
        guard let views = defaults?.object(forKey: "views") as? Int else {
            completion(Timeline(entries: [.loggedOut(Date())], policy: .never))
            return
        }
        let stats = SiteStats(views: views, visitors: defaults?.integer(forKey: "visitors") ?? 0)
        completion(Timeline(entries: [.siteSelected(Date(), stats, context)], policy: .atEnd))
    }
}

// MARK: 6. A counter shared with a cross-platform app (codelab style): the
// app writes a dictionary into the app group's defaults; the entry keeps it.

struct SharedEntry: TimelineEntry, @unchecked Sendable {
    let date: Date
    let values: [String: Any]
}

struct SharedDefaultsProvider: TimelineProvider {
    func placeholder(in context: Context) -> SharedEntry {
        SharedEntry(date: Date(), values: ["headline": "Placeholder", "count": 0])
    }

    func getSnapshot(in context: Context, completion: @escaping (SharedEntry) -> Void) {
        completion(placeholder(in: context))
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<SharedEntry>) -> Void) {
        let defaults = UserDefaults(suiteName: "group.corpus.shared")!
        let values: [String: Any] = [
            "headline": defaults.string(forKey: "headline") ?? "",
            "count": defaults.integer(forKey: "count"),
        ]
        completion(Timeline(entries: [SharedEntry(date: Date(), values: values)], policy: .atEnd))
    }
}
