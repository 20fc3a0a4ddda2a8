// The subset of Apple's AppIntents framework that widget configuration uses,
// with the same names and shapes, so that a configuration intent written for
// WidgetKit compiles unchanged:
//
//     struct ConfigurationAppIntent: WidgetConfigurationIntent {
//         static var title: LocalizedStringResource = "Configuration"
//         static var description = IntentDescription("Pick a city.")
//
//         @Parameter(title: "City", default: "Paris")
//         var city: String
//
//         @Parameter(title: "Units", default: .metric)
//         var units: Units
//     }
//
// Each `@Parameter` becomes one of the kind's parameters in the descriptor
// (`wh_parameter`: name, type, default, title, and an AppEnum's cases as its
// choices), so `widgethost load`, the daemon's configuration checks and the
// dashboard see them; each call's configuration arrives as a filled-in intent
// value. See docs/swift-sdk.md, "Configurable kinds".

/// A string to show to people, looked up by key (Foundation's
/// `LocalizedStringResource`, which swift-foundation lacks on Linux).
///
/// widgethost shows ``defaultValue`` (or the key): plugins carry no string
/// tables.
///
/// ```swift
/// static var title: LocalizedStringResource = "Favorite City"
/// let name = LocalizedStringResource("city.title", defaultValue: "City")
/// ```
public struct LocalizedStringResource: Sendable, Hashable, ExpressibleByStringInterpolation,
    CustomStringConvertible
{
    /// The interpolation of a resource literal: values, and `placeholder:`s
    /// as in `"\(placeholder: .int) cities"` (written as `%lld`).
    public struct StringInterpolation: StringInterpolationProtocol {
        var text = ""
        public init(literalCapacity: Int, interpolationCount: Int) {}
        public mutating func appendLiteral(_ literal: String) { text += literal }
        public mutating func appendInterpolation<Value>(_ value: Value) { text += String(describing: value) }
        public mutating func appendInterpolation(placeholder: PlaceholderKind) { text += placeholder.format }
    }

    /// The kind of a placeholder in a numeric format.
    public enum PlaceholderKind: Sendable {
        case int, double, float
        var format: String {
            switch self {
            case .int: "%lld"
            case .double, .float: "%lf"
            }
        }
    }

    /// A resource from an interpolated literal.
    public init(stringInterpolation: StringInterpolation) {
        self.init(stringInterpolation.text)
    }

    /// The key in the string table.
    public var key: String
    /// The text shown when the table has no entry for the key.
    public var defaultValue: String
    /// The string table's name, or `nil` for the default one.
    public var table: String?

    /// A resource whose key is also its text.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// A resource with a key and, optionally, a different default text.
    public init(_ key: String, defaultValue: String? = nil, table: String? = nil, comment: StaticString? = nil) {
        self.key = key
        self.defaultValue = defaultValue ?? key
        self.table = table
    }

    /// The text shown: the default value.
    public var description: String { defaultValue }
}

extension String {
    /// The text of a localized string resource (its default value: plugins
    /// carry no string tables).
    public init(localized resource: LocalizedStringResource) {
        self = resource.defaultValue
    }
}

/// What an intent does, for people (AppIntents' `IntentDescription`).
public struct IntentDescription: Sendable, Hashable, ExpressibleByStringInterpolation {
    /// The description.
    public var descriptionText: LocalizedStringResource
    /// The category shown in Shortcuts, or `nil`.
    public var categoryName: LocalizedStringResource?
    /// Words to find the intent by.
    public var searchKeywords: [LocalizedStringResource]

    /// A description with an optional category and search keywords.
    public init(
        _ descriptionText: LocalizedStringResource, categoryName: LocalizedStringResource? = nil,
        searchKeywords: [LocalizedStringResource] = []
    ) {
        self.descriptionText = descriptionText
        self.categoryName = categoryName
        self.searchKeywords = searchKeywords
    }

    /// A description from a literal.
    public init(stringLiteral value: String) {
        self.init(LocalizedStringResource(value))
    }
}

