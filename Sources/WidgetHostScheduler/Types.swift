import WidgetHostModel

/// One placed widget: a plugin's kind, in a family, with a configuration,
/// belonging to an app. Each instance has its own budget.
public struct WidgetInstance: Sendable, Hashable, Codable {
    /// Unique, stable id (also seeds the instance's jitter).
    public var id: String
    /// The plugin (provider .so) that serves it.
    public var plugin: String
    /// The widget kind inside the plugin (WidgetKit's `kind`).
    public var kind: String
    public var family: WidgetFamily
    /// The user's configuration (intent), as JSON text.
    public var configuration: String
    /// The containing app (whose foreground/session state makes reloads free).
    public var app: String
    /// Whether the instance is on screen now.
    public var isVisible: Bool
    /// Whether the widget uses location (gets significant-location-change reloads).
    public var usesLocation: Bool

    public init(
        id: String, plugin: String, kind: String, family: WidgetFamily = .systemSmall,
        configuration: String = "{}", app: String, isVisible: Bool = true, usesLocation: Bool = false
    ) {
        self.id = id
        self.plugin = plugin
        self.kind = kind
        self.family = family
        self.configuration = configuration
        self.app = app
        self.isVisible = isVisible
        self.usesLocation = usesLocation
    }
}

/// What `getCurrentConfigurations()` returns (WidgetKit's `WidgetInfo`).
public struct WidgetInfo: Sendable, Hashable, Codable {
    public var id: String
    public var plugin: String
    public var kind: String
    public var family: WidgetFamily
    public var configuration: String
    public var app: String

    public init(
        id: String, plugin: String, kind: String, family: WidgetFamily, configuration: String, app: String
    ) {
        self.id = id
        self.plugin = plugin
        self.kind = kind
        self.family = family
        self.configuration = configuration
        self.app = app
    }
}

/// A kind of app session during which WidgetCenter and policy reloads are free.
public enum SessionKind: String, Sendable, Hashable, Codable, CaseIterable {
    case audio
    case navigation
}

/// A system-wide change that reloads every instance for free.
public enum SystemChange: String, Sendable, Hashable, Codable, CaseIterable {
    case locale
    case accessibility
    case timeZone
}

/// Something that happens to the host, fed to `ReloadScheduler.handle(_:at:)`.
public enum SchedulerEvent: Sendable, Hashable, Codable {
    case instanceShown(String)
    case instanceHidden(String)
    case appForeground(String)
    case appBackground(String)
    case sessionStarted(app: String, kind: SessionKind)
    case sessionEnded(app: String, kind: SessionKind)
    /// A button or toggle in the instance ran an app intent: one guaranteed free reload.
    case appIntent(instance: String)
    case systemChange(SystemChange)
    /// Instances that use location reload (free) when next viewed.
    case significantLocationChange
    /// `WidgetCenter.reloadTimelines(ofKind:)` called by `app`.
    case reloadTimelines(ofKind: String, app: String)
    /// `WidgetCenter.reloadAllTimelines()` called by `app`.
    case reloadAllTimelines(app: String)
    /// A push update (WidgetKit's widget push notifications) for the
    /// instances of `kind` (of `plugin` only, when given): reloads them with
    /// trigger `push`, counted against each instance's push budget
    /// (``SchedulerConfiguration/pushAllowance``), not its timeline budget.
    case push(kind: String, plugin: String?)
}

/// Why a reload happens.
public enum ReloadTrigger: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The instance was just added: its first timeline.
    case added
    /// The timeline's reload policy came due (`atEnd` or `after(date)`).
    case policy
    case reloadTimelines(kind: String, app: String)
    case reloadAllTimelines(app: String)
    case appIntent
    case systemChange(SystemChange)
    case significantLocationChange
    /// A push update for the instance's kind.
    case push

    public var description: String {
        switch self {
        case .added: "added"
        case .policy: "policy"
        case .reloadTimelines(let kind, let app): "reloadTimelines(ofKind: \(kind)) by \(app)"
        case .reloadAllTimelines(let app): "reloadAllTimelines() by \(app)"
        case .appIntent: "appIntent"
        case .systemChange(let change): "systemChange(\(change.rawValue))"
        case .significantLocationChange: "significantLocationChange"
        case .push: "push"
        }
    }

    /// Whether this is an explicit request (anything but the policy).
    public var isExplicit: Bool { self != .policy }
}

