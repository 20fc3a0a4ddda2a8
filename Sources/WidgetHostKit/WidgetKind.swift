/// Who a plugin is: its id, name and version, as the host shows them.
///
/// ```swift
/// PluginInfo(id: "com.example.game", name: "Game Widgets", version: "1.0.0", vendor: "Example Inc.")
/// ```
public struct PluginInfo: Sendable, Hashable {
    /// Reverse-DNS id of the plugin, e.g. `"com.example.game"`.
    public var id: String
    /// Human-readable name.
    public var name: String
    /// The plugin's version, e.g. `"1.0.0"`.
    public var version: String
    /// Who made it, or `nil`.
    public var vendor: String?

    /// Creates a plugin description.
    public init(id: String, name: String, version: String, vendor: String? = nil) {
        self.id = id
        self.name = name
        self.version = version
        self.vendor = vendor
    }
}

/// A configuration parameter of a kind: what a user can set per widget
/// instance (WidgetKit's intent parameters, reduced to four types).
///
/// The host fills defaults in and hands the values to the provider as
/// ``TimelineProviderContext/configuration``.
///
/// ```swift
/// parameters: [
///     .string("character", default: "Power Panda", description: "Which hero to show"),
///     .number("health", default: 0.25),
///     .integer("hours", default: 6),
///     .boolean("compact", default: false),
///     .string("apiKey"),                    // required: no default
/// ]
/// ```
public struct WidgetParameter: Sendable, Hashable {
    /// The parameter's type (`wh_parameter_type`).
    public enum ValueType: UInt32, Sendable, Hashable {
        /// A JSON string.
        case string = 1
        /// A JSON integer.
        case integer = 2
        /// A JSON number.
        case number = 3
        /// `true` or `false`.
        case boolean = 4
    }

    /// The name, unique in the kind: `[A-Za-z_][A-Za-z0-9_]*`.
    public var name: String
    /// The type.
    public var type: ValueType
    /// The default as a JSON literal, or `nil` when the parameter is required.
    public var defaultJSON: String?
    /// One line for people configuring an instance, or `nil`.
    public var description: String?
    /// The title people see, e.g. `"City"` (SDK 1.3; an AppIntents
    /// `@Parameter(title:)`), or `nil` to show the name.
    public var title: String?
    /// The values a string parameter may take (SDK 1.3; an ``AppEnum``'s
    /// cases), or empty for any string.
    public var choices: [Choice]
    /// Whether the parameter may be left out when it has no default (SDK
    /// 1.3, `WH_PARAMETER_OPTIONAL`; an optional `@Parameter`). Otherwise a
    /// parameter without a default is required.
    public var isOptional: Bool = false

    /// One allowed value of a parameter and its title.
    public struct Choice: Sendable, Hashable {
        /// The value, as the configuration holds it.
        public var value: String
        /// The title people see, or `nil` to show the value.
        public var title: String?

        /// A choice of `value`, shown as `title`.
        public init(value: String, title: String? = nil) {
            self.value = value
            self.title = title
        }
    }

    /// Creates a parameter from a default given as a JSON literal.
    public init(
        name: String, type: ValueType, defaultJSON: String?, description: String? = nil, title: String? = nil,
        choices: [Choice] = []
    ) {
        self.name = name
        self.type = type
        self.defaultJSON = defaultJSON
        self.description = description
        self.title = title
        self.choices = choices
    }

    /// A string parameter that takes one of `choices` (value and title).
    public static func choice(
        _ name: String, _ choices: [Choice], default value: String? = nil, title: String? = nil,
        description: String? = nil
    ) -> WidgetParameter {
        WidgetParameter(
            name: name, type: .string, defaultJSON: value.map(jsonStringLiteral), description: description,
            title: title, choices: choices)
    }

    /// A string parameter; `default: nil` makes it required.
    public static func string(_ name: String, default value: String? = nil, description: String? = nil)
        -> WidgetParameter
    {
        WidgetParameter(name: name, type: .string, defaultJSON: value.map(jsonStringLiteral), description: description)
    }

    /// An integer parameter; `default: nil` makes it required.
    public static func integer(_ name: String, default value: Int? = nil, description: String? = nil)
        -> WidgetParameter
    {
        WidgetParameter(name: name, type: .integer, defaultJSON: value.map { String($0) }, description: description)
    }

    /// A number parameter; `default: nil` makes it required.
    public static func number(_ name: String, default value: Double? = nil, description: String? = nil)
        -> WidgetParameter
    {
        WidgetParameter(
            name: name, type: .number, defaultJSON: value.map(jsonNumberLiteral), description: description)
    }

    /// A Boolean parameter; `default: nil` makes it required.
    public static func boolean(_ name: String, default value: Bool? = nil, description: String? = nil)
        -> WidgetParameter
    {
        WidgetParameter(
            name: name, type: .boolean, defaultJSON: value.map { $0 ? "true" : "false" }, description: description)
    }
}

