/// Details about one call to a provider (WidgetKit's
/// `TimelineProviderContext`), plus what widgethost adds: the host's clock, the
/// instance's configuration, the locale and the plugin's data directory.
///
/// ```swift
/// func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<Entry>) -> Void) {
///     let now = context.date                                   // not Date()
///     let city = context.configuration.string("city") ?? "Paris"
///     let cache = context.dataDirectory.appendingPathComponent("forecast.json")
///     ...
/// }
/// ```
///
/// Build one yourself to unit-test a provider without a host:
///
/// ```swift
/// let context = TimelineProviderContext(
///     family: .systemSmall, date: Date(timeIntervalSince1970: 0),
///     configuration: try InstanceConfiguration(json: #"{"city": "Oslo"}"#))
/// let timeline = try await MyProvider().timeline(in: context)
/// ```
public struct TimelineProviderContext: Sendable {
    /// The family (size) to provide entries for.
    public var family: WidgetFamily
    /// `true` when the widget is shown in the gallery: answer quickly, with
    /// sample data if the real data is not at hand.
    public var isPreview: Bool
    /// The size the widget is shown at, in points (the family's, as in
    /// WidgetKit: ``WidgetFamily/defaultDisplaySize``).
    public var displaySize: CGSize

    /// The current time, from the host's clock.
    ///
    /// Prefer it to `Date()`: the host's scheduler runs simulations on a
    /// virtual clock, and tests pass fixed times. Entries dated from
    /// `context.date` come out right in both.
    public var date: Date
    /// The instance's configuration: one value per declared parameter, with
    /// defaults filled in by the host.
    public var configuration: InstanceConfiguration
    /// The user's locale as a BCP 47 tag, e.g. `"en-US"`.
    public var locale: String
    /// The plugin's own data directory (WidgetKit's App Group container): the
    /// only place it may write, shared with its app. Also the current
    /// directory during calls.
    ///
    /// Made from ``dataDirectoryPath`` when read (a call that never reads it
    /// does not pay for building a `URL` in its fresh process).
    public var dataDirectory: URL {
        get { URL(fileURLWithPath: dataDirectoryPath, isDirectory: true) }
        set { dataDirectoryPath = newValue.path }
    }
    /// The data directory's absolute path.
    public var dataDirectoryPath: String
    /// The id of the kind being called, e.g. `"com.example.character-detail"`.
    public var kind: String
    /// Seconds the call has to complete, counted from its start; the host
    /// kills the call after that. Zero when unknown.
    public var timeout: TimeInterval

    /// Where ``fail(_:)`` sends errors; set by the host bridge.
    var failureHandler: (@Sendable (any Error) -> Void)?

    /// Creates a context, for tests and previews. The host builds the real
    /// ones.
    ///
    /// - Parameters:
    ///   - family: The family to render for.
    ///   - isPreview: Whether the call is for the gallery.
    ///   - displaySize: The size in points; `nil` for the family's default.
    ///   - date: The time the provider sees as now.
    ///   - configuration: Parameter values.
    ///   - locale: A BCP 47 tag.
    ///   - dataDirectory: The plugin's data directory.
    ///   - kind: The kind's id.
    ///   - timeout: Seconds the call has.
    ///   - onFailure: Called by ``fail(_:)`` and by the async bridges when the
    ///     provider throws.
    public init(
        family: WidgetFamily = .systemSmall,
        isPreview: Bool = false,
        displaySize: CGSize? = nil,
        date: Date = Date(),
        configuration: InstanceConfiguration = InstanceConfiguration(),
        locale: String = "en-US",
        dataDirectory: URL = URL(fileURLWithPath: "/tmp", isDirectory: true),
        kind: String = "",
        timeout: TimeInterval = 0,
        onFailure: (@Sendable (any Error) -> Void)? = nil
    ) {
        self.init(
            family: family, isPreview: isPreview, displaySize: displaySize, date: date,
            configuration: configuration, locale: locale, dataDirectoryPath: dataDirectory.path, kind: kind,
            timeout: timeout, onFailure: onFailure)
    }

    /// The same with the data directory as a path (what the host passes).
    init(
        family: WidgetFamily, isPreview: Bool, displaySize: CGSize?, date: Date,
        configuration: InstanceConfiguration, locale: String, dataDirectoryPath: String, kind: String,
        timeout: TimeInterval, onFailure: (@Sendable (any Error) -> Void)?
    ) {
        self.family = family
        self.isPreview = isPreview
        self.displaySize = displaySize ?? family.defaultDisplaySize
        self.date = date
        self.configuration = configuration
        self.locale = locale
        self.dataDirectoryPath = dataDirectoryPath
        self.kind = kind
        self.timeout = timeout
        self.failureHandler = onFailure
    }

