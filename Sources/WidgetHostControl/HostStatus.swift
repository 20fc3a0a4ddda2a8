/// The answer to `status`: every plugin and every instance, at one time.
public struct HostStatus: Sendable, Hashable, Codable {
    /// When the status was taken (seconds since 1970).
    public var time: Double
    public var plugins: [PluginStatus]
    public var instances: [InstanceStatus]
    /// Plugin files refused until they change or are unquarantined.
    public var quarantined: [QuarantinedPlugin]
    /// Why the daemon cannot write its state, while it cannot (reloads are
    /// paused and changing requests refused until it can); nil when it can.
    public var storageProblem: String?
    /// Counts over every instance, whatever the page holds.
    public var summary: StatusSummary?
    /// More instances follow: ask again with `"after": nextCursor`.
    public var nextCursor: String?

    public init(time: Double, plugins: [PluginStatus], instances: [InstanceStatus], quarantined: [QuarantinedPlugin]) {
        self.time = time
        self.plugins = plugins
        self.instances = instances
        self.quarantined = quarantined
    }
}

/// One configured plugin.
public struct PluginStatus: Sendable, Hashable, Codable {
    /// The name instances use for it.
    public var name: String
    public var path: String
    /// `loading` (being loaded; its due reloads wait), `loaded`, `failed` (could not be loaded: see `problem`), or
    /// `quarantined`.
    public var state: String
    /// The plugin's identifier and version, when loaded.
    public var identifier: String?
    public var version: String?
    /// `fork-server` or `spawn` (and why, when it fell back).
    public var isolation: String?
    public var kinds: [String]
    public var problem: String?
    /// Crashes counted toward quarantine since the file last changed.
    public var crashes: Int
    /// When a kind's backoff after repeated failures ends, per kind.
    public var backoffUntil: [String: Double]
    /// v2: the per-installation push token of each kind that has one (`push`).
    public var pushTokens: [String: String]?
    /// True when the file at `path` is no longer the one loaded (or
    /// quarantined): another size or modification time, or gone.
    /// `identifier`, `version` and `kinds` are still the loaded file's; the
    /// daemon loads the file again at the plugin's next due reload (a
    /// quarantine ends then). Absent when the file is the one loaded, and
    /// while the plugin is loading.
    public var fileChanged: Bool?
    /// True while a call of this plugin runs in its runner. A reload issued
    /// but waiting in the plugin's queue (its worker starting, or another
    /// call running) is `inFlight` on its instance, not yet calling here.
    /// Absent when no call runs.
    public var calling: Bool?

    public init(
        name: String, path: String, state: String, identifier: String? = nil, version: String? = nil,
        isolation: String? = nil, kinds: [String] = [], problem: String? = nil, crashes: Int = 0,
        backoffUntil: [String: Double] = [:]
    ) {
        self.name = name
        self.path = path
        self.state = state
        self.identifier = identifier
        self.version = version
        self.isolation = isolation
        self.kinds = kinds
        self.problem = problem
        self.crashes = crashes
        self.backoffUntil = backoffUntil
    }
}

/// One widget instance.
public struct InstanceStatus: Sendable, Hashable, Codable {
    public var id: String
    public var plugin: String
    public var kind: String
    public var family: String
    public var app: String
    public var visible: Bool
    /// What it shows now: the displayed entry's content, shortened; nil before the first timeline.
    public var shows: String?
    /// The displayed entry's whole content (JSON text).
    public var content: String?
    /// The displayed entry's date.
    public var entryDate: Double?
    /// The timeline's reload policy (`atEnd`, `after(<time>)`, `never`).
    public var policy: String?
    /// Counted reloads in the rolling 24 h window, and the allowance.
    public var budgetUsed: Int
    public var budgetAllowance: Int
    /// The view tier that sets the allowance (`learning`, `frequent`, `occasional`, `rare`).
    public var tier: String
    /// The next planned reload, and why.
    public var nextReload: Double?
    public var nextReason: String?
    /// A reload running now.
    public var inFlight: Bool
    public var lastReload: Double?
    /// The last failure, while failures continue.
    public var lastFailure: String?
    public var consecutiveFailures: Int
    /// Why the instance cannot reload (its plugin failed to load or is quarantined).
    public var unavailable: String?
    /// v2: `configuration` (the configuration file) or `runtime` (`instances.add`).
    public var origin: String?
    /// v2: the relevance score in force now (0 without one).
    public var relevance: Double?
    /// v2: the instance's stack (its family) and its place in it by relevance (1: on top).
    public var stack: String?
    public var stackRank: Int?

