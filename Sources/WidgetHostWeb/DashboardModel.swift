import WidgetHostControl
import WidgetHostModel

/// What the dashboard of `widgethost run --http` draws, as the daemon's loop
/// saw it at ``now``: every instance (or the ones asked for) and the plugins
/// a new instance can be placed from.
public struct DashboardSnapshot: Sendable {
    /// The daemon's wall clock when the snapshot was taken.
    public var now: Double
    public var widgets: [DashboardWidget]
    public var plugins: [DashboardPlugin]
    /// Worker figures for `/metrics`: plugins loaded, and calls running now.
    public var pluginsLoaded: Int
    public var callsRunning: Int

    public init(
        now: Double, widgets: [DashboardWidget], plugins: [DashboardPlugin], pluginsLoaded: Int = 0,
        callsRunning: Int = 0
    ) {
        self.now = now
        self.widgets = widgets
        self.plugins = plugins
        self.pluginsLoaded = pluginsLoaded
        self.callsRunning = callsRunning
    }
}

/// One instance on the dashboard: what it shows, its budget and its plans.
public struct DashboardWidget: Sendable, Hashable {
    public var id: String
    public var plugin: String
    public var kind: String
    public var family: WidgetFamily
    /// `configuration` (the file) or `runtime` (placed with instances.add or the page).
    public var origin: String
    /// The entry displayed now, and the kind's template for the family.
    public var entry: EntryRecord?
    public var template: TemplateDescription?
    /// Counted reloads in the rolling window, and the allowance.
    public var budgetUsed: Int?
    public var budgetAllowance: Int?
    /// When the next reload is planned and why (nil: none planned).
    public var nextReload: Double?
    public var nextReason: String?
    /// Dates of the stored timeline's entries (the strip of the next 24 h keeps the ones ahead).
    public var entryDates: [Double]
    public var consecutiveFailures: Int
    /// The last reload's outcome (`ok`, or a failure's code).
    public var lastOutcome: String?
    public var inFlight: Bool
    /// Why the plugin cannot be called now (it failed to load, it is quarantined), or nil.
    public var unavailable: String?
    /// Its place in its stack (the instances of its family) by relevance,
    /// 1 on top, as the Smart Stack orders them; nil when unknown.
    public var stackRank: Int?
    /// The `TimelineEntryRelevance` score in force (0 without one).
    public var relevance: Double

    public init(
        id: String, plugin: String, kind: String, family: WidgetFamily, origin: String, entry: EntryRecord? = nil,
        template: TemplateDescription? = nil, budgetUsed: Int? = nil, budgetAllowance: Int? = nil,
        nextReload: Double? = nil, nextReason: String? = nil, entryDates: [Double] = [], consecutiveFailures: Int = 0,
        lastOutcome: String? = nil, inFlight: Bool = false, unavailable: String? = nil, stackRank: Int? = nil,
        relevance: Double = 0
    ) {
        self.id = id
        self.plugin = plugin
        self.kind = kind
        self.family = family
        self.origin = origin
        self.entry = entry
        self.template = template
        self.budgetUsed = budgetUsed
        self.budgetAllowance = budgetAllowance
        self.nextReload = nextReload
        self.nextReason = nextReason
        self.entryDates = entryDates
        self.consecutiveFailures = consecutiveFailures
        self.lastOutcome = lastOutcome
        self.inFlight = inFlight
        self.unavailable = unavailable
        self.stackRank = stackRank
        self.relevance = relevance
    }

    /// Whether the plugin is quarantined (the page shows a badge).
    public var isQuarantined: Bool { unavailable?.contains("quarantined") ?? false }
}

/// A plugin the page can place instances from (the add form).
public struct DashboardPlugin: Sendable, Hashable {
    /// The configuration's name for it.
    public var name: String
    /// Its kinds as it described them (families, parameters); empty when it did not load.
    public var kinds: [KindDescription]

    public init(name: String, kinds: [KindDescription]) {
        self.name = name
        self.kinds = kinds
    }
}

/// What the dashboard needs from the daemon. The daemon implements it
/// (`Daemon+HTTP.swift`): every call is handed to its loop and answered
/// there, so the web side never touches the daemon's state from its own
/// threads and never blocks the loop.
public protocol DashboardSource: Sendable {
    /// A snapshot of `instances` (nil: all of them).
    func snapshot(instances: [String]?) async -> DashboardSnapshot
    /// Runs a control request (`instances.add`, `instances.remove`) through
    /// the daemon's own request path, with its checks and its commit.
    func perform(_ request: ControlRequest) async -> ControlResponse
    /// The daemon's event log from now on, in-process, as batches.
    func events() -> AsyncStream<[WatchEvent]>
}
