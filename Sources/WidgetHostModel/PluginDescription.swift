/// The entry points every widget kind has.
public enum EntryPoint: UInt32, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case placeholder = 1
    case snapshot = 2
    case timeline = 3

    public var description: String {
        switch self {
        case .placeholder: "placeholder"
        case .snapshot: "snapshot"
        case .timeline: "timeline"
        }
    }

    /// Looks an entry point up by name (`placeholder`, `snapshot`, `timeline`).
    public init?(name: String) {
        guard let point = Self.allCases.first(where: { $0.description == name.lowercased() }) else {
            return nil
        }
        self = point
    }
}

/// The type of a configuration parameter (`wh_parameter_type`).
public enum ParameterType: UInt32, Sendable, Codable, CustomStringConvertible {
    case string = 1
    case integer = 2
    case number = 3
    case boolean = 4

    public var description: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .number: "number"
        case .boolean: "boolean"
        }
    }
}

/// A configuration parameter a widget kind accepts.
public struct ParameterDescription: Sendable, Hashable, Codable {
    public var name: String
    /// The declared type; nil when the plugin declared a type this host does not know.
    public var type: ParameterType?
    /// The raw type number the plugin declared.
    public var rawType: UInt32
    /// The default as a JSON literal, or nil when the parameter is required.
    public var defaultJSON: String?
    public var summary: String
    /// The title for people (SDK 1.3, an AppIntents `@Parameter(title:)`),
    /// or nil when the plugin gave none.
    public var title: String?
    /// The values the parameter may take (SDK 1.3, an `AppEnum`'s cases);
    /// empty when any value of the type is allowed.
    public var choices: [ParameterChoice]
    /// Whether the parameter may be left out when it has no default (SDK
    /// 1.3, `WH_PARAMETER_OPTIONAL`); otherwise a parameter without a
    /// default is required.
    public var isOptional: Bool

    public init(
        name: String, type: ParameterType?, rawType: UInt32, defaultJSON: String?, summary: String,
        title: String? = nil, choices: [ParameterChoice] = [], isOptional: Bool = false
    ) {
        self.isOptional = isOptional
        self.name = name
        self.type = type
        self.rawType = rawType
        self.defaultJSON = defaultJSON
        self.summary = summary
        self.title = title
        self.choices = choices
    }

    /// The title, else the name: what a form labels the parameter with.
    public var label: String { title.flatMap { $0.isEmpty ? nil : $0 } ?? name }
}

/// One allowed value of a parameter (`wh_parameter.choices`): an
/// `AppEnum` case's raw value and its title.
public struct ParameterChoice: Sendable, Hashable, Codable {
    /// The value, as the configuration holds it (a string).
    public var value: String
    /// The title for people, or nil: the value is shown.
    public var title: String?

    public init(value: String, title: String? = nil) {
        self.value = value
        self.title = title
    }
}

/// One widget kind of a plugin, as its descriptor declares it.
public struct KindDescription: Sendable, Hashable, Codable {
    public var id: String
    public var displayName: String
    public var summary: String
    /// The raw `wh_family` bits.
    public var familyBits: UInt32
    public var needsNetwork: Bool
    /// `WH_KIND_FRESH_PROCESS`: every call of this kind starts from a fresh
    /// process (the fork mode), never a reused warm worker.
    public var needsFreshProcess: Bool = false
    /// `WH_KIND_PUSH` (SDK 1.3): the kind accepts push updates; the daemon
    /// gives it a push token and takes pushes for it.
    public var acceptsPush: Bool = false
    /// The entry points the kind provides (a missing one is a plugin defect).
    public var entryPoints: [EntryPoint]
    public var parameters: [ParameterDescription]
    /// `WH_KIND_DETERMINISTIC`: the kind's answers depend only on the family,
    /// the configuration and `now`, so identical calls may share one answer.
    public var isDeterministic: Bool

    public init(
        id: String, displayName: String, summary: String, familyBits: UInt32, needsNetwork: Bool,
        entryPoints: [EntryPoint], parameters: [ParameterDescription], isDeterministic: Bool = false
    ) {
        self.id = id
        self.displayName = displayName
        self.summary = summary
        self.familyBits = familyBits
        self.needsNetwork = needsNetwork
        self.entryPoints = entryPoints
        self.parameters = parameters
        self.isDeterministic = isDeterministic
    }

    /// The families the kind supports, in WidgetKit order.
    public var families: [WidgetFamily] { WidgetFamily.families(in: familyBits) }

    /// The instance configuration with every declared default filled in and
    /// `overrides` (a JSON object's members, as JSON text) applied on top.
    public func configurationJSON(overrides: [String: String] = [:]) -> String {
        var members: [(String, String)] = []
        for parameter in parameters {
            if let value = overrides[parameter.name] ?? parameter.defaultJSON {
                members.append((parameter.name, value))
            }
        }
        for (name, value) in overrides.sorted(by: { $0.key < $1.key })
        where !parameters.contains(where: { $0.name == name }) {
            members.append((name, value))
        }
        return "{" + members.map { "\(JSONValue.quote($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }
}

/// What a plugin says about itself once loaded (its `wh_plugin_descriptor`).
public struct PluginDescription: Sendable, Hashable, Codable {
    /// The path the plugin was loaded from.
    public var path: String
    public var id: String
    public var name: String
    public var version: String
    public var vendor: String
    public var sdkVersion: String
    /// The ABI version negotiated with the host.
    public var abiVersion: UInt32
    /// `struct_size` of the plugin's descriptor.
    public var descriptorSize: UInt32
    /// Seconds `dlopen` plus the entry function took in the child.
    public var loadSeconds: Double
    /// Threads alive in the child right after loading (more than 1 means the
    /// plugin started threads while loading).
    public var threadsAfterLoad: UInt32
    /// Whether the descriptor has a `warm_up` function (SDK 1.1), which a
    /// fork server runs once before forking calls.
    public var hasWarmUp: Bool
    public var kinds: [KindDescription]
    /// The Mustache templates the plugin ships (the templates extension,
    /// `ext/templates.h`); empty when it exports none.
    public var templates: [TemplateDescription] = []

    public init(
        path: String, id: String, name: String, version: String, vendor: String,
        sdkVersion: String, abiVersion: UInt32, descriptorSize: UInt32, loadSeconds: Double,
        threadsAfterLoad: UInt32, hasWarmUp: Bool = false, kinds: [KindDescription]
    ) {
        self.path = path
        self.id = id
        self.name = name
        self.version = version
        self.vendor = vendor
        self.sdkVersion = sdkVersion
        self.abiVersion = abiVersion
        self.descriptorSize = descriptorSize
        self.loadSeconds = loadSeconds
        self.threadsAfterLoad = threadsAfterLoad
        self.hasWarmUp = hasWarmUp
        self.kinds = kinds
    }

    /// The kind with this id.
    public func kind(_ id: String) -> KindDescription? { kinds.first { $0.id == id } }
}
