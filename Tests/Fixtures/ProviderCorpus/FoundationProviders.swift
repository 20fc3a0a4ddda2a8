// Corpus: providers that lean on Foundation as WidgetKit code does
// (formatters, CGSize, URLs, localizedDescription). See StaticProviders.swift.
import WidgetHostKit

// MARK: 7. Firewall status (privacy app): sizes from context.displaySize
// (a CGSize) and the family; `.never`.

struct FirewallEntry: TimelineEntry {
    var date: Date
    var isOn: Bool
    var blockedToday: Int
    var rows: Int
}

struct FirewallProvider: TimelineProvider {
    func placeholder(in context: Context) -> FirewallEntry {
        FirewallEntry(date: Date(), isOn: true, blockedToday: 0, rows: 1)
    }

    func getSnapshot(in context: Context, completion: @escaping (FirewallEntry) -> Void) {
        completion(entry(for: context))
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<FirewallEntry>) -> Void) {
        completion(Timeline(entries: [entry(for: context)], policy: .never))
    }

    private func entry(for context: Context) -> FirewallEntry {
        let size: CGSize = context.displaySize
        let rowHeight: CGFloat = 22
        var rows = Int((size.height / rowHeight).rounded(.down))
        switch context.family {
        case .accessoryInline, .accessoryCircular: rows = 0
        case .systemSmall: rows = min(rows, 4)
        default: break
        }
        let frame = CGRect(origin: .zero, size: size).insetBy(dx: 8, dy: 8)
        return FirewallEntry(date: Date(), isOn: frame.width > 0, blockedToday: 17, rows: rows)
    }
}

// MARK: 8. Next departures (transit app): DateFormatter, URLComponents for
// the request it would make (URLRequest), an error's localizedDescription.

struct DepartureEntry: TimelineEntry, Codable {
    let date: Date
    let stop: String
    let times: [String]
    let message: String?
}

struct DeparturesProvider: TimelineProvider {
    private static let formatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm"
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter
    }()

    func placeholder(in context: Context) -> DepartureEntry {
        DepartureEntry(date: Date(), stop: "Main St", times: ["12:00"], message: nil)
    }

    func getSnapshot(in context: Context, completion: @escaping (DepartureEntry) -> Void) {
        completion(placeholder(in: context))
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<DepartureEntry>) -> Void) {
        var components = URLComponents(string: "https://transit.example.com/api/departures")!
        components.queryItems = [URLQueryItem(name: "stop", value: "42")]
        let request = URLRequest(url: components.url!)
        let message: String? = request.url == nil ? URLError(.badURL).localizedDescription : nil
        let now = Date()
        let times = (1...3).map { Self.formatter.string(from: now.addingTimeInterval(Double($0) * 600)) }
        let entry = DepartureEntry(date: now, stop: "Main St", times: times, message: message)
        completion(Timeline(entries: [entry], policy: .after(now.addingTimeInterval(15 * 60))))
    }
}

// MARK: 9. Artwork of the day (art app): a bundled list, Calendar
// arithmetic, a relative date text, `.after` the next morning.

struct Artwork: Codable, Hashable {
    var title: String
    var artist: String
    var imageURL: URL
}

struct ArtworkEntry: TimelineEntry, Codable {
    var date: Date
    var artwork: Artwork
    var postedText: String
}

struct ArtworkProvider: TimelineProvider {
    let artworks = [
        Artwork(title: "Waves", artist: "A. Painter", imageURL: URL(string: "https://art.example.com/1.jpg")!),
        Artwork(title: "Hills", artist: "B. Drawer", imageURL: URL(string: "https://art.example.com/2.jpg")!),
    ]

    func placeholder(in context: Context) -> ArtworkEntry {
        ArtworkEntry(date: Date(), artwork: artworks[0], postedText: "today")
    }

    func getSnapshot(in context: Context, completion: @escaping (ArtworkEntry) -> Void) {
        completion(placeholder(in: context))
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<ArtworkEntry>) -> Void) {
        let calendar = Calendar.current
        let day = calendar.ordinality(of: .day, in: .year, for: Date()) ?? 0
        let posted = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-3600))
        let entry = ArtworkEntry(date: Date(), artwork: artworks[day % artworks.count], postedText: posted)
        var tomorrow = calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: Date()))!
        tomorrow = calendar.date(bySettingHour: 7, minute: 0, second: 0, of: tomorrow) ?? tomorrow
        completion(Timeline(entries: [entry], policy: .after(tomorrow)))
    }
}

// MARK: 10. Step goal (fitness app): several entries across the day,
// NumberFormatter with a locale, `.atEnd`.

struct StepsEntry: TimelineEntry {
    let date: Date
    let steps: Int
    let stepsText: String
    let goalReached: Bool
}

struct StepsProvider: TimelineProvider {
    func placeholder(in context: Context) -> StepsEntry {
        StepsEntry(date: Date(), steps: 5000, stepsText: "5,000", goalReached: false)
    }

    func getSnapshot(in context: Context, completion: @escaping (StepsEntry) -> Void) {
        completion(placeholder(in: context))
    }

    func getTimeline(in context: Context, completion: @escaping (Timeline<StepsEntry>) -> Void) {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.locale = Locale(identifier: "en_US")
        let entries = (0..<4).map { index -> StepsEntry in
            let steps = 2500 * (index + 1)
            return StepsEntry(
                date: Date().addingTimeInterval(Double(index) * 1800), steps: steps,
                stepsText: formatter.string(from: NSNumber(value: steps)) ?? "\(steps)", goalReached: steps >= 10_000)
        }
        completion(Timeline(entries: entries, policy: .atEnd))
    }
}
