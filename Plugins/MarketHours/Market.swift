import WidgetHostKit

/// A stock exchange's trading hours, from `market.json` in the plugin's data
/// directory or built in.
///
/// `market.json` (every member but `exchange`, `open` and `close` optional):
///
/// ```json
/// {
///   "exchange": "NYSE",
///   "utcOffset": "-05:00",
///   "open": "09:30",
///   "close": "16:00",
///   "weekend": ["saturday", "sunday"],
///   "holidays": ["2026-11-26", "2026-12-25"],
///   "prices": {"AAPL": 231.5}
/// }
/// ```
///
/// Times are local to the exchange, at the fixed `utcOffset` (FoundationEssentials
/// has no IANA time-zone database; change the offset for daylight saving time).
struct Market: Sendable, Equatable {
    var exchange: String
    /// Seconds east of UTC.
    var utcOffset: Int
    /// Minutes after local midnight.
    var open: Int
    var close: Int
    /// `Calendar` weekdays (1 = Sunday ... 7 = Saturday).
    var weekend: Set<Int>
    /// Local dates, "YYYY-MM-DD".
    var holidays: Set<String>
    var prices: [String: Double]
    /// Where the data came from.
    var source: String

    static let fileName = "market.json"

    /// NYSE-like defaults: 09:30-16:00 at UTC-05:00, closed on weekends.
    static func builtIn(directory: String) -> Market {
        Market(
            exchange: "NYSE", utcOffset: -5 * 3600, open: 9 * 60 + 30, close: 16 * 60, weekend: [1, 7], holidays: [],
            prices: [:], source: "built-in defaults; write \(fileName) in \(directory) to change")
    }

    /// Reads `market.json` from `directory`: the built-in defaults if there is
    /// none, an error naming the file and the problem if it is malformed.
    static func load(from directory: URL) throws -> Market {
        let file = directory.appendingPathComponent(fileName)
        guard let data = try? Data(contentsOf: file) else { return builtIn(directory: directory.path) }
        do {
            return try parse(data, source: file.path)
        } catch let problem as Problem {
            throw TimelineProviderError(code: 100, message: "\(file.path): \(problem.text)")
        } catch {
            throw TimelineProviderError(code: 100, message: "\(file.path): not valid JSON for a market: \(error)")
        }
    }

    struct Problem: Error {
        var text: String
    }

    private struct File: Decodable {
        var exchange: String
        var utcOffset: String?
        var open: String
        var close: String
        var weekend: [String]?
        var holidays: [String]?
        var prices: [String: Double]?
    }

    static func parse(_ data: Data, source: String) throws -> Market {
        let file = try JSONDecoder().decode(File.self, from: data)
        let open = try minutes(file.open, field: "open")
        let close = try minutes(file.close, field: "close")
        guard open < close else {
            throw Problem(text: "\"open\" (\(file.open)) must be before \"close\" (\(file.close))")
        }
        let days = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
        var weekend: Set<Int> = []
        for name in file.weekend ?? ["saturday", "sunday"] {
            guard let index = days.firstIndex(of: name.lowercased()) else {
                throw Problem(text: "\"weekend\" has \"\(name)\", expected a day name like \"saturday\"")
            }
            weekend.insert(index + 1)
        }
        guard weekend.count < 7 else { throw Problem(text: "\"weekend\" lists every day: the market never opens") }
        for holiday in file.holidays ?? [] where !isLocalDate(holiday) {
            throw Problem(text: "\"holidays\" has \"\(holiday)\", expected YYYY-MM-DD")
        }
        return Market(
            exchange: file.exchange, utcOffset: try offset(file.utcOffset ?? "+00:00"), open: open, close: close,
            weekend: weekend, holidays: Set(file.holidays ?? []), prices: file.prices ?? [:], source: source)
    }

    private static func minutes(_ text: String, field: String) throws -> Int {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]), (0..<24).contains(hour),
            (0..<60).contains(minute)
        else { throw Problem(text: "\"\(field)\" is \"\(text)\", expected HH:MM (24-hour), e.g. \"09:30\"") }
        return hour * 60 + minute
    }

    private static func offset(_ text: String) throws -> Int {
        guard let sign = text.first, sign == "+" || sign == "-" else {
            throw Problem(text: "\"utcOffset\" is \"\(text)\", expected +HH:MM or -HH:MM, e.g. \"-05:00\"")
        }
        let minutes = try minutes(String(text.dropFirst()), field: "utcOffset")
        return (sign == "-" ? -1 : 1) * minutes * 60
    }

    private static func isLocalDate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        return parts.count == 3 && parts[0].count == 4 && parts[1].count == 2 && parts[2].count == 2
            && parts.allSatisfy { Int($0) != nil }
    }

    // MARK: Sessions

    var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: utcOffset)!
        return calendar
    }

    /// Why the market is closed on the day starting at `dayStart`, or `nil`
    /// if it trades that day.
    func closure(ofDayStarting dayStart: Date) -> String? {
        let calendar = self.calendar
        if weekend.contains(calendar.component(.weekday, from: dayStart)) { return "weekend" }
        let parts = calendar.dateComponents([.year, .month, .day], from: dayStart)
        let key = pad(parts.year!, to: 4) + "-" + pad(parts.month!, to: 2) + "-" + pad(parts.day!, to: 2)
        return holidays.contains(key) ? "holiday" : nil
    }

    /// The trading sessions (open, close) whose close is after `date`, up to
    /// `limit` days ahead.
    func sessions(after date: Date, days limit: Int = 31) -> [(open: Date, close: Date)] {
        let calendar = self.calendar
        let today = calendar.startOfDay(for: date)
        var result: [(open: Date, close: Date)] = []
        for offset in 0..<limit {
            guard let day = calendar.date(byAdding: .day, value: offset, to: today), closure(ofDayStarting: day) == nil
            else { continue }
            let open = day.addingTimeInterval(Double(self.open * 60))
            let close = day.addingTimeInterval(Double(self.close * 60))
            if close > date { result.append((open, close)) }
        }
        return result
    }
}

private func pad(_ value: Int, to width: Int) -> String {
    let digits = "\(value)"
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
