/// How relevant an entry is, for ordering widgets in a stack (WidgetKit's
/// `TimelineEntryRelevance`).
public struct Relevance: Sendable, Hashable, Codable {
    /// A score ≥ 0; higher is more relevant. Scores compare across widgets.
    public var score: Double
    /// Seconds the score holds from the entry's date; 0 means until the next entry.
    public var duration: Double

    public init(score: Double, duration: Double = 0) {
        self.score = score
        self.duration = duration
    }
}

/// One entry of a timeline as the host sees it: a date, an optional
/// relevance, and the content the plugin produced (a JSON object, kept as text).
public struct EntryRecord: Sendable, Hashable, Codable {
    /// When the entry becomes the displayed one (seconds since the Unix epoch).
    public var date: Double
    public var relevance: Relevance?
    /// The entry's content: a JSON object, as UTF-8 text.
    public var contentJSON: String

    public init(date: Double, relevance: Relevance? = nil, contentJSON: String) {
        self.date = date
        self.relevance = relevance
        self.contentJSON = contentJSON
    }
}

/// A timeline as delivered by a provider: entries sorted by date, and a policy.
public struct TimelineRecord: Sendable, Hashable, Codable {
    public var entries: [EntryRecord]
    public var policy: ReloadPolicy

    public init(entries: [EntryRecord], policy: ReloadPolicy) {
        self.entries = entries
        self.policy = policy
    }

    /// The entry displayed at `time`: the last one whose date is not after
    /// `time`, or the first one if `time` is before every entry.
    public func entry(at time: Double) -> EntryRecord? {
        guard let first = entries.first else { return nil }
        var shown = first
        for entry in entries where entry.date <= time { shown = entry }
        return shown
    }
}
