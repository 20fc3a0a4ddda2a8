// The corpus plugin's export: the widgets a bundle declares (as apps declare
// them) and the other providers as WidgetKinds.
import WidgetHostKit

// MARK: 22. Weather for a city chosen by SiriKit intent (the older template).

final class CityIntent: INIntent {
    @Parameter(title: "City") var city: String?
}

struct CityEntry: TimelineEntry {
    let date: Date
    let city: String
}

struct CityProvider: IntentTimelineProvider {
    func placeholder(in context: Context) -> CityEntry { CityEntry(date: Date(), city: "Cupertino") }

    func getSnapshot(for configuration: CityIntent, in context: Context, completion: @escaping (CityEntry) -> Void) {
        completion(CityEntry(date: Date(), city: configuration.city ?? "Cupertino"))
    }

    func getTimeline(
        for configuration: CityIntent, in context: Context, completion: @escaping (Timeline<CityEntry>) -> Void
    ) {
        completion(
            Timeline(entries: [CityEntry(date: Date(), city: configuration.city ?? "Cupertino")], policy: .atEnd))
    }
}

@main
struct CorpusWidgets: WidgetBundle {
    var body: some Widget {
        HeroHealthWidget()
        CharacterIntentWidget()
        TemplateWidget()
        ScoreWidget()
        HabitWidget()
    }
}

@_cdecl("widgethost_provider_entry")
public func widgethostProviderEntry(_ offer: UnsafeRawPointer?) -> UnsafeRawPointer? {
    WidgetHostExport.descriptor(
        offer: offer,
        plugin: PluginInfo(id: "org.widgethost.provider-corpus", name: "Provider corpus", version: "1.0.0"),
        kinds: CorpusWidgets().kinds + [
            WidgetKind("corpus.countdown", displayName: "Countdown", provider: EventCountdownProvider()),
            WidgetKind("corpus.unread", displayName: "Unread", families: [.systemSmall], provider: UnreadProvider()),
            WidgetKind("corpus.apps", displayName: "Apps", families: [.systemMedium], provider: AppsProvider()),
            WidgetKind("corpus.stats", displayName: "Stats", families: [.systemSmall], provider: SiteStatsProvider()),
            WidgetKind(
                "corpus.shared", displayName: "Shared", families: [.systemSmall], provider: SharedDefaultsProvider()),
            WidgetKind("corpus.firewall", displayName: "Firewall", provider: FirewallProvider()),
            WidgetKind(
                "corpus.departures", displayName: "Departures", families: [.systemMedium],
                provider: DeparturesProvider()),
            WidgetKind("corpus.artwork", displayName: "Artwork", families: [.systemLarge], provider: ArtworkProvider()),
            WidgetKind("corpus.steps", displayName: "Steps", families: [.systemSmall], provider: StepsProvider()),
            WidgetKind("corpus.bus", displayName: "Bus", families: [.systemSmall], provider: BusProvider()),
            WidgetKind(
                "corpus.currency", displayName: "Currency", families: [.systemSmall], provider: CurrencyProvider()),
            WidgetKind("corpus.notes", displayName: "Notes", families: [.systemMedium], provider: NotesProvider()),
            WidgetKind("corpus.tracker", displayName: "Tracker", families: [.systemSmall], provider: TrackerProvider()),
            WidgetKind("corpus.server", displayName: "Server", families: [.systemSmall], provider: ServerProvider()),
            WidgetKind(
                "corpus.slow-weather", displayName: "Slow weather", families: [.systemSmall],
                provider: SlowWeatherProvider()),
            WidgetKind("corpus.city", displayName: "City", families: [.systemSmall], provider: CityProvider()),
            WidgetKind("corpus.reading", displayName: "Reading", families: [.systemSmall], provider: ReadingProvider()),
            WidgetKind(
                "corpus.clock", displayName: "Clock", families: [.accessoryCircular, .accessoryInline],
                provider: ClockProvider()),
        ])
}
