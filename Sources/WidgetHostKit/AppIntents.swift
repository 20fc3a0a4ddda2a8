import Synchronization

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

// MARK: - Parameter values

/// A type a configuration parameter can have: `String`, `Int`, `Double`,
/// `Bool`, an ``AppEnum``, or an `Optional` of one (optional: not required).
/// The underscored requirements are the SDK's; do not call them.
public protocol _IntentValue: Sendable {
    /// The parameter type in the descriptor.
    static var _parameterType: WidgetParameter.ValueType { get }
    /// The allowed values (an AppEnum's cases); empty for any.
    static var _choices: [WidgetParameter.Choice] { get }
    /// Whether the value may be absent (an `Optional`).
    static var _isOptional: Bool { get }
    /// The value a configuration holds, or `nil` if it does not fit.
    init?(_configurationValue: ConfigurationValue)
    /// The value as a JSON literal, or `nil` for an absent optional.
    var _configurationJSON: String? { get }
    /// The value of a required parameter that has none (an intent built
    /// directly, outside a call).
    static var _placeholder: Self { get }
}

extension _IntentValue {
    public static var _choices: [WidgetParameter.Choice] { [] }
    public static var _isOptional: Bool { false }
}

extension String: _IntentValue {
    public static var _parameterType: WidgetParameter.ValueType { .string }
    public init?(_configurationValue value: ConfigurationValue) {
        guard let text = value.stringValue else { return nil }
        self = text
    }
    public var _configurationJSON: String? { jsonStringLiteral(self) }
    public static var _placeholder: String { "" }
}

extension Int: _IntentValue {
    public static var _parameterType: WidgetParameter.ValueType { .integer }
    public init?(_configurationValue value: ConfigurationValue) {
        guard let number = value.integerValue else { return nil }
        self = number
    }
    public var _configurationJSON: String? { String(self) }
    public static var _placeholder: Int { 0 }
}

extension Double: _IntentValue {
    public static var _parameterType: WidgetParameter.ValueType { .number }
    public init?(_configurationValue value: ConfigurationValue) {
        guard let number = value.numberValue else { return nil }
        self = number
    }
    public var _configurationJSON: String? { jsonNumberLiteral(self) }
    public static var _placeholder: Double { 0 }
}

extension Bool: _IntentValue {
    public static var _parameterType: WidgetParameter.ValueType { .boolean }
    public init?(_configurationValue value: ConfigurationValue) {
        guard let flag = value.boolValue else { return nil }
        self = flag
    }
    public var _configurationJSON: String? { self ? "true" : "false" }
    public static var _placeholder: Bool { false }
}

extension Optional: _IntentValue where Wrapped: _IntentValue {
    public static var _parameterType: WidgetParameter.ValueType { Wrapped._parameterType }
    public static var _choices: [WidgetParameter.Choice] { Wrapped._choices }
    public static var _isOptional: Bool { true }
    public init?(_configurationValue value: ConfigurationValue) {
        if case .null = value {
            self = .none
            return
        }
        guard let wrapped = Wrapped(_configurationValue: value) else { return nil }
        self = .some(wrapped)
    }
    public var _configurationJSON: String? { self?._configurationJSON }
    public static var _placeholder: Wrapped? { nil }
}

// MARK: - @Parameter

/// One parameter of an intent, declared with `@Parameter` (AppIntents'
/// `IntentParameter`).
///
/// ```swift
/// @Parameter(title: "City", default: "Paris") var city: String
/// @Parameter(title: "Show seconds") var showSeconds: Bool?   // optional: not required
/// @Parameter(title: "Units", default: .metric) var units: Units
/// ```
///
/// The property's name (without the underscore the wrapper adds) is the
/// parameter's name in the descriptor and the configuration; it must be
/// `[A-Za-z_][A-Za-z0-9_]*`. The default in the descriptor is the value a
/// fresh intent (`Intent()`) has: the `default:`, or what the intent's
/// `init()` assigns. A non-optional parameter without either is required.
@propertyWrapper
public final class IntentParameter<Value: _IntentValue>: @unchecked Sendable, _AnyIntentParameter {
    // @unchecked: the value is behind a mutex; the rest is immutable.
    /// The title, for people.
    public let title: LocalizedStringResource
    /// A line describing it, or `nil`.
    public let parameterDescription: LocalizedStringResource?
    /// The default, or `nil`.
    public let defaultValue: Value?
    private let storage: Mutex<Value?>

    /// A parameter with a title, an optional description and default.
    public init(
        title: LocalizedStringResource, description: LocalizedStringResource? = nil, default defaultValue: Value? = nil
    ) {
        self.title = title
        self.parameterDescription = description
        self.defaultValue = defaultValue
        self.storage = Mutex(defaultValue)
    }

    /// A number parameter within a range (widgethost keeps the default and
    /// the title; the range is the provider's to enforce).
    public convenience init(
        title: LocalizedStringResource, description: LocalizedStringResource? = nil, default defaultValue: Value? = nil,
        inclusiveRange: (Value, Value)
    ) {
        self.init(title: title, description: description, default: defaultValue)
    }

