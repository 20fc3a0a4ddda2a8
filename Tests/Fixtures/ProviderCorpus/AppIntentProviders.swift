// Corpus: AppIntentTimelineProvider code (Xcode's widget template today)
// with the configuration intents it comes with.
import WidgetHostKit

// MARK: 16. Xcode's template: one String parameter, the entry keeps the intent.

struct ConfigurationAppIntent: WidgetConfigurationIntent {
    static var title: LocalizedStringResource = "Configuration"
    static var description = IntentDescription("This is an example widget.")

    @Parameter(title: "Favorite Emoji", default: "😃")
    var favoriteEmoji: String
}

struct SimpleEntry: TimelineEntry {
    let date: Date
    let configuration: ConfigurationAppIntent
}

struct TemplateProvider: AppIntentTimelineProvider {
    func placeholder(in context: Context) -> SimpleEntry {
        SimpleEntry(date: Date(), configuration: ConfigurationAppIntent())
    }

    func snapshot(for configuration: ConfigurationAppIntent, in context: Context) async -> SimpleEntry {
        SimpleEntry(date: Date(), configuration: configuration)
    }

    func timeline(for configuration: ConfigurationAppIntent, in context: Context) async -> Timeline<SimpleEntry> {
        var entries: [SimpleEntry] = []
        let currentDate = Date()
        for hourOffset in 0..<5 {
            let entryDate = Calendar.current.date(byAdding: .hour, value: hourOffset, to: currentDate)!
            entries.append(SimpleEntry(date: entryDate, configuration: configuration))
        }
        return Timeline(entries: entries, policy: .atEnd)
    }
}

struct TemplateWidget: Widget {
    let kind: String = "corpus.template"

    var body: some WidgetConfiguration {
        AppIntentConfiguration(kind: kind, intent: ConfigurationAppIntent.self, provider: TemplateProvider()) { entry in
            TemplateEntryView(entry: entry)
        }
    }
}

struct TemplateEntryView {
    var entry: SimpleEntry
}

// MARK: 17. Trial tracker: an AppEnum, a Bool and an Int, computed intent
// metadata, a parameter summary.

enum TrackerDisplayMode: String, CaseIterable, AppEnum {
    case upcoming
    case expired
    case savings

    static var typeDisplayRepresentation: TypeDisplayRepresentation {
        TypeDisplayRepresentation(name: "Display Mode", numericFormat: "\(placeholder: .int) modes")
    }

    static var caseDisplayRepresentations: [TrackerDisplayMode: DisplayRepresentation] {
        [
            .upcoming: DisplayRepresentation(
                title: "Upcoming", subtitle: "Ending soon", image: .init(systemName: "clock")),
            .expired: "Expired",
            .savings: "Savings",
        ]
    }
}

struct TrackerIntent: WidgetConfigurationIntent {
    static var title: LocalizedStringResource { "Tracker" }
    static var description: IntentDescription { IntentDescription("Track your trials.", categoryName: "Money") }

    @Parameter(title: "Display Mode", default: .upcoming)
    var displayMode: TrackerDisplayMode

    @Parameter(title: "Show Savings", default: true)
    var showSavings: Bool

    @Parameter(title: "Alert Threshold", default: 3)
    var alertThresholdDays: Int

    static var parameterSummary: some ParameterSummary {
        Summary("Show \(\.$displayMode) trials") {
            \.$showSavings
            \.$alertThresholdDays
        }
    }
}

struct TrackerEntry: TimelineEntry, Codable {
    let date: Date
    let mode: String
    let trialsEnding: Int
    let savings: Double?
}

struct TrackerProvider: AppIntentTimelineProvider {
    typealias Entry = TrackerEntry
    typealias Intent = TrackerIntent

    func placeholder(in context: Context) -> TrackerEntry {
        TrackerEntry(date: Date(), mode: "upcoming", trialsEnding: 2, savings: 12.5)
    }