/// One widget kind a plugin exports (WidgetKit: one `Widget` of a
/// `WidgetBundle`, with its `StaticConfiguration`): the id, what the gallery
/// shows, the families, the parameters and the provider.
///
/// ```swift
/// WidgetKind(
///     "com.example.character-detail",
///     displayName: "Character",
///     description: "Your hero's health, recovering hour by hour.",
///     families: [.systemSmall, .systemMedium],
///     parameters: [.string("character", default: "Power Panda")],
///     provider: CharacterDetailProvider())
/// ```
public struct WidgetKind: Sendable {
    /// The kind's unique id (WidgetKit's `kind`).
    public var id: String
    /// The name shown in the gallery.
    public var displayName: String
    /// One sentence shown in the gallery, or `nil`.
    public var description: String?
    /// The families the kind supports; at least one.
    public var families: [WidgetFamily]
    /// The parameters a user can set.
    public var parameters: [WidgetParameter]
    /// Whether the provider needs the network; without it the host's sandbox
    /// gives the call none.
    public var needsNetwork: Bool
    /// Whether the provider's answers depend only on the family, the
    /// configuration and `context.now` (no clock, randomness, network or
    /// files): the host may then reuse one answer for identical calls
    /// (`WH_KIND_DETERMINISTIC`; `widgethost simulate` does, for thousands of
    /// identical instances). Leave it `false` when in doubt.
    public var isDeterministic: Bool
    /// The handler of the kind's push token, or `nil` when the kind takes
    /// no push updates (``WidgetConfiguration/pushHandler(_:)``; sets
    /// `WH_KIND_PUSH`).
    public var pushHandler: (any WidgetPushHandler.Type)?
    /// Whether the kind accepts push updates (`WH_KIND_PUSH`).
    public var supportsPush: Bool { pushHandler != nil }
    /// The Mustache templates that draw the kind's entries as HTML; add them
    /// with ``template(_:families:)``.
    public var templates: [WidgetTemplate] = []
    let provider: any AnyProviderBox

    /// The `@Parameter`s of a configuration intent, as the kind's parameters.
    private static func parameters(of intent: Any) -> [WidgetParameter] {
        intentParameters(of: intent).map { $0.parameter._describe(name: $0.name) }
    }

    /// The one initialiser the public ones call: a kind answered by `box`.
    private init(
        _ id: String, displayName: String, description: String?, families: [WidgetFamily],
        parameters: [WidgetParameter], needsNetwork: Bool, deterministic: Bool, box: any AnyProviderBox
    ) {
        self.id = id
        self.displayName = displayName
        self.description = description
        self.families = families
        self.parameters = parameters
        self.needsNetwork = needsNetwork
        self.isDeterministic = deterministic
        self.provider = box
    }

    /// Creates a kind.
    ///
    /// - Parameters:
    ///   - id: The unique id, reverse-DNS style.
    ///   - displayName: The gallery name.
    ///   - description: The gallery description.
    ///   - families: The supported families (all of them by default).
    ///   - parameters: The configuration parameters.
    ///   - needsNetwork: Whether calls need network access.
    ///   - deterministic: Whether identical calls (family, configuration,
    ///     `now`) always get identical answers; see ``isDeterministic``.
    ///   - provider: The provider that answers the kind's calls.
    public init<Provider: TimelineProvider>(
        _ id: String,
        displayName: String,
        description: String? = nil,
        families: [WidgetFamily] = WidgetFamily.allCases,
        parameters: [WidgetParameter] = [],
        needsNetwork: Bool = false,
        deterministic: Bool = false,
        provider: Provider
    ) {
        self.init(
            id, displayName: displayName, description: description, families: families, parameters: parameters,
            needsNetwork: needsNetwork, deterministic: deterministic, box: ProviderBox(provider: provider))
    }

    /// Creates a kind answered by an ``IntentTimelineProvider``: its
    /// parameters are the `@Parameter`s of the provider's `Intent`, followed
    /// by `parameters`.
    public init<Provider: IntentTimelineProvider>(
        _ id: String,
        displayName: String,
        description: String? = nil,
        families: [WidgetFamily] = WidgetFamily.allCases,
        parameters: [WidgetParameter] = [],
        needsNetwork: Bool = false,
        deterministic: Bool = false,
        provider: Provider
    ) {
        self.init(
            id, displayName: displayName, description: description, families: families,
            parameters: Self.parameters(of: Provider.Intent()) + parameters,
            needsNetwork: needsNetwork, deterministic: deterministic, box: IntentProviderBox(provider: provider))
    }

    /// Creates a kind answered by an ``AppIntentTimelineProvider``: its
    /// parameters are the `@Parameter`s of the provider's `Intent`, followed
    /// by `parameters`.
    public init<Provider: AppIntentTimelineProvider>(
        _ id: String,
        displayName: String,
        description: String? = nil,
        families: [WidgetFamily] = WidgetFamily.allCases,
        parameters: [WidgetParameter] = [],
        needsNetwork: Bool = false,
        deterministic: Bool = false,
        provider: Provider
    ) {
        self.init(
            id, displayName: displayName, description: description, families: families,
            parameters: Self.parameters(of: Provider.Intent()) + parameters,
            needsNetwork: needsNetwork, deterministic: deterministic, box: AppIntentProviderBox(provider: provider))
    }

    /// The kind a WidgetKit configuration declares
    /// (``StaticConfiguration``, ``IntentConfiguration``,
    /// ``AppIntentConfiguration`` and their modifiers).
    public init(_ configuration: some WidgetConfiguration) {
        self = configuration._kind
    }

    /// The kind a WidgetKit widget declares in its `body`.
    public init(_ widget: some Widget) {
        self = widget.body._kind
    }
}

func jsonStringLiteral(_ string: String) -> String {
    var out = "\""
    for scalar in string.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20:
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

func jsonNumberLiteral(_ value: Double) -> String {
    guard value.isFinite else { return "0" }
    if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
    return "\(value)"
}
