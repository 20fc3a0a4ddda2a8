import WidgetHostModel
import WidgetHostScheduler

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A simulation scenario: instances of real plugins, scheduler settings, and
/// a script of events at given times (format: docs/simulate.md).
struct Scenario {
    struct Instance {
        var id: String
        var plugin: String
        var kind: String
        var family: WidgetFamily
        var app: String
        /// Parameter name → JSON text.
        var configuration: [String: String]
        var visible: Bool
        var usesLocation: Bool
        var timeout: Double?
        /// Where the file declares it (`instances[2]`), for problems found
        /// once the plugins load (a missing file, an unknown kind).
        var field: String
    }

    enum Action: Equatable {
        case scheduler(SchedulerEvent)
        case add(String)
        case remove(String)
    }

    struct Event {
        var time: Double
        var action: Action
        var label: String
    }

    struct Stack {
        var name: String
        var instances: [String]
        var every: Double
    }

    var file: String
    var summary: String
    var start: Double
    var days: Double?
    /// The most days a scenario runs (`"days"`, `--days`).
    static let maximumDays = 366.0
    var seed: UInt64?
    var configuration: SchedulerConfiguration
    var instances: [Instance]
    /// Instances listed with `"addAt"`: added by an event, not at the start.
    var lateInstances: Set<String>
    var events: [Event]
    var stacks: [Stack]
    /// The parsed file, to report problems found later with their line and column.
    var reader: DocumentReader

    /// An error at `field` of the file, with its line and column.
    func fail(_ field: String, _ problem: String) -> ScenarioError { reader.fail(field, problem) }
}

/// A problem in a scenario file: names the file, the line, the field and what to do.
typealias ScenarioError = DocumentError

/// Reads scenario files.
enum ScenarioParser {
    /// Reads a scenario; `days` (the `--days` flag) overrides the file's
    /// `"days"`, also for the span of its `randomViews`.
    static func load(_ path: String, seed overrideSeed: UInt64?, days overrideDays: Double? = nil)
        throws(ScenarioError) -> Scenario
    {
        let reader = try DocumentReader(file: path, documentation: "docs/simulate.md")
        let parser = ScenarioParser.Context(reader: reader)
        return try parser.scenario(reader.root, seed: overrideSeed, days: overrideDays)
    }

    /// Scenario-specific reading on top of the shared ``DocumentReader``.
    struct Context {
        var reader: DocumentReader

        /// `"+2h"` (after the start) or an ISO 8601 time.
        func time(_ value: JSONValue?, _ field: String, start: Double) throws(ScenarioError) -> Double {
            guard let text = try reader.string(value, field) else {
                throw reader.fail(field, "required: \"+2h30m\" or an ISO 8601 time")
            }
            let seconds: Double? =
                text.hasPrefix("+")
                ? DurationText.parse(String(text.dropFirst())).map { start + $0 }
                : (try? Date.ISO8601FormatStyle().parse(text))?.timeIntervalSince1970
            if let seconds {
                guard Bounds.isTime(seconds) else {
                    throw reader.fail(field, "\"\(text)\" is not between 1970-01-01 and 9999-12-31")
                }
                return seconds
            }
            throw reader.fail(
                field,
                "\"\(text)\" is neither an offset like \"+2h30m\" nor an ISO 8601 time like \"2026-11-23T08:00:00Z\"")
        }