    public init(
        id: String, plugin: String, kind: String, family: String, app: String, visible: Bool, shows: String?,
        content: String? = nil, entryDate: Double?, policy: String?, budgetUsed: Int, budgetAllowance: Int,
        tier: String,
        nextReload: Double?, nextReason: String?, inFlight: Bool, lastReload: Double?, lastFailure: String?,
        consecutiveFailures: Int, unavailable: String?
    ) {
        self.id = id
        self.plugin = plugin
        self.kind = kind
        self.family = family
        self.app = app
        self.visible = visible
        self.shows = shows
        self.content = content
        self.entryDate = entryDate
        self.policy = policy
        self.budgetUsed = budgetUsed
        self.budgetAllowance = budgetAllowance
        self.tier = tier
        self.nextReload = nextReload
        self.nextReason = nextReason
        self.inFlight = inFlight
        self.lastReload = lastReload
        self.lastFailure = lastFailure
        self.consecutiveFailures = consecutiveFailures
        self.unavailable = unavailable
    }
}

/// A quarantined plugin file.
public struct QuarantinedPlugin: Sendable, Hashable, Codable {
    public var path: String
    public var size: Int64
    public var mtime: Int64
    public var reason: String
    public var since: Double
    public var crashes: Int
    public init(path: String, size: Int64, mtime: Int64, reason: String, since: Double, crashes: Int) {
        self.path = path
        self.size = size
        self.mtime = mtime
        self.reason = reason
        self.since = since
        self.crashes = crashes
    }
}

/// The answer to `explain`: the text for people and the facts for machines.
public struct InstanceExplanation: Sendable, Hashable, Codable {
    public var instance: String
    /// Several lines: visibility and tier, budget, spacing, policy, backoff, next reload, with exact times.
    public var text: String
    public var time: Double
    public var budgetUsed: Int
    public var budgetAllowance: Int
    public var budgetAvailableAt: Double
    public var spacingAvailableAt: Double?
    public var policyDue: Double?
    public var backoffUntil: Double?
    public var nextReload: Double?
    public var nextReason: String?
    public var unavailable: String?

    public init(
        instance: String, text: String, time: Double, budgetUsed: Int, budgetAllowance: Int,
        budgetAvailableAt: Double, spacingAvailableAt: Double?, policyDue: Double?, backoffUntil: Double?,
        nextReload: Double?, nextReason: String?, unavailable: String?
    ) {
        self.instance = instance
        self.text = text
        self.time = time
        self.budgetUsed = budgetUsed
        self.budgetAllowance = budgetAllowance
        self.budgetAvailableAt = budgetAvailableAt
        self.spacingAvailableAt = spacingAvailableAt
        self.policyDue = policyDue
        self.backoffUntil = backoffUntil
        self.nextReload = nextReload
        self.nextReason = nextReason
        self.unavailable = unavailable
    }
}

/// Counts over every instance of the daemon (`status.summary`), so that a
/// client sees the whole picture from one page.
public struct StatusSummary: Sendable, Hashable, Codable {
    public var instances: Int
    public var visible: Int
    public var inFlight: Int
    /// Instances whose last reload failed.
    public var failing: Int
    /// Instances whose plugin cannot be called (failed to load, quarantined).
    public var unavailable: Int

    public init(instances: Int, visible: Int, inFlight: Int, failing: Int, unavailable: Int) {
        self.instances = instances
        self.visible = visible
        self.inFlight = inFlight
        self.failing = failing
        self.unavailable = unavailable
    }
}