/// How one value is shown to people: a title, a subtitle and an image
/// (AppIntents' `DisplayRepresentation`). widgethost uses the title.
///
/// ```swift
/// static var caseDisplayRepresentations: [Units: DisplayRepresentation] = [
///     .metric: "Metric",
///     .imperial: DisplayRepresentation(title: "Imperial", subtitle: "°F, miles"),
/// ]
/// ```
public struct DisplayRepresentation: Sendable, Hashable, ExpressibleByStringInterpolation {
    /// An image named by a symbol or an asset (not drawn by widgethost).
    public struct Image: Sendable, Hashable {
        /// The SF Symbol name, or `nil`.
        public var systemName: String?
        /// The asset name, or `nil`.
        public var named: String?
        /// An image from an SF Symbol's name.
        public init(systemName: String) { self.systemName = systemName }
        /// An image from an asset's name.
        public init(named: String) { self.named = named }
    }

    /// The title.
    public var title: LocalizedStringResource
    /// A line under the title, or `nil`.
    public var subtitle: LocalizedStringResource?
    /// An image, or `nil`.
    public var image: Image?

    /// A representation with a title and, optionally, a subtitle and an image.
    public init(title: LocalizedStringResource, subtitle: LocalizedStringResource? = nil, image: Image? = nil) {
        self.title = title
        self.subtitle = subtitle
        self.image = image
    }

    /// A representation whose title is the literal.
    public init(stringLiteral value: String) {
        self.init(title: LocalizedStringResource(value))
    }
}

/// How a type is named to people, e.g. "Units" (AppIntents'
/// `TypeDisplayRepresentation`).
public struct TypeDisplayRepresentation: Sendable, Hashable, ExpressibleByStringInterpolation {
    /// The type's name.
    public var name: LocalizedStringResource
    /// How a number of values is phrased, e.g. "\(placeholder: .int) cities".
    public var numericFormat: LocalizedStringResource?

    /// A representation with a name.
    public init(name: LocalizedStringResource, numericFormat: LocalizedStringResource? = nil) {
        self.name = name
        self.numericFormat = numericFormat
    }

    /// A representation named by the literal.
    public init(stringLiteral value: String) {
        self.init(name: LocalizedStringResource(value))
    }
}

// MARK: - Intents

/// What an intent's `perform()` returns (AppIntents' `IntentResult`).
public protocol IntentResult: Sendable {}

/// The result of an intent that only performs (``IntentResult``).
public struct IntentResultContainer: IntentResult {
    /// The result with no value.
    public static func result() -> IntentResultContainer { IntentResultContainer() }
}

extension IntentResult where Self == IntentResultContainer {
    /// The result with no value: `return .result()`.
    public static func result() -> IntentResultContainer { IntentResultContainer() }
}

/// An action people can run (AppIntents' `AppIntent`). A widget's
/// configuration intent is one (``WidgetConfigurationIntent``): its
/// `@Parameter`s are the widget's settings.
public protocol AppIntent: Sendable {
    /// The intent's name, for people.
    static var title: LocalizedStringResource { get }
    /// What the intent does, for people.
    static var description: IntentDescription? { get }
    /// The intent with every parameter at its default.
    init()
}

extension AppIntent {
    /// No description.
    public static var description: IntentDescription? { nil }

    /// Declares a parameter of the intent: `@Parameter(title: "City") var city: String?`.
    public typealias Parameter<Value: _IntentValue> = IntentParameter<Value>

    /// The summary of the intent's parameters:
    /// `Summary("Weather in \(\.$city)")`.
    public typealias Summary = IntentParameterSummary<Self>
}

/// The intent that configures a widget (AppIntents'
/// `WidgetConfigurationIntent`): its `@Parameter`s are the kind's parameters,
/// and each call gets one, filled in with the instance's values.
public protocol WidgetConfigurationIntent: AppIntent {}

/// A summary of an intent's parameters, as Shortcuts and the widget editor
/// show it (AppIntents' `ParameterSummary`). widgethost keeps the text only.
public protocol ParameterSummary: Sendable {
    /// The summary, with each parameter as `${name}`.
    var summaryText: String { get }
}

/// `Summary("Show \(\.$city)")` in a ``WidgetConfigurationIntent``'s
/// `parameterSummary` (AppIntents' `Summary`).
public struct IntentParameterSummary<Intent: AppIntent>: ParameterSummary {
    public var summaryText: String