        func scenario(_ root: JSONValue, seed overrideSeed: UInt64?, days overrideDays: Double? = nil)
            throws(ScenarioError) -> Scenario
        {
            let top = try reader.members(
                root, "(top level)",
                allowed: [
                    "description", "start", "days", "seed", "scheduler", "instances", "events", "stacks", "randomViews",
                ])
            let startText = try reader.requiredString(top["start"], "start")
            guard let startDate = try? Date.ISO8601FormatStyle().parse(startText) else {
                throw reader.fail("start", "\"\(startText)\" is not an ISO 8601 time like \"2026-11-23T08:00:00Z\"")
            }
            let start = startDate.timeIntervalSince1970
            // From 1970, and room before 9999 for the longest run and as long
            // again for the entries its last timelines give (a plugin's entry
            // dates must be in that range: out of it, every reload failed as
            // the plugin's "malformed result").
            guard Bounds.isTime(start), Bounds.isTime(start + Scenario.maximumDays * 86_400 * 2) else {
                throw reader.fail(
                    "start", "\"\(startText)\" is not between 1970-01-01 and 9997-12-31 (a scenario may run a year)")
            }
            let fileSeed = try reader.integer(top["seed"], "seed", in: 0...Int.max).map { UInt64($0) }
            let fileDays = try days(top["days"])
            let seed = overrideSeed ?? fileSeed
            let configuration = try SchedulerConfiguration(document: top["scheduler"], reader: reader)

            guard case .array(let instanceList)? = top["instances"], !instanceList.isEmpty else {
                throw reader.fail("instances", "required: a non-empty array of instances")
            }
            var instances: [Scenario.Instance] = []
            var seen: Set<String> = []
            var late: Set<String> = []
            var addEvents: [Scenario.Event] = []
            for (index, item) in instanceList.enumerated() {
                let field = "instances[\(index)]"
                let m = try reader.members(
                    item, field,
                    allowed: [
                        "id", "plugin", "kind", "family", "app", "configuration", "visible", "usesLocation", "timeout",
                        "addAt", "count",
                    ])
                let baseID = try reader.requiredString(m["id"], "\(field).id")
                let count = try reader.number(m["count"], "\(field).count") ?? 1
                guard count >= 1, count <= 1_000_000, count.rounded() == count else {
                    throw reader.fail(
                        "\(field).count", "expected a whole number of copies from 1 to 1000000, found \(count)")
                }
                // `"count": N` places N copies, "id-1" to "id-N".
                let copies = Int(count)
                let ids = copies == 1 ? [baseID] : (1...copies).map { "\(baseID)-\($0)" }
                for id in ids {
                    guard seen.insert(id).inserted else {
                        throw reader.fail("\(field).id", "\"\(id)\" is used twice; instance ids must be unique")
                    }
                }
                let familyName = try reader.string(m["family"], "\(field).family") ?? "systemSmall"
                guard let family = WidgetFamily(name: familyName) else {
                    throw reader.fail(
                        "\(field).family",
                        "unknown family \"\(familyName)\"; expected one of \(WidgetFamily.allCases.map(\.name).joined(separator: ", "))"
                    )
                }
                var configurationMembers: [String: String] = [:]
                if let value = m["configuration"] {
                    guard let list = value.objectMembers else {
                        throw reader.fail("\(field).configuration", "expected an object of parameter values")
                    }
                    for (name, member) in list { configurationMembers[name] = member.compactText(limit: .max) }
                }
                let instance = Scenario.Instance(
                    id: baseID, plugin: try reader.requiredString(m["plugin"], "\(field).plugin"),
                    kind: try reader.requiredString(m["kind"], "\(field).kind"), family: family,
                    app: try reader.string(m["app"], "\(field).app") ?? "app", configuration: configurationMembers,
                    visible: try reader.bool(m["visible"], "\(field).visible") ?? true,
                    usesLocation: try reader.bool(m["usesLocation"], "\(field).usesLocation") ?? false,
                    timeout: try reader.callTimeout(m["timeout"], "\(field).timeout"), field: field)
                let addAt = try m["addAt"].map { value throws(ScenarioError) in
                    try time(value, "\(field).addAt", start: start)
                }
                for id in ids {
                    var copy = instance
                    copy.id = id
                    instances.append(copy)
                    if let addAt {
                        late.insert(id)
                        addEvents.append(Scenario.Event(time: addAt, action: .add(id), label: "add \(id)"))
                    }
                }
            }
            let ids = Set(instances.map(\.id))
            var events = addEvents
            if case .array(let list)? = top["events"] {
                for (index, item) in list.enumerated() {
                    events.append(try event(item, "events[\(index)]", start: start, ids: ids))
                }
            } else if let value = top["events"] {
                throw reader.fail("events", "expected an array, found a \(value.typeName)")
            }
            if let value = top["randomViews"] {
                events += try randomViews(
                    value, start: start, days: overrideDays ?? fileDays, seed: seed ?? 1, ids: ids)
            }
            // Stable: events at the same time keep their file order.
            events = events.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(
                \.element)

            var stacks: [Scenario.Stack] = []
            if case .array(let list)? = top["stacks"] {
                for (index, item) in list.enumerated() {
                    let field = "stacks[\(index)]"
                    let m = try reader.members(item, field, allowed: ["name", "instances", "every"])
                    guard case .array(let members)? = m["instances"] else {
                        throw reader.fail("\(field).instances", "required: an array of instance ids")
                    }
                    var stackIDs: [String] = []
                    for (position, member) in members.enumerated() {
                        let id = try reader.requiredString(member, "\(field).instances[\(position)]")
                        guard ids.contains(id) else {
                            throw reader.fail("\(field).instances[\(position)]", "no instance \"\(id)\"")
                        }
                        stackIDs.append(id)
                    }
                    stacks.append(
                        Scenario.Stack(
                            name: try reader.string(m["name"], "\(field).name") ?? "stack \(index)",
                            instances: stackIDs,
                            every: try stackSampling(m["every"], "\(field).every")))
                }
            }
            return Scenario(
                file: reader.file, summary: try reader.string(top["description"], "description") ?? "", start: start,
                days: fileDays, seed: seed, configuration: configuration,
                instances: instances,
                lateInstances: late, events: events, stacks: stacks, reader: reader)
        }

