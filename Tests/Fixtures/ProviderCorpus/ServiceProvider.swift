// Corpus: a provider that keeps a service object (a class with a cache), as
// many apps' providers do; WidgetKit providers need not be Sendable.
import WidgetHostKit

final class ReadingService {
    private var cache: [String: Int] = [:]

    func pagesRead(for book: String) -> Int {
        if let pages = cache[book] { return pages }
        let pages = book.count * 10
        cache[book] = pages
        return pages
    }
}

struct ReadingIntent: WidgetConfigurationIntent {
    static var title: LocalizedStringResource = "Reading"
    @Parameter(title: "Book", default: "Moby Dick") var book: String
}

struct ReadingEntry: TimelineEntry {
    let date: Date
    let book: String
    let pages: Int
}

struct ReadingProvider: AppIntentTimelineProvider {
    private let service = ReadingService()

    func placeholder(in context: Context) -> ReadingEntry {
        ReadingEntry(date: Date(), book: "Moby Dick", pages: 0)
    }

    func snapshot(for configuration: ReadingIntent, in context: Context) async -> ReadingEntry {
        ReadingEntry(date: Date(), book: configuration.book, pages: service.pagesRead(for: configuration.book))
    }

    func timeline(for configuration: ReadingIntent, in context: Context) async -> Timeline<ReadingEntry> {
        let entry = await snapshot(for: configuration, in: context)
        return Timeline(entries: [entry], policy: .after(Date().addingTimeInterval(4 * 3600)))
    }
}