/// Why a reload is not counted against the budget.
public enum FreeReason: String, Sendable, Hashable, Codable, CaseIterable {
    case appForeground
    case audioSession
    case navigationSession
    case appIntent
    case localeChange
    case accessibilityChange
    case timeZoneChange
    case significantLocationChange
    case instanceAdded
    /// A push update: not counted against the timeline budget nor the
    /// host-wide free-reload cap, but against the instance's push budget.
    case push

    /// Whether a reload for this reason counts against the host-wide cap on
    /// free reloads (`freeReloadLimit` per `freeReloadWindow`): every reason
    /// but a placement (`instanceAdded`) and a push (which has its own
    /// budget). The one place that decides it.
    public var isCapped: Bool { self != .instanceAdded && self != .push }
}

/// Whether a reload is counted against the instance's budget.
public enum ReloadCharge: Sendable, Hashable, Codable, CustomStringConvertible {
    case counted
    case free(FreeReason)

    public var isCounted: Bool { self == .counted }

    public var description: String {
        switch self {
        case .counted: "counted"
        case .free(let reason): "free(\(reason.rawValue))"
        }
    }
}

/// Why a reload was (or, in developer mode, would have been) moved later.
public enum DeferralCause: String, Sendable, Hashable, Codable, CaseIterable {
    /// The rolling 24 h allowance was spent; `until` is oldest counted + window.
    case budget
    /// The previous counted reload was less than the minimum interval ago.
    case spacing
    /// Retrying after a failure.
    case backoff
    /// The policy came due while the instance was hidden; `until` is when it was shown.
    case hidden
    /// The host-wide free-reload cap was reached.
    case freeRateCap
    /// The instance's push budget was spent; `until` is its oldest push
    /// reload in the window + the window.
    case pushBudget
    /// Batched with nearby reloads, within the coalescing slack.
    case coalescing
    /// Issued after its planned time for another reason: the driver woke late,
    /// or the reload was held by a limit that then went away (a counted reload
    /// waiting for budget became free when its app came to the foreground).
    case late
}

/// A reload moved from `from` to `until` because of `cause`.
public struct Deferral: Sendable, Hashable, Codable, CustomStringConvertible {
    public var from: Double
    /// `nil` when the end is unknown (hidden: until the instance is shown).
    public var until: Double?
    public var cause: DeferralCause

    public init(from: Double, until: Double?, cause: DeferralCause) {
        self.from = from
        self.until = until
        self.cause = cause
    }

    public var description: String {
        let end = until.map { Timestamp.iso8601($0) } ?? "shown"
        return "\(cause.rawValue): \(Timestamp.iso8601(from)) -> \(end)"
    }
}

/// One reload the driver must perform now.
public struct ReloadDecision: Sendable, Hashable, Codable, CustomStringConvertible {
    public var instanceID: String
    public var plugin: String
    public var kind: String
    /// When the reload is issued.
    public var time: Double
    public var trigger: ReloadTrigger
    public var charge: ReloadCharge
    /// 0 for a first attempt, n for the n-th retry after failures.
    public var attempt: Int
    /// Set when the reload happens later than first due, and why.
    public var deferral: Deferral?
    /// Developer mode only: the deferral the limits would have imposed.
    public var wouldHaveBeenDeferred: Deferral?
    /// For counted reloads: the allowance in force and the counted reloads in
    /// the window ending at `time`, this one included.
    public var allowance: Int?
    public var countedInWindow: Int?

    public init(
        instanceID: String, plugin: String, kind: String, time: Double, trigger: ReloadTrigger, charge: ReloadCharge,
        attempt: Int, deferral: Deferral? = nil, wouldHaveBeenDeferred: Deferral? = nil, allowance: Int? = nil,
        countedInWindow: Int? = nil
    ) {
        self.instanceID = instanceID
        self.plugin = plugin
        self.kind = kind
        self.time = time
        self.trigger = trigger
        self.charge = charge
        self.attempt = attempt
        self.deferral = deferral
        self.wouldHaveBeenDeferred = wouldHaveBeenDeferred
        self.allowance = allowance
        self.countedInWindow = countedInWindow
    }