    /// Ends the call with an error instead of entries.
    ///
    /// For providers written with completion handlers, which cannot throw:
    /// call this *instead of* the completion. The host reports the call as
    /// failed with the error's code and message (see
    /// ``TimelineProviderError``; other errors get code 1 and their
    /// description).
    ///
    /// ```swift
    /// guard let data = try? Data(contentsOf: file) else {
    ///     context.fail(TimelineProviderError(code: 2, message: "no \(file.path)"))
    ///     return
    /// }
    /// ```
    public func fail(_ error: any Error) {
        failureHandler?(error)
    }
}

/// The configuration of one widget instance: a JSON object with one member
/// per parameter the kind declares (see ``WidgetParameter``).
///
/// (Called `WidgetConfiguration` before SDK 1.3; that name is now WidgetKit's
/// protocol of ``StaticConfiguration`` and its kin.) Providers of
/// configurable kinds get the same values as their intent
/// (``AppIntentTimelineProvider``).
///
/// ```swift
/// let name = context.configuration.string("character") ?? "Power Panda"
/// let health = context.configuration.number("health") ?? 0.25
///
/// struct Settings: Decodable { var character: String; var health: Double }
/// let settings = try context.configuration.decode(Settings.self)
/// ```
public struct InstanceConfiguration: Sendable, Hashable {
    /// The configuration as the host sent it: a JSON object.
    public let json: String
    /// The members of the object.
    public let values: [String: ConfigurationValue]

    /// An empty configuration (`{}`).
    public init() {
        self.json = "{}"
        self.values = [:]
    }

    /// Parses a configuration from a JSON object (strict RFC 8259; the
    /// first of duplicate keys wins; see `ConfigurationParser` for how
    /// numbers become ``ConfigurationValue/integer(_:)`` or
    /// ``ConfigurationValue/number(_:)``, as with `JSONDecoder`).
    ///
    /// - Throws: ``TimelineProviderError`` with code
    ///   ``TimelineProviderError/badConfiguration`` if `json` is not a JSON
    ///   object, with the message `configuration is not a JSON object: <what
    ///   was expected or found> at byte <offset>`.
    public init(json: String) throws {
        do throws(ConfigurationParseError) {
            self.values = try ConfigurationParser.parse(json)
        } catch {
            throw error.providerError
        }
        self.json = json
    }

    /// Creates a configuration from values.
    public init(_ values: [String: ConfigurationValue]) {
        self.values = values
        let data = (try? JSONEncoder().encode(values)) ?? Data("{}".utf8)
        self.json = String(decoding: data, as: UTF8.self)
    }

    /// The value of a parameter, or `nil` if it is absent.
    public subscript(name: String) -> ConfigurationValue? { values[name] }

    /// The parameter as a string, or `nil` if absent or not a string.
    public func string(_ name: String) -> String? { values[name]?.stringValue }
    /// The parameter as a number (integers too), or `nil`.
    public func number(_ name: String) -> Double? { values[name]?.numberValue }
    /// The parameter as an integer, or `nil` if absent or not integral.
    public func integer(_ name: String) -> Int? { values[name]?.integerValue }
    /// The parameter as a Boolean, or `nil`.
    public func bool(_ name: String) -> Bool? { values[name]?.boolValue }

    /// Decodes the whole configuration object into a `Decodable` type.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(json.utf8))
    }
}

/// One JSON value of a configuration.
public enum ConfigurationValue: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A string.
    case string(String)
    /// An integral number.
    case integer(Int)
    /// A number with a fraction or exponent.
    case number(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null
    /// An array.
    case array([ConfigurationValue])
    /// An object.
    case object([String: ConfigurationValue])

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }
    /// The number, for integers and numbers.
    public var numberValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }
    /// The integer, for integers and integral numbers.
    public var integerValue: Int? {
        switch self {
        case .integer(let value): value
        case .number(let value): Int(exactly: value)
        default: nil
        }
    }
    /// The Boolean, if this is one.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The value as JSON, e.g. `"Paris"` or `0.25`.
    public var description: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Strings first: most parameters are strings, and each failed
        // attempt builds and throws a DecodingError.
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode([ConfigurationValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: ConfigurationValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .null: try container.encodeNil()
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