    func snapshot(for configuration: TrackerIntent, in context: Context) async -> TrackerEntry {
        entry(configuration)
    }

    func timeline(for configuration: TrackerIntent, in context: Context) async -> Timeline<TrackerEntry> {
        Timeline(entries: [entry(configuration)], policy: .after(Date().addingTimeInterval(6 * 3600)))
    }

    private func entry(_ configuration: TrackerIntent) -> TrackerEntry {
        TrackerEntry(
            date: Date(), mode: configuration.displayMode.rawValue, trialsEnding: configuration.alertThresholdDays,
            savings: configuration.showSavings ? 42 : nil)
    }
}

// MARK: 18. Server status: an optional parameter, a memberwise init of the
// intent, recommendations.

struct ServerIntent: WidgetConfigurationIntent {
    static let title: LocalizedStringResource = LocalizedStringResource("server.title", defaultValue: "Server")
    static let description = IntentDescription("Watch a server.")

    @Parameter(title: "Host name")
    var host: String?

    @Parameter(title: "Show build number", default: false)
    var showBuildNumber: Bool

    init(host: String, showBuildNumber: Bool) {
        self.host = host
        self.showBuildNumber = showBuildNumber
    }

    init() {}
}

struct ServerEntry: TimelineEntry {
    let date: Date
    let host: String
    let up: Bool
    let build: String?
}

struct ServerProvider: AppIntentTimelineProvider {
    func placeholder(in context: Context) -> ServerEntry {
        ServerEntry(date: Date(), host: "example.com", up: true, build: nil)
    }

    func snapshot(for configuration: ServerIntent, in context: Context) async -> ServerEntry {
        placeholder(in: context)
    }

    func timeline(for configuration: ServerIntent, in context: Context) async -> Timeline<ServerEntry> {
        let entry = ServerEntry(
            date: Date(), host: configuration.host ?? "not set", up: configuration.host != nil,
            build: configuration.showBuildNumber ? "1.0 (42)" : nil)
        return Timeline(entries: [entry], policy: .after(Date().addingTimeInterval(900)))
    }

    func recommendations() -> [AppIntentRecommendation<ServerIntent>] {
        [
            AppIntentRecommendation(
                intent: ServerIntent(host: "example.com", showBuildNumber: true), description: "example.com")
        ]
    }
}

// MARK: 19. Weather that may wait for data: the timeline awaits a download
// (Task.sleep stands in) for as long as the configuration says, and answers
// with what it has when the deadline cancels it.

struct SlowWeatherIntent: WidgetConfigurationIntent {
    static var title: LocalizedStringResource = "Weather"

    @Parameter(title: "City", default: "Oslo")
    var city: String

    @Parameter(title: "Seconds the download takes", default: 0)
    var downloadSeconds: Double
}

struct WeatherEntry: TimelineEntry, Codable {
    let date: Date
    let city: String
    let temperature: Double?
    let cancelled: Bool
}

struct SlowWeatherProvider: AppIntentTimelineProvider {
    func placeholder(in context: Context) -> WeatherEntry {
        WeatherEntry(date: Date(), city: "Oslo", temperature: 4, cancelled: false)
    }

    func snapshot(for configuration: SlowWeatherIntent, in context: Context) async -> WeatherEntry {
        placeholder(in: context)
    }

    func timeline(for configuration: SlowWeatherIntent, in context: Context) async -> Timeline<WeatherEntry> {
        if configuration.downloadSeconds > 0 {
            try? await Task.sleep(nanoseconds: UInt64(configuration.downloadSeconds * 1e9))
        }
        let cancelled = Task.isCancelled
        let entry = WeatherEntry(
            date: Date(), city: configuration.city, temperature: cancelled ? nil : 4, cancelled: cancelled)
        return Timeline(entries: [entry], policy: .after(Date().addingTimeInterval(cancelled ? 300 : 3600)))
    }
}

// MARK: 20. Live scores that the server pushes (a sports app): a static
// configuration with a push handler.

