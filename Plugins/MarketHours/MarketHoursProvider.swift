import WidgetHostKit

/// One moment of the market-hours widget.
struct MarketEntry: TimelineEntry, Encodable {
    var date: Date
    var exchange: String
    /// "open" or "closed".
    var status: String
    /// Why it is closed: "weekend", "holiday", "before open", "after hours";
    /// `nil` while open.
    var reason: String?
    /// When the status next changes.
    var nextChange: Date
    var prices: [String: Double]
    /// Where the hours came from (the file, or the built-in defaults).
    var source: String
}

/// Whether a stock exchange is open, and until when.
///
/// Entries at the transitions (open, close) and a reload only when data can
/// change: while open, `.after(close)` (for closing prices); while closed,
/// `.after(next open)` — on Friday after the close, that is Monday's open.
/// Reads `market.json` from the data directory (see ``Market``).
struct MarketHoursProvider: TimelineProvider {
    func placeholder(in context: Context) -> MarketEntry {
        let market = Market.builtIn(directory: context.dataDirectoryPath)
        return MarketEntry(
            date: context.date, exchange: market.exchange, status: "open", reason: nil,
            nextChange: context.date.addingTimeInterval(3600), prices: ["AAPL": 231.5], source: "placeholder")
    }

    func snapshot(in context: Context) async throws -> MarketEntry {
        try Self.timeline(market: Market.load(from: context.dataDirectory), now: context.date).entries[0]
    }

    func timeline(in context: Context) async throws -> Timeline<MarketEntry> {
        try Self.timeline(market: Market.load(from: context.dataDirectory), now: context.date)
    }

    static func timeline(market: Market, now: Date) throws -> Timeline<MarketEntry> {
        let sessions = market.sessions(after: now)
        guard let current = sessions.first else {
            throw TimelineProviderError(
                code: 101, message: "\(market.source): the market has no trading day in the next 31 days")
        }
        if current.open <= now {
            // Open now: until the close, then closed until the next open.
            let nextOpen = sessions.count > 1 ? sessions[1].open : current.close.addingTimeInterval(86400)
            let entries = [
                entry(market, at: now, open: true, reason: nil, next: current.close),
                entry(market, at: current.close, open: false, reason: "after hours", next: nextOpen),
            ]
            return Timeline(entries: entries, policy: .after(current.close))
        }
        let reason = reasonClosed(market, at: now, nextOpen: current.open)
        let entries = [
            entry(market, at: now, open: false, reason: reason, next: current.open),
            entry(market, at: current.open, open: true, reason: nil, next: current.close),
        ]
        return Timeline(entries: entries, policy: .after(current.open))
    }

    static func reasonClosed(_ market: Market, at now: Date, nextOpen: Date) -> String {
        let calendar = market.calendar
        let today = calendar.startOfDay(for: now)
        if let closure = market.closure(ofDayStarting: today) { return closure }
        return calendar.isDate(nextOpen, inSameDayAs: now) ? "before open" : "after hours"
    }

    static func entry(_ market: Market, at date: Date, open: Bool, reason: String?, next: Date) -> MarketEntry {
        MarketEntry(
            date: date, exchange: market.exchange, status: open ? "open" : "closed", reason: reason, nextChange: next,
            prices: market.prices, source: market.source)
    }
}