        static let eventTypes = [
            "show", "hide", "appForeground", "appBackground", "sessionStart", "sessionEnd", "intent", "localeChanged",
            "accessibilityChanged", "timeZoneChanged", "locationChanged", "reloadTimelines", "reloadAllTimelines",
            "push", "remove",
        ]

        func event(_ value: JSONValue, _ field: String, start: Double, ids: Set<String>) throws(ScenarioError)
            -> Scenario.Event
        {
            let m = try reader.members(
                value, field, allowed: ["at", "type", "instance", "app", "kind", "plugin", "session"])
            let at = try time(m["at"], "\(field).at", start: start)
            let type = try reader.requiredString(m["type"], "\(field).type")
            func instance() throws(ScenarioError) -> String {
                let id = try reader.requiredString(m["instance"], "\(field).instance")
                guard ids.contains(id) else {
                    throw reader.fail("\(field).instance", "no instance \"\(id)\" in \"instances\"")
                }
                return id
            }
            func app() throws(ScenarioError) -> String { try reader.requiredString(m["app"], "\(field).app") }
            func session() throws(ScenarioError) -> SessionKind {
                let name = try reader.string(m["session"], "\(field).session") ?? "audio"
                guard let kind = SessionKind(rawValue: name) else {
                    throw reader.fail(
                        "\(field).session", "\"\(name)\" is not a session kind; expected audio or navigation")
                }
                return kind
            }
            let action: Scenario.Action
            switch type {
            case "show": action = .scheduler(.instanceShown(try instance()))
            case "hide": action = .scheduler(.instanceHidden(try instance()))
            case "appForeground": action = .scheduler(.appForeground(try app()))
            case "appBackground": action = .scheduler(.appBackground(try app()))
            case "sessionStart": action = .scheduler(.sessionStarted(app: try app(), kind: try session()))
            case "sessionEnd": action = .scheduler(.sessionEnded(app: try app(), kind: try session()))
            case "intent": action = .scheduler(.appIntent(instance: try instance()))
            case "localeChanged": action = .scheduler(.systemChange(.locale))
            case "accessibilityChanged": action = .scheduler(.systemChange(.accessibility))
            case "timeZoneChanged": action = .scheduler(.systemChange(.timeZone))
            case "locationChanged": action = .scheduler(.significantLocationChange)
            case "reloadTimelines":
                action = .scheduler(
                    .reloadTimelines(ofKind: try reader.requiredString(m["kind"], "\(field).kind"), app: try app()))
            case "reloadAllTimelines": action = .scheduler(.reloadAllTimelines(app: try app()))
            case "push":
                action = .scheduler(
                    .push(
                        kind: try reader.requiredString(m["kind"], "\(field).kind"),
                        plugin: try reader.string(m["plugin"], "\(field).plugin")))
            case "remove": action = .remove(try instance())
            default:
                throw reader.fail(
                    "\(field).type",
                    "unknown event \"\(type)\"; expected one of \(Self.eventTypes.joined(separator: ", "))")
            }
            var label = type
            for key in ["instance", "app", "kind", "plugin", "session"] {
                if case .string(let text)? = m[key] { label += " \(key)=\(text)" }
            }
            return Scenario.Event(time: at, action: action, label: label)
        }

