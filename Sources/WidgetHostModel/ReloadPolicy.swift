/// When the host asks a provider for its next timeline (WidgetKit's
/// `TimelineReloadPolicy`).
public enum ReloadPolicy: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Ask again once the last entry's date has passed.
    case atEnd
    /// Ask again at this time (seconds since the Unix epoch), not before.
    case after(Double)
    /// Never ask again on its own; only an explicit reload asks.
    case never

    public var description: String {
        switch self {
        case .atEnd: "atEnd"
        case .after(let date): "after(\(Timestamp.iso8601(date)))"
        case .never: "never"
        }
    }
}