    /// The value: the instance's, else the default.
    public var wrappedValue: Value {
        get { storage.withLock { $0 } ?? defaultValue ?? Value._placeholder }
        set { storage.withLock { $0 = newValue } }
    }

    /// The parameter itself (`$city`), as in `Summary("\(\.$city)")`.
    public var projectedValue: IntentParameter<Value> { self }

    public func _describe(name: String) -> WidgetParameter {
        // The default: the value a fresh intent has (set by its `init()`, as
        // in `init() { self.style = .modern }`), else the declared one.
        let initial = storage.withLock { $0 } ?? defaultValue
        var parameter = WidgetParameter(
            name: name, type: Value._parameterType,
            defaultJSON: initial.flatMap { $0._configurationJSON },
            description: parameterDescription?.defaultValue)
        parameter.title = title.defaultValue
        parameter.choices = Value._choices
        parameter.isOptional = Value._isOptional
        return parameter
    }

    public var _reflectedValue: Any { wrappedValue }

    public func _assign(_ value: ConfigurationValue?) {
        guard let value, let typed = Value(_configurationValue: value) else { return }
        storage.withLock { $0 = typed }
    }
}

/// A type-erased ``IntentParameter``, found on an intent by reflection.
public protocol _AnyIntentParameter: AnyObject {
    /// The descriptor parameter of this `@Parameter` named `name`.
    func _describe(name: String) -> WidgetParameter
    /// Sets the value from a configuration's (nothing when it does not fit).
    func _assign(_ value: ConfigurationValue?)
    /// The value, for an entry exported by reflection.
    var _reflectedValue: Any { get }
}

/// The `@Parameter`s of an intent value, by reflection of its stored
/// properties: `(name, parameter)` in declaration order.
func intentParameters(of intent: Any) -> [(name: String, parameter: any _AnyIntentParameter)] {
    var found: [(String, any _AnyIntentParameter)] = []
    var mirror: Mirror? = Mirror(reflecting: intent)
    var levels: [[(String, any _AnyIntentParameter)]] = []
    // Superclass properties first (an INIntent subclass of a subclass).
    while let current = mirror {
        var level: [(String, any _AnyIntentParameter)] = []
        for child in current.children {
            guard let label = child.label, let parameter = child.value as? any _AnyIntentParameter else { continue }
            level.append((label.hasPrefix("_") ? String(label.dropFirst()) : label, parameter))
        }
        levels.append(level)
        mirror = current.superclassMirror
    }
    for level in levels.reversed() { found.append(contentsOf: level) }
    return found
}

/// An intent value with the instance's configuration filled in.
func configuredIntent<Intent>(_ make: () -> Intent, _ configuration: InstanceConfiguration) -> Intent {
    let intent = make()
    for (name, parameter) in intentParameters(of: intent) {
        parameter._assign(configuration[name])
    }
    return intent
}

// MARK: - SiriKit intents

/// A SiriKit intent, as Xcode generates from an `.intentdefinition` file
/// for an ``IntentTimelineProvider`` (SiriKit's `INIntent`).
///
/// widgethost has no intent definition files: write the intent class Xcode
/// would generate as a subclass, with a `@Parameter` per parameter:
///
/// ```swift
/// final class ConfigurationIntent: INIntent {
///     @Parameter(title: "City", default: "Paris") var city: String
///     @Parameter(title: "Show feels-like") var showFeelsLike: Bool?
/// }
/// ```
///
/// Like SiriKit's, the class is not `Sendable`; the SDK hands each call its
/// own instance.
open class INIntent {
    /// The intent with every parameter at its default.
    public required init() {}

    /// Declares a parameter of the intent.
    public typealias Parameter<Value: _IntentValue> = IntentParameter<Value>
}

/// An object of a custom type in a SiriKit intent (SiriKit's `INObject`).
open class INObject: Hashable, CustomStringConvertible {
    /// The object's id, or `nil`.
    public let identifier: String?
    /// How it is shown to people.
    public let displayString: String

    /// An object with an id and a display string.
    public init(identifier: String?, display displayString: String) {
        self.identifier = identifier
        self.displayString = displayString
    }

    public static func == (lhs: INObject, rhs: INObject) -> Bool {
        lhs.identifier == rhs.identifier && lhs.displayString == rhs.displayString
    }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(identifier)
        hasher.combine(displayString)
    }
    public var description: String { displayString }
}

/// A configuration suggested for an ``IntentTimelineProvider``'s widget
/// (WidgetKit's `IntentRecommendation`).
public struct IntentRecommendation<Intent: INIntent> {
    /// The configuration.
    public let intent: Intent
    /// Its name, for people.
    public let description: String

    /// A recommendation of `intent`, described for people.
    public init<S: StringProtocol>(intent: Intent, description: S) {
        self.intent = intent
        self.description = String(description)
    }
}
