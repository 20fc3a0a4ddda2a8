/// A type that specifies the date to display a widget, and, optionally, the
/// current relevance of the widget's content (WidgetKit's `TimelineEntry`).
///
/// An entry is a plain value. Unlike WidgetKit, where SwiftUI renders it, a
/// widgethost entry travels to the host as a JSON object, its content:
///
/// - An entry that is `Encodable` is encoded as `JSONEncoder` would (dates
///   as ISO 8601 strings, keys sorted). Conformance is synthesized for
///   ordinary structs: write `: TimelineEntry, Codable` and, to choose the
///   members, `CodingKeys` or `encode(to:)`.
/// - An entry that is not is exported by reflection (`Mirror`) of its stored
///   properties: numbers, strings, Booleans, dates (ISO 8601), URLs, UUIDs,
///   arrays, string-keyed dictionaries, nested structs and classes as
///   objects, enums as their case name (with payload: `{"case": payload}`),
///   `nil` as `null`, errors as their `localizedDescription`, anything else
///   as its description; nested `Encodable` values are encoded. `widgethost
///   load` then warns, once per call, that the entry was reflected: make the
///   entry `Codable` to control its JSON.
///
/// ```swift
/// struct CharacterDetailEntry: TimelineEntry {
///     var date: Date
///     var healthLevel: Double
/// }
/// // content: {"date":"2026-11-21T17:00:00Z","healthLevel":0.25}
/// ```
///
/// `date` is also passed to the host separately (seconds since the epoch), and
/// so is ``relevance`` when it is not `nil`.
///
/// Entries need not be `Sendable` (nor do WidgetKit's): the SDK hands each
/// entry from the provider to the host within one call. An entry may hold
/// the call's configuration intent, an `[String: Any]` or a class.
public protocol TimelineEntry: SendableMetatype {
    /// The date for the host to display the widget.
    var date: Date { get }
    /// The relevance of the widget's content: how much the entry matters
    /// compared to the kind's other entries. `nil` by default.
    var relevance: TimelineEntryRelevance? { get }
}

extension TimelineEntry {
    /// No relevance: the host treats every entry alike.
    public var relevance: TimelineEntryRelevance? { nil }
}

/// How relevant a timeline entry is (WidgetKit's `TimelineEntryRelevance`).
///
/// The score is unitless and meaningful only relative to the scores of the
/// same kind's other entries; the host uses it to order stacks of widgets.
///
/// ```swift
/// struct GameEntry: TimelineEntry {
///     var date: Date
///     var bossIsNear: Bool
///     var relevance: TimelineEntryRelevance? {
///         TimelineEntryRelevance(score: bossIsNear ? 90 : 10, duration: 600)
///     }
/// }
/// ```
public struct TimelineEntryRelevance: Sendable, Hashable, Codable {
    /// The relevance score, zero or more.
    public let score: Float
    /// How long the score holds, in seconds from the entry's date. Zero means
    /// until the next entry.
    public let duration: TimeInterval

    /// Creates a relevance with a score that holds for `duration` seconds from
    /// the entry's date (zero: until the next entry).
    public init(score: Float, duration: TimeInterval = 0) {
        self.score = score
        self.duration = duration
    }
}

/// An array of entries and the policy that says when to ask for the next
/// timeline (WidgetKit's `Timeline`).
///
/// ```swift
/// let entries = (0..<4).map { hour in
///     CharacterDetailEntry(date: now.addingTimeInterval(Double(hour) * 3600),
///                          healthLevel: 0.25 * Double(hour + 1))
/// }
/// completion(Timeline(entries: entries, policy: .atEnd))
/// ```
///
/// The host shows each entry from its `date` on. Entries are sent sorted by
/// date; a timeline needs at least one entry.
public struct Timeline<EntryType: TimelineEntry> {
    /// The entries, in the order the provider gave them.
    public let entries: [EntryType]
    /// When the host should ask for the next timeline.
    public let policy: TimelineReloadPolicy

    /// Creates a timeline from entries and a reload policy.
    public init(entries: [EntryType], policy: TimelineReloadPolicy) {
        self.entries = entries
        self.policy = policy
    }
}

extension Timeline: Sendable where EntryType: Sendable {}

/// When the host should ask a provider for the next timeline (WidgetKit's
/// `TimelineReloadPolicy`).
///
/// A policy is a request, not a promise: the host's reload budget may make it
/// ask later than requested, never earlier than `.after(date)`.
public enum TimelineReloadPolicy: Sendable, Hashable {
    /// Ask again once the last entry's date has passed.
    case atEnd
    /// Ask again at this date, not before. The usual choice: "I covered the
    /// next hours, come back then".
    case after(Date)
    /// Never ask on its own; only an explicit reload (the app changed the
    /// data) asks again.
    case never
}