        /// The file's `"days"`: more than 0 and at most ``Scenario/maximumDays``, as `--days`.
        func days(_ value: JSONValue?) throws(DocumentError) -> Double? {
            guard let days = try reader.number(value, "days") else { return nil }
            guard days > 0 && days <= Scenario.maximumDays else {
                throw reader.fail(
                    "days", "expected a number of days above 0 and at most \(Int(Scenario.maximumDays)), found \(days)")
            }
            return days
        }

        /// A stack's `"every"`: at least a second (default an hour).
        func stackSampling(_ value: JSONValue?, _ field: String) throws(DocumentError) -> Double {
            guard let every = try reader.duration(value, field) else { return 3600 }
            guard every >= 1 else {
                throw reader.fail(field, "expected a duration of at least 1 s (\"1s\", \"5m\"), found \(every) s")
            }
            return every
        }

        /// `"randomViews": [{"instance": "x", "perDay": 12, "duration": "5m"}]`:
        /// seeded show/hide pairs, the instances hidden in between.
        func randomViews(_ value: JSONValue, start: Double, days: Double?, seed: UInt64, ids: Set<String>)
            throws(ScenarioError) -> [Scenario.Event]
        {
            guard case .array(let list) = value else { throw reader.fail("randomViews", "expected an array") }
            var random = SplitMix64(seed: seed)
            var events: [Scenario.Event] = []
            let span = (days ?? 1) * 86_400
            for (index, item) in list.enumerated() {
                let field = "randomViews[\(index)]"
                let m = try reader.members(item, field, allowed: ["instance", "perDay", "duration"])
                let id = try reader.requiredString(m["instance"], "\(field).instance")
                guard ids.contains(id) else { throw reader.fail("\(field).instance", "no instance \"\(id)\"") }
                let perDay = try reader.number(m["perDay"], "\(field).perDay") ?? 12
                guard perDay >= 0, perDay <= 86_400 else {
                    throw reader.fail("\(field).perDay", "expected a number of views from 0 to 86400, found \(perDay)")
                }
                let length = try reader.duration(m["duration"], "\(field).duration") ?? 300
                let count = Int((perDay * span / 86_400).rounded())
                for _ in 0..<count {
                    let at = start + random.unit() * span
                    events.append(
                        Scenario.Event(
                            time: at, action: .scheduler(.instanceShown(id)), label: "show instance=\(id) (random)"))
                    events.append(
                        Scenario.Event(
                            time: at + length, action: .scheduler(.instanceHidden(id)),
                            label: "hide instance=\(id) (random)"))
                }
            }
            return events
        }
    }
}
