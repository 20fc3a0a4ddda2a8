import WidgetHostModel

/// A widget placed, or changed, at run time (`instances.add`,
/// `instances.update`), as a user placing a widget on the home screen.
///
/// ```text
/// → {"v":2,"id":1,"op":"instances.add","widget":{"id":"desk","plugin":"countdown",
///     "kind":"com.widgethost.countdown","family":"systemSmall","app":"countdown",
///     "configuration":{"title":"Launch"}}}
/// ```
///
/// For `instances.add`, `plugin`, `kind` and `app` are required; `family`
/// defaults to `systemSmall`, `configuration` to `{}` (each parameter's
/// default), `visible` to true. For `instances.update`, the fields given
/// replace the instance's; `id` says which.
public struct InstanceSpec: Sendable, Hashable, Codable {
    public var id: String
    /// A plugin of the configuration file, by its name.
    public var plugin: String?
    public var kind: String?
    /// WidgetKit's family name (`systemSmall`, `accessoryInline`, ...).
    public var family: String?
    public var app: String?
    /// Parameter values, a JSON object (checked against the kind's parameters).
    public var configuration: JSONValue?
    public var visible: Bool?
    public var usesLocation: Bool?
    /// The timeline call's timeout in seconds (default: the daemon's).
    public var timeout: Double?

    public init(
        id: String, plugin: String? = nil, kind: String? = nil, family: String? = nil, app: String? = nil,
        configuration: JSONValue? = nil, visible: Bool? = nil, usesLocation: Bool? = nil, timeout: Double? = nil
    ) {
        self.id = id
        self.plugin = plugin
        self.kind = kind
        self.family = family
        self.app = app
        self.configuration = configuration
        self.visible = visible
        self.usesLocation = usesLocation
        self.timeout = timeout
    }
}

extension InstanceSpec: ControlLineShape {
    /// `timeout` takes any number of seconds; `configuration` any JSON object.
    public static var fieldsTakingAnyNumber: Set<String> {
        [CodingKeys.timeout.stringValue, CodingKeys.configuration.stringValue]
    }
}

/// The answer to `instance`: one instance in full.
public struct InstanceDetail: Sendable, Hashable, Codable {
    public var id: String
    public var plugin: String
    public var kind: String
    public var family: String
    public var app: String
    /// `configuration` (the configuration file) or `runtime` (`instances.add`).
    public var origin: String
    /// The instance's configuration (parameter values).
    public var configuration: JSONValue
    public var visible: Bool
    /// The displayed entry's content as a JSON object; nil before the first timeline.
    public var content: JSONValue?
    /// The displayed entry's date, and the next entry's (nil: the last entry shows).
    public var entryDate: Double?
    public var nextEntryDate: Double?
    /// Entries in the stored timeline.
    public var entries: Int
    /// The timeline's reload policy (`atEnd`, `after(<time>)`, `never`).
    public var policy: String?
    /// When the policy asks for the next reload.
    public var policyDue: Double?
    /// The next planned reload and why.
    public var nextReload: Double?
    public var nextReason: String?
    /// Counted reloads in the rolling window, the allowance, and the window's length (seconds).
    public var budgetUsed: Int
    public var budgetAllowance: Int
    public var budgetWindow: Double
    /// The view tier that sets the allowance.
    public var tier: String
    public var lastReload: Double?
    /// `ok` after a good last reload, else the failure's reason; nil before any.
    public var lastOutcome: String?
    public var consecutiveFailures: Int
    public var inFlight: Bool
    /// The relevance score in force now (0 without one), and the displayed entry's own.
    public var relevance: Double
    public var entryRelevance: EntryRelevance?
    /// The instance's place among the instances of its stack (same app and
    /// family), by relevance: 1 is on top.
    public var stackRank: Int
    public var stackSize: Int
    /// Why the instance cannot reload, if it cannot.
    public var unavailable: String?

    public init(
        id: String, plugin: String, kind: String, family: String, app: String, origin: String,
        configuration: JSONValue, visible: Bool
    ) {
        self.id = id
        self.plugin = plugin
        self.kind = kind
        self.family = family
        self.app = app
        self.origin = origin
        self.configuration = configuration
        self.visible = visible
        self.entries = 0
        self.budgetUsed = 0
        self.budgetAllowance = 0
        self.budgetWindow = 0
        self.tier = ""
        self.consecutiveFailures = 0
        self.inFlight = false
        self.relevance = 0
        self.stackRank = 1
        self.stackSize = 1
    }
}

/// WidgetKit's `TimelineEntryRelevance` of an entry: a score, and how long it holds (0: while displayed).
public struct EntryRelevance: Sendable, Hashable, Codable {
    public var score: Double
    public var duration: Double
    public init(score: Double, duration: Double) {
        self.score = score
        self.duration = duration
    }
}
