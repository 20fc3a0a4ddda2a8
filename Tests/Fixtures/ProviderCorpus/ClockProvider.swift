// Corpus: a small clock complication configured by an App Intent, in the
// shapes of watch and lock-screen widgets (intent metadata declared as
// resources, an AppEnum added by extension, the intent's own inits).
import WidgetHostKit

enum ClockStyle: String, Codable, Sendable {
    case modern, retro, minimal
}

extension ClockStyle: AppEnum {
    static var caseDisplayRepresentations: [ClockStyle: DisplayRepresentation] {
        [.modern: "Modern", .retro: "Retro LCD", .minimal: "Minimal"]
    }

    static var typeDisplayRepresentation: TypeDisplayRepresentation {
        TypeDisplayRepresentation(name: "Clock style", numericFormat: "\(placeholder: .int) styles")
    }
}

struct ClockIntent: WidgetConfigurationIntent {
    static var title: LocalizedStringResource = "Clock"
    static var description: LocalizedStringResource = "Choose the clock's look."

    @Parameter(title: "Style") var style: ClockStyle
    @Parameter(title: "Show seconds", default: false) var showSeconds: Bool

    init(style: ClockStyle) {
        self.style = style
    }

    init() {
        self.style = .modern
    }
}

struct ClockEntry: TimelineEntry {
    let date: Date
    let style: ClockStyle
    let text: String
}

struct ClockProvider: AppIntentTimelineProvider {
    func placeholder(in context: Context) -> ClockEntry {
        ClockEntry(date: Date(), style: .modern, text: "12:00")
    }

    func snapshot(for configuration: ClockIntent, in context: Context) async -> ClockEntry {
        ClockEntry(date: Date(), style: configuration.style, text: "12:00")
    }

    func timeline(for configuration: ClockIntent, in context: Context) async -> Timeline<ClockEntry> {
        let formatter = DateFormatter()
        formatter.dateFormat = configuration.showSeconds ? "HH:mm:ss" : "HH:mm"
        let start = Calendar.current.date(bySetting: .second, value: 0, of: Date()) ?? Date()
        let entries = (0..<60).map { minute -> ClockEntry in
            let date = start.addingTimeInterval(Double(minute) * 60)
            return ClockEntry(date: date, style: configuration.style, text: formatter.string(from: date))
        }
        return Timeline(entries: entries, policy: .atEnd)
    }

    func recommendations() -> [AppIntentRecommendation<ClockIntent>] {
        ClockStyle.allCases.map { AppIntentRecommendation(intent: ClockIntent(style: $0), description: $0.rawValue) }
    }
}
