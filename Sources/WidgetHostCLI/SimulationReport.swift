import WidgetHostIsolation
import WidgetHostModel
import WidgetHostScheduler

/// The JSON records of a simulation report (``SimulationJSONWriter`` streams
/// them, one a line; the schema is in docs/simulate.md).
enum SimulationReport {
    struct JSONDeferral: Encodable {
        var from: String
        var fromSeconds: Double
        var until: String?
        var cause: String
    }

    struct JSONReload: Encodable {
        var time: String
        var timeSeconds: Double
        var instance: String
        var plugin: String
        var kind: String
        var reason: String
        var counted: Bool
        var freeReason: String?
        var budgetUsed: Int?
        var allowance: Int?
        var attempt: Int
        var deferred: JSONDeferral?
        var wouldHaveBeenDeferred: JSONDeferral?
        var outcome: String
        var entries: Int
        var policy: JSONReport.Policy?
        var failure: JSONReport.Failure?
    }

    struct JSONSummary: Encodable {
        var instance: String
        var counted: Int
        var free: Int
        var deferrals: Int
        var failures: Int
        var maxCountedIn24h: Int
        var allowanceAtEnd: Int
        var shortestCountedSpacingSeconds: Double?
        var longestVisibleStaleSeconds: Double
        var showsAtEnd: String?
    }

    struct JSONEvent: Encodable {
        var time: String
        var timeSeconds: Double
        var event: String
    }

    struct JSONDisplay: Encodable {
        var time: String
        var instance: String
        var entryDate: String
        var content: String
    }

    struct JSONStack: Encodable {
        var stack: String
        var time: String
        var top: String?
    }

    static func deferral(_ value: Deferral?) -> JSONDeferral? {
        value.map {
            JSONDeferral(
                from: Timestamp.iso8601($0.from), fromSeconds: $0.from, until: $0.until.map(Timestamp.iso8601),
                cause: $0.cause.rawValue)
        }
    }

    static func json(_ reload: ScenarioSimulator.Reload) -> JSONReload {
        let d = reload.decision
        var freeReason: String?
        if case .free(let reason) = d.charge { freeReason = reason.rawValue }
        return JSONReload(
            time: Timestamp.iso8601(d.time), timeSeconds: d.time, instance: d.instanceID, plugin: d.plugin,
            kind: d.kind, reason: d.trigger.description, counted: d.charge.isCounted, freeReason: freeReason,
            budgetUsed: d.countedInWindow, allowance: d.allowance, attempt: d.attempt,
            deferred: deferral(d.deferral), wouldHaveBeenDeferred: deferral(d.wouldHaveBeenDeferred),
            outcome: reload.outcome, entries: reload.entries, policy: reload.policy.map(JSONReport.Policy.init),
            failure: reload.failure.map(JSONReport.Failure.init))
    }

    static func json(_ event: ScenarioSimulator.EventRecord) -> JSONEvent {
        JSONEvent(time: Timestamp.iso8601(event.time), timeSeconds: event.time, event: event.label)
    }

    static func json(_ change: ScenarioSimulator.DisplayChange) -> JSONDisplay {
        JSONDisplay(
            time: Timestamp.iso8601(change.time), instance: change.instance,
            entryDate: Timestamp.iso8601(change.entryDate), content: change.content)
    }

    static func json(_ sample: ScenarioSimulator.StackSample) -> JSONStack {
        JSONStack(stack: sample.stack, time: Timestamp.iso8601(sample.time), top: sample.top)
    }

    static func json(_ summary: SimulationSummary) -> JSONSummary {
        JSONSummary(
            instance: summary.instance, counted: summary.counted, free: summary.free, deferrals: summary.deferrals,
            failures: summary.failures, maxCountedIn24h: summary.maxCountedIn24h,
            allowanceAtEnd: summary.allowanceAtEnd, shortestCountedSpacingSeconds: summary.shortestCountedSpacing,
            longestVisibleStaleSeconds: summary.longestVisibleStale, showsAtEnd: summary.shows)
    }
}
