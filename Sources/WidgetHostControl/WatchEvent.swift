/// One event of the daemon's event log, as `watch` streams it.
///
/// Ids increase by one per event and are never reused (they are the state
/// database's `event_log` row ids); a client keeps the last id it saw and
/// passes it as `lastEventId` when it reconnects, to get what it missed.
///
/// ```text
/// ← {"v":2,"id":1,"ok":true,"event":{"id":42,"time":1767225600,"type":"reload","instance":"desk",
///     "message":"...","details":{"reason":"instanceAdded","counted":false,"budgetUsed":0,"budgetAllowance":72}}}
/// ```
public struct WatchEvent: Sendable, Hashable, Codable {
    public var id: Int64
    /// When it happened (seconds since 1970).
    public var time: Double
    /// What happened: one of ``WatchEventType`` (an unknown type is to be
    /// ignored: later versions may add some).
    public var type: String
    /// The instance it concerns, if one.
    public var instance: String?
    /// A sentence for people.
    public var message: String
    /// The facts for machines, per type (docs/control-protocol.md).
    public var details: WatchEventDetails?

    public init(
        id: Int64, time: Double, type: String, instance: String?, message: String, details: WatchEventDetails? = nil
    ) {
        self.id = id
        self.time = time
        self.type = type
        self.instance = instance
        self.message = message
        self.details = details
    }
}

/// The event types of the watch stream (``WatchEvent/type``).
public enum WatchEventType: String, Sendable, Hashable, Codable, CaseIterable {
    /// A reload started: `reason`, `counted`, `charge`, `budgetUsed`/`budgetAllowance` after it.
    case reload
    /// A reload finished with a timeline, now stored: `entries`, `entryDate`, `nextEntryDate`, `policy`, `relevance`.
    case timeline
    /// A reload finished without a timeline: `outcome`.
    case failure
    /// A reload's plugin was not called (it did not load or is quarantined,
    /// its kind backs off, or the host failed): not charged, not counted as
    /// a failure, held until it can be called; `outcome` says why.
    case held
    /// The instance's displayed entry changed at its date (no reload): `entryDate`, `nextEntryDate`, `relevance`.
    case entry
    /// Placed at run time: `plugin`, `kind`, `family`, `app`, `origin`.
    case instanceAdded = "instance-added"
    /// Removed at run time (or replaced by the configuration file).
    case instanceRemoved = "instance-removed"
    /// Changed at run time.
    case instanceUpdated = "instance-updated"
    /// A push arrived for a kind (accepted): the kind is the event's `message` (no details, no instance);
    /// its instances' reloads follow with reason `push`.
    case push
    /// The order of a stack (a family) by relevance changed: `family`, `order` (top first, at most 10).
    case stack
    /// A `reload` request (WidgetCenter), an `event`, a `view`.
    case request, event, view
    /// A plugin loaded again, was quarantined or released.
    case plugin, quarantine, unquarantine
    /// The daemon started, stopped, re-read its configuration, saw the clock jump or storage come back.
    case start, stop, restart, configuration, clock, storage
}

/// The structured part of a ``WatchEvent``; which fields are set depends on the type.
public struct WatchEventDetails: Sendable, Hashable, Codable {
    /// Why the reload ran (`instanceAdded`, `policy`, `reloadTimelines`, `reloadAllTimelines`, `appIntent`,
    /// `systemChange(...)`, `significantLocationChange`, `push`).
    public var reason: String?
    /// Whether the reload counts against the budget.
    public var counted: Bool?
    /// The charge as the scheduler says it (`counted`, `free(instanceAdded)`).
    public var charge: String?
    /// Counted reloads in the rolling window (after this one) and the allowance.
    public var budgetUsed: Int?
    public var budgetAllowance: Int?
    /// `ok`, or the failure's code (`timedOut`, `crashed`, `unavailable`, ...).
    public var outcome: String?
    /// Entries in the stored timeline.
    public var entries: Int?
    /// The displayed entry's date, and the next entry's.
    public var entryDate: Double?
    public var nextEntryDate: Double?
    /// The timeline's reload policy.
    public var policy: String?
    /// The relevance score in force for the instance (0 without one).
    public var relevance: Double?
    public var plugin: String?
    public var kind: String?
    public var family: String?
    public var app: String?
    /// `configuration` or `runtime`.
    public var origin: String?
    /// `stack`: the stack's instances by relevance, top first (at most 10).
    public var order: [String]?

    public init() {}
}

/// The first answer to `watch`: where the stream starts.
public struct WatchStart: Sendable, Hashable, Codable {
    /// The newest event written when the watch began: events up to it are
    /// replayed (after `lastEventId`), later ones follow live.
    public var lastEventId: Int64
    /// The oldest event the daemon still keeps (nil: none).
    public var oldestEventId: Int64?
    /// Events the client asked for that are no longer kept; nil when none were lost.
    public var gap: WatchGap?
    /// How much of the log is kept (docs/control-protocol.md).
    public var retention: String

    public init(lastEventId: Int64, oldestEventId: Int64?, gap: WatchGap?, retention: String) {
        self.lastEventId = lastEventId
        self.oldestEventId = oldestEventId
        self.gap = gap
        self.retention = retention
    }
}

/// The events a resumed watch cannot give: the client should take a fresh
/// `status` (its picture may be stale), then go on with the stream.
public struct WatchGap: Sendable, Hashable, Codable {
    /// The `lastEventId` the client gave.
    public var after: Int64
    /// `pruned`: events after it are no longer kept; `unknown`: this daemon
    /// never wrote it (a newer id than any: another or a reset state file).
    public var reason: String
    public var message: String

    public init(after: Int64, reason: String, message: String) {
        self.after = after
        self.reason = reason
        self.message = message
    }
}