    /// A summary from a string that names parameters by key path.
    public init(_ text: ParameterSummaryString<Intent>) {
        summaryText = text.text
    }

    /// A summary with further parameters listed after it.
    public init(_ text: ParameterSummaryString<Intent>, @ParameterSummaryBuilder<Intent> _ more: () -> [String]) {
        summaryText = text.text
        _ = more()
    }
}

/// The text of an ``IntentParameterSummary``: a literal with `\(\.$parameter)`
/// interpolations.
public struct ParameterSummaryString<Intent: AppIntent>: Sendable, ExpressibleByStringInterpolation {
    let text: String

    public init(stringLiteral value: String) { text = value }
    public init(stringInterpolation: StringInterpolation) { text = stringInterpolation.text }

    /// The interpolation of a summary string.
    public struct StringInterpolation: StringInterpolationProtocol {
        var text = ""
        public init(literalCapacity: Int, interpolationCount: Int) {}
        public mutating func appendLiteral(_ literal: String) { text += literal }
        /// A parameter, by the key path of its projected value: `\(\.$city)`.
        public mutating func appendInterpolation<Value>(_ parameter: KeyPath<Intent, IntentParameter<Value>>) {
            text += "${parameter}"
        }
    }
}

/// Builds the extra parameters of a summary (`\.$a; \.$b`).
@resultBuilder
public enum ParameterSummaryBuilder<Intent: AppIntent> {
    public static func buildExpression<Value>(_ keyPath: KeyPath<Intent, IntentParameter<Value>>) -> [String] {
        ["\(keyPath)"]
    }
    public static func buildBlock(_ parts: [String]...) -> [String] { parts.flatMap { $0 } }
}

/// A configuration the system suggests for a widget that people cannot
/// configure themselves, e.g. on a watch (WidgetKit's
/// `AppIntentRecommendation`).
public struct AppIntentRecommendation<Intent: WidgetConfigurationIntent>: Sendable {
    /// The configuration.
    public let intent: Intent
    /// Its name, for people.
    public let description: String

    /// A recommendation of `intent`, described for people.
    public init(intent: Intent, description: LocalizedStringResource) {
        self.intent = intent
        self.description = description.defaultValue
    }

    /// A recommendation of `intent`, described for people.
    public init<S: StringProtocol>(intent: Intent, description: S) {
        self.intent = intent
        self.description = String(description)
    }
}

// MARK: - Enums

/// An enumeration a parameter can take (AppIntents' `AppEnum`): its cases are
/// the parameter's choices, their titles what people see.
///
/// ```swift
/// enum Units: String, AppEnum {
///     case metric, imperial
///     static var typeDisplayRepresentation: TypeDisplayRepresentation = "Units"
///     static var caseDisplayRepresentations: [Units: DisplayRepresentation] = [
///         .metric: "Metric", .imperial: "Imperial",
///     ]
/// }
/// ```
///
/// In the configuration a case is its raw value as a string.
public protocol AppEnum: _IntentValue, RawRepresentable, CaseIterable, Hashable
where RawValue: LosslessStringConvertible {
    /// The type's name, for people.
    static var typeDisplayRepresentation: TypeDisplayRepresentation { get }
    /// Each case's title, for people.
    static var caseDisplayRepresentations: [Self: DisplayRepresentation] { get }
}

extension AppEnum {
    public static var _parameterType: WidgetParameter.ValueType { .string }
    public static var _choices: [WidgetParameter.Choice] {
        allCases.map { value in
            WidgetParameter.Choice(
                value: String(describing: value.rawValue),
                title: caseDisplayRepresentations[value]?.title.defaultValue)
        }
    }
    public init?(_configurationValue value: ConfigurationValue) {
        guard let text = value.stringValue, let raw = RawValue(text) else { return nil }
        self.init(rawValue: raw)
    }
    public var _configurationJSON: String? { jsonStringLiteral(String(describing: rawValue)) }
    public static var _placeholder: Self {
        // An AppEnum has at least one case in practice; an empty one cannot be built at all.
        allCases.first!
    }
}