    public var description: String {
        var text = "\(Timestamp.iso8601(time)) reload \(instanceID) [\(plugin)/\(kind)] \(trigger) \(charge)"
        if attempt > 0 { text += " attempt=\(attempt)" }
        if let allowance, let countedInWindow { text += " budget=\(countedInWindow)/\(allowance)" }
        if let deferral { text += " deferred(\(deferral))" }
        if let wouldHaveBeenDeferred { text += " would-have-been-deferred(\(wouldHaveBeenDeferred))" }
        return text
    }
}

/// The reloads of one plugin kind issued at one wakeup: one child can serve them all.
public struct ReloadBatch: Sendable, Hashable, Codable {
    public var plugin: String
    public var kind: String
    public var time: Double
    public var decisions: [ReloadDecision]

    public init(plugin: String, kind: String, time: Double, decisions: [ReloadDecision]) {
        self.plugin = plugin
        self.kind = kind
        self.time = time
        self.decisions = decisions
    }
}

/// What a push update did to one instance of its kind
/// (``ReloadScheduler/push(kind:plugin:at:)``).
public struct PushDecision: Sendable, Hashable, Codable {
    public var instanceID: String
    /// The instance's next reload as planned now: at the push's time, or later
    /// with the deferral that holds it (`.pushBudget` when the push budget is
    /// spent); nil while a reload is in flight (the push then waits for it to
    /// complete) or when nothing can be planned (a push allowance of 0).
    public var reload: PlannedReload?

    public init(instanceID: String, reload: PlannedReload?) {
        self.instanceID = instanceID
        self.reload = reload
    }
}

/// How a reload ended.
///
/// Only what the plugin did is a failure. A reload the host could not
/// make, because the plugin was not loaded (it failed to load, is
/// quarantined, or is not configured), its kind is backing off, or the
/// host itself failed (out of descriptors, memory, processes), is
/// ``notCalled(reason:retryAt:)``: the charge it took from the instance's
/// budget (counted or push) is given back and it does not count toward the
/// instance's backoff. The host-wide cap on free reloads keeps it: the cap
/// limits how often free reloads are tried.
///
/// ```swift
/// // The plugin is quarantined: try again in five minutes, uncharged.
/// scheduler.complete(ticket, with: .notCalled(reason: "plugin quarantined", retryAt: now + 300), at: now)
/// ```
public enum ReloadOutcome: Sendable, Hashable, Codable {
    /// The plugin answered with a timeline.
    case success(TimelineRecord)
    /// The plugin failed (crashed, answered badly, refused).
    case failure(reason: String)
    /// The plugin did not answer within its timeout.
    case timedOut
    /// The plugin was never called: the reload's charge is given back, no
    /// failure is counted, and the reload (its request, or its policy's due
    /// time) waits until `retryAt`, or until ``ReloadScheduler/endHold(of:at:)``
    /// says its cause is gone. A `retryAt` that is not a finite time is
    /// taken as the completion's time.
    case notCalled(reason: String, retryAt: Double)
}

/// How the reload of one instance ended, as ``ReloadScheduler/complete(_:at:)``
/// takes a batch of them.
public struct ReloadCompletion: Sendable, Hashable {
    /// The instance the reload was for (a decision's `instanceID`).
    public var instanceID: String
    /// How it ended.
    public var outcome: ReloadOutcome

    /// The result of the reload of `instanceID`.
    public init(instanceID: String, outcome: ReloadOutcome) {
        self.instanceID = instanceID
        self.outcome = outcome
    }
}

/// The last failure of an instance, kept until the next success.
public struct FailureRecord: Sendable, Hashable, Codable {
    public var time: Double
    public var reason: String
    public var consecutiveFailures: Int
    public var retryAt: Double

    public init(time: Double, reason: String, consecutiveFailures: Int, retryAt: Double) {
        self.time = time
        self.reason = reason
        self.consecutiveFailures = consecutiveFailures
        self.retryAt = retryAt
    }
}

/// Why an instance's displayed entry may have changed, for
/// ``ReloadScheduler/takeDisplayChanges(into:causes:)``.
///
/// ```swift
/// // Only the entries that became current at their dates:
/// scheduler.takeDisplayChanges(into: &changed, causes: .entryDate)
/// ```
public struct DisplayChangeCauses: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// A new timeline was stored (or the instance was added or put back).
    public static let newTimeline = DisplayChangeCauses(rawValue: 1)
    /// An entry's date passed: it is the one displayed now.
    public static let entryDate = DisplayChangeCauses(rawValue: 2)
}
