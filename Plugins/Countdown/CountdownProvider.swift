import WidgetHostKit

/// One moment of the countdown.
struct CountdownEntry: TimelineEntry, Encodable {
    var date: Date
    var title: String
    var target: Date
    /// Whole seconds left at `date`; 0 once the target has passed.
    var remainingSeconds: Int
    var days: Int
    var hours: Int
    var minutes: Int
    /// "counting" or "done".
    var status: String

    /// Climb the stack in the last hour.
    var relevance: TimelineEntryRelevance? {
        TimelineEntryRelevance(score: remainingSeconds <= 3600 ? 90 : 20)
    }
}

/// A countdown to a date: a window of pre-computed entries, 5 minutes apart,
/// for the next 6 hours, and `.after(end of window)`; once the target falls
/// inside the window, a last "done" entry at the target and `.never`.
struct CountdownProvider: TimelineProvider {
    /// Distance between entries: the host wants entries at least ~5 minutes
    /// apart.
    static let step: TimeInterval = 5 * 60
    /// How far ahead one timeline reaches.
    static let window: TimeInterval = 6 * 3600

    func placeholder(in context: Context) -> CountdownEntry {
        let target = context.date.addingTimeInterval(3 * 86400 + 4 * 3600 + 5 * 60)
        return Self.entry(at: context.date, title: "New Year", target: target)
    }

    func getSnapshot(in context: Context, completion: @escaping @Sendable (CountdownEntry) -> Void) {
        do {
            let (title, target) = try Self.settings(in: context)
            completion(Self.entry(at: context.date, title: title, target: target))
        } catch {
            context.fail(error)
        }
    }

    func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<CountdownEntry>) -> Void) {
        do {
            let (title, target) = try Self.settings(in: context)
            completion(Self.timeline(title: title, target: target, now: context.date))
        } catch {
            context.fail(error)
        }
    }

    /// Warms, in the fork server, what snapshot and timeline use on first
    /// call: the ISO 8601 parser of "target" and the Gregorian calendar of
    /// the default target (the SDK already warms the placeholder).
    func warmUp(in context: Context) {
        _ = try? Date("2027-01-01T00:00:00Z", strategy: .iso8601)
        _ = Self.timeline(title: "", target: Self.nextNewYear(after: context.date), now: context.date)
    }

    /// The window of entries from `now`.
    static func timeline(title: String, target: Date, now: Date) -> Timeline<CountdownEntry> {
        if target <= now {
            return Timeline(entries: [entry(at: now, title: title, target: target)], policy: .never)
        }
        let end = now.addingTimeInterval(window)
        var entries: [CountdownEntry] = []
        var tick = now
        while tick < target && tick <= end {
            entries.append(entry(at: tick, title: title, target: target))
            tick = tick.addingTimeInterval(step)
        }
        if target <= end {
            entries.append(entry(at: target, title: title, target: target))
            return Timeline(entries: entries, policy: .never)
        }
        return Timeline(entries: entries, policy: .after(end))
    }

    static func entry(at date: Date, title: String, target: Date) -> CountdownEntry {
        let remaining = max(0, Int(target.timeIntervalSince(date).rounded(.up)))
        return CountdownEntry(
            date: date, title: title, target: target, remainingSeconds: remaining,
            days: remaining / 86400, hours: remaining % 86400 / 3600, minutes: remaining % 3600 / 60,
            status: remaining == 0 ? "done" : "counting")
    }

    /// The title and target from the configuration; the target defaults to
    /// the next New Year (UTC) after the host's `now`.
    static func settings(in context: Context) throws -> (title: String, target: Date) {
        let title = context.configuration.string("title").flatMap { $0.isEmpty ? nil : $0 } ?? "New Year"
        guard let text = context.configuration.string("target"), !text.isEmpty else {
            return (title, nextNewYear(after: context.date))
        }
        guard let target = try? Date(text, strategy: .iso8601) else {
            throw TimelineProviderError(
                code: 100,
                message: "parameter \"target\" is \"\(text)\", not an ISO 8601 date-time like \"2027-01-01T00:00:00Z\"")
        }
        return (title, target)
    }

    static func nextNewYear(after date: Date) -> Date {
        let year = utc.component(.year, from: date)
        return utc.date(from: DateComponents(year: year + 1, month: 1, day: 1))!
    }

    /// The Gregorian calendar in UTC, made once (in the fork server's warm-up)
    /// rather than in every call.
    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        return calendar
    }()
}
