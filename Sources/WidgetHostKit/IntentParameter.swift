import Synchronization

// The `@Parameter` property wrapper of AppIntents, the value types it takes,
// and how the SDK finds an intent's parameters by reflection.

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