struct ScoreEntry: TimelineEntry, Codable {
    let date: Date
    let home: Int
    let away: Int
}

struct ScorePushHandler: WidgetPushHandler {
    func pushTokenDidChange(_ pushInfo: WidgetPushInfo, widgets: [WidgetInfo]) {
        let token = pushInfo.token.map { String(format: "%02x", $0) }.joined()
        UserDefaults(suiteName: "group.corpus.scores")?.set(token, forKey: "pushToken")
    }
}

struct ScoreProvider: TimelineProvider {
    func placeholder(in context: Context) -> ScoreEntry { ScoreEntry(date: Date(), home: 0, away: 0) }

    func getSnapshot(in context: Context, completion: @escaping (ScoreEntry) -> Void) {
        completion(placeholder(in: context))
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<ScoreEntry>) -> Void) {
        completion(Timeline(entries: [ScoreEntry(date: Date(), home: 2, away: 1)], policy: .never))
    }
}

struct ScoreWidget: Widget {
    var body: some WidgetConfiguration {
        StaticConfiguration(kind: "corpus.scores", provider: ScoreProvider()) { entry in
            ScoreView(entry: entry)
        }
        .configurationDisplayName("Scores")
        .description("Live scores, pushed.")
        .supportedFamilies([.systemSmall, .accessoryInline])
        .pushHandler(ScorePushHandler.self)
        .contentMarginsDisabled()
    }
}

struct ScoreView {
    var entry: ScoreEntry
}

// MARK: 21. Habit tracker: an async timeline that throws when its data
// cannot be read, a choice of theme, `.description(_:)` from a resource.

enum HabitTheme: String, AppEnum {
    case blue, green, orange
    static var typeDisplayRepresentation = TypeDisplayRepresentation(name: "Theme")
    static var caseDisplayRepresentations: [HabitTheme: DisplayRepresentation] = [
        .blue: "Blue", .green: "Green", .orange: "Orange",
    ]
}

struct HabitIntent: WidgetConfigurationIntent {
    static var title: LocalizedStringResource = "Habit"
    @Parameter(title: "Theme", default: .green) var theme: HabitTheme
    @Parameter(title: "Habit name", default: "Read") var habit: String
}

struct HabitEntry: TimelineEntry {
    let date: Date
    let habit: String
    let theme: HabitTheme
    let streak: Int
}

struct HabitProvider: AppIntentTimelineProvider {
    func placeholder(in context: Context) -> HabitEntry {
        HabitEntry(date: Date(), habit: "Read", theme: .green, streak: 3)
    }

    func snapshot(for configuration: HabitIntent, in context: Context) async throws -> HabitEntry {
        placeholder(in: context)
    }

    func timeline(for configuration: HabitIntent, in context: Context) async throws -> Timeline<HabitEntry> {
        let file = context.dataDirectory.appendingPathComponent("habits.json")
        var streak = 0
        if FileManager.default.fileExists(atPath: file.path) {
            let data = try Data(contentsOf: file)
            streak = (try JSONDecoder().decode([String: Int].self, from: data))[configuration.habit] ?? 0
        }
        let entry = HabitEntry(date: Date(), habit: configuration.habit, theme: configuration.theme, streak: streak)
        return Timeline(
            entries: [entry], policy: .after(Calendar.current.startOfDay(for: Date()).addingTimeInterval(86_400)))
    }
}

struct HabitWidget: Widget {
    let kind = "corpus.habit"
    var body: some WidgetConfiguration {
        AppIntentConfiguration(kind: kind, intent: HabitIntent.self, provider: HabitProvider()) { entry in
            HabitView(entry: entry)
        }
        .configurationDisplayName(LocalizedStringResource("habit.name", defaultValue: "Habit"))
        .description(LocalizedStringResource("Keep your streak."))
        .supportedFamilies([.systemSmall, .systemMedium, .accessoryCircular])
        .containerBackgroundRemovable(false)
    }
}

struct HabitView {
    var entry: HabitEntry
}
