import ArgumentParser
import WidgetHostControl
import WidgetHostModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// The widget fields `add` and `update` share.
struct WidgetOptions: ParsableArguments {
    @Option(help: "The widget kind.")
    var kind: String?

    @Option(help: "The family (systemSmall, systemMedium, systemLarge, accessoryCircular, ...).")
    var family: String?

    @Option(help: "The containing app (its foreground and sessions make reloads free).")
    var app: String?

    @Option(
        name: .customLong("param"),
        help: ArgumentHelp(
            "A parameter value, NAME=VALUE (VALUE as JSON if it is JSON, else a string); repeatable.",
            valueName: "name=value"))
    var parameters: [String] = []

    @Option(name: .customLong("config"), help: "Every parameter value, as a JSON object.")
    var configuration: String?

    @Option(help: "The timeline call's timeout in seconds.")
    var timeout: Double?

    /// `--config` and `--param`, merged (`--param` wins), or nil when neither is given.
    func configurationValue() throws -> JSONValue? {
        guard configuration != nil || !parameters.isEmpty else { return nil }
        var members: [String: JSONValue] = [:]
        for (name, text) in try parseConfiguration(configuration) {
            members[name] = (try? JSONValue.parse(text)) ?? .string(text)
        }
        for parameter in parameters {
            guard let equals = parameter.firstIndex(of: "="), equals != parameter.startIndex else {
                throw ValidationError("--param takes NAME=VALUE, got \"\(parameter)\"")
            }
            let text = String(parameter[parameter.index(after: equals)...])
            members[String(parameter[..<equals])] = (try? JSONValue.parse(text)) ?? .string(text)
        }
        return .object(members.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    func validate() throws {
        if let timeout, !Bounds.isCallTimeout(timeout) {
            throw ValidationError("--timeout must be \(Bounds.callTimeoutRange), got \(timeout)")
        }
    }
}

/// `widgethost add`: places a widget at run time (`instances.add`).
struct AddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Place a widget on the running daemon (kept across restarts).",
        discussion: """
            As a user placing a widget: it gets its first timeline at once, free
            (reason instanceAdded). It is stored in the daemon's state, beside the
            configuration file's instances (`status` says which came from where). A
            kind, family or parameter the plugin does not have is refused, naming it.

            Examples:
              widgethost add desk --plugin countdown --kind com.widgethost.countdown --app calendar
              widgethost add hero --plugin character --kind com.widgethost.character-detail \\
                  --family systemMedium --param character=Panda
            """)

    @Argument(help: "The new instance's id.")
    var id: String

    @Option(help: "The plugin, by its name in the configuration file.")
    var plugin: String

    @OptionGroup var widget: WidgetOptions

    @Flag(help: "Place it hidden (off screen).")
    var hidden = false

    @Flag(help: "Print JSON for machines: the instance in full (as `show --json`).")
    var json = false

    @OptionGroup var connection: SocketOption

    func validate() throws {
        if widget.kind == nil { throw ValidationError("--kind is required") }
    }

    func run() throws {
        var request = ControlRequest(.instancesAdd)
        request.widget = InstanceSpec(
            id: id, plugin: plugin, kind: widget.kind, family: widget.family, app: widget.app ?? "default",
            configuration: try widget.configurationValue(), visible: !hidden, timeout: widget.timeout)
        let response = try connection.send(request)
        if json, let instance = response.instance {
            print(JSONReport.encode(Versioned(instance)))
        } else {
            print(response.message ?? "placed \(id)")
        }
    }
}

/// `widgethost update`: changes a widget placed at run time (`instances.update`).
struct UpdateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Change a widget placed with `widgethost add`.",
        discussion: """
            The options given replace the widget's; a new kind, family, app or
            configuration gets one free reload, as a reconfigured widget does (its
            budget used stays). Instances of the configuration file are changed by
            editing the file and sending SIGHUP.

            Examples:
              widgethost update hero --param character=Spouty
              widgethost update desk --hidden
            """)

    @Argument(help: "The instance id.")
    var id: String

    @Option(help: "Another plugin, by its name in the configuration file.")
    var plugin: String?

    @OptionGroup var widget: WidgetOptions

    @Flag(help: "The widget is on screen.")
    var visible = false

    @Flag(help: "The widget is off screen.")
    var hidden = false

    @Flag(help: "Print JSON for machines: the instance in full (as `show --json`).")
    var json = false

    @OptionGroup var connection: SocketOption

    func validate() throws {
        if visible && hidden { throw ValidationError("give at most one of --visible and --hidden") }
    }

    func run() throws {
        var request = ControlRequest(.instancesUpdate)
        request.widget = InstanceSpec(
            id: id, plugin: plugin, kind: widget.kind, family: widget.family, app: widget.app,
            configuration: try widget.configurationValue(), visible: visible ? true : hidden ? false : nil,
            timeout: widget.timeout)
        let response = try connection.send(request)
        if json, let instance = response.instance {
            print(JSONReport.encode(Versioned(instance)))
        } else {
            print(response.message ?? "changed \(id)")
        }
    }
}

/// `widgethost remove`: removes a widget placed at run time (`instances.remove`).
struct RemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove a widget placed with `widgethost add`.",
        discussion: """
            The widget and everything the daemon knew of it (timeline, budget) are
            removed. Instances of the configuration file are removed by editing the
            file and sending SIGHUP.

            Example:
              widgethost remove desk
            """)

    @Argument(help: "The instance id.")
    var id: String

    @Flag(help: "Print JSON for machines: schemaVersion, scheduled (empty), message.")
    var json = false

    @OptionGroup var connection: SocketOption

    func run() throws {
        let response = try connection.send(ControlRequest(.instancesRemove, instance: id))
        print(json ? JSONReport.encode(ChangeDocument(response)) : response.message ?? "removed \(id)")
    }
}

/// `widgethost show`: one instance in full (`instance`).
struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show one instance in full: its entry, dates, policy, budget, last outcome, relevance.",
        discussion: """
            The displayed entry's content (as JSON), its date and the next entry's, the
            reload policy and the next planned reload with its reason, the budget used
            and allowed in the rolling window, the last reload's outcome, the relevance
            score in force and the instance's place in its stack.

            Example:
              widgethost show desk --json
            """)

    @Argument(help: "The instance id.")
    var id: String

    @Flag(help: "Print JSON for machines (the protocol's instance object, with schemaVersion).")
    var json = false

    @OptionGroup var connection: SocketOption

    func run() throws {
        guard let detail = try connection.send(ControlRequest(.instance, instance: id)).instance else {
            throw ExitCode(1)
        }
        print(json ? JSONReport.encode(Versioned(detail)) : DaemonReport.instance(detail, now: wallClockNow()))
    }
}

/// `widgethost watch`: the daemon's events as they happen (`watch`).
struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Follow the daemon's events: reloads, timelines, entries, instances, plugins.",
        discussion: """
            Each event has an id; --after ID resumes after the last one seen (what
            happened meanwhile is replayed from the state database, as far as it is
            kept: the newest 10,000 events, 7 days). When some were no longer kept a
            "gap" line says so (to standard error; with --json as a line of type
            "gap"): take a fresh `widgethost status`.

            --json prints one JSON object per line (docs/control-protocol.md).

            Examples:
              widgethost watch
              widgethost watch desk --json
              widgethost watch --after 1200 --count 10
            """)

    @Argument(help: "Only these instances' events (default: every event).")
    var instances: [String] = []

    @Option(help: ArgumentHelp("Resume after this event id.", valueName: "id"))
    var after: Int64?

    @Option(help: "Stop after this many events.")
    var count: Int?

    @Flag(help: "Print one JSON object per line.")
    var json = false

    @OptionGroup var connection: SocketOption

    func validate() throws {
        if let after, after < 0 { throw ValidationError("--after must be 0 or more, got \(after)") }
        if let count, count < 1 { throw ValidationError("--count must be 1 or more, got \(count)") }
    }

    func run() throws {
        // Errors go up to WidgetHostCommand, which prints them (and, with
        // --json, one error line that ends the stream).
        var client = try ControlClient.connect(to: connection.socket)
        defer { client.close() }
        let start = try client.watch(after: after, instances: instances.isEmpty ? nil : instances)
        if let error = start.error {
            switch error.code {
            case .badArgument, .unknownOperation:
                throw UsageError(error.message + (error.field.map { " (field \($0))" } ?? ""))
            default:
                throw error
            }
        }
        if let gap = start.watch?.gap {
            FileHandleOutput.standardError("gap: \(gap.message)\n")
            if json { print(JSONReport.line(GapLine(gap))) }
        }
        var seen = 0
        while count.map({ seen < $0 }) ?? true {
            guard let line = try client.nextLine() else { throw ControlSocketError.closed }
            if let error = line.error { throw error }
            guard let event = line.event else { continue }
            seen += 1
            print(json ? JSONReport.line(event) : DaemonReport.event(event))
            fflush(nil)  // each event as it comes, also into a pipe
        }
    }

    /// The `--json` line of a gap.
    struct GapLine: Encodable {
        var type = "gap"
        var after: Int64
        var reason: String
        var message: String
        init(_ gap: WatchGap) {
            after = gap.after
            reason = gap.reason
            message = gap.message
        }
    }
}

extension JSONReport {
    /// One compact JSON line (JSON lines output).
    static func line(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}

extension DaemonReport {
    /// One event, for people: `#42 12:00:01 reload desk: ...`.
    static func event(_ event: WatchEvent) -> String {
        var parts = ["#\(event.id)", Timestamp.iso8601(event.time), event.type]
        if let instance = event.instance { parts.append(TerminalText.escaped(instance)) }
        var facts: [String] = []
        if let d = event.details {
            if let reason = d.reason { facts.append("reason=\(reason)") }
            if let counted = d.counted { facts.append(counted ? "counted" : "free") }
            if let used = d.budgetUsed, let allowance = d.budgetAllowance {
                facts.append("budget=\(used)/\(allowance)")
            }
            if let outcome = d.outcome { facts.append("outcome=\(TerminalText.escaped(outcome))") }
            if let entries = d.entries { facts.append("entries=\(entries)") }
            if let date = d.entryDate { facts.append("entry=\(Timestamp.iso8601(date))") }
            if let next = d.nextEntryDate { facts.append("next-entry=\(Timestamp.iso8601(next))") }
            if let relevance = d.relevance, relevance != 0 { facts.append("relevance=\(relevance)") }
        }
        let message = facts.isEmpty ? TerminalText.escaped(event.message) : facts.joined(separator: " ")
        return parts.joined(separator: " ") + ": " + message
    }

    /// One instance in full, for people (`widgethost show`).
    static func instance(_ d: InstanceDetail, now: Double) -> String {
        func at(_ time: Double) -> String { "\(Timestamp.iso8601(time)) (\(Timestamp.relative(time, to: now)))" }
        var lines = [
            "\(TerminalText.escaped(d.id))  \(TerminalText.escaped(d.kind))  \(d.family)  app=\(TerminalText.escaped(d.app))  plugin=\(TerminalText.escaped(d.plugin))  (from the \(d.origin == "runtime" ? "runtime: widgethost add" : "configuration file"))",
            "  configuration: \(TerminalText.escaped(d.configuration.compactText(limit: 400)))",
            "  visible: \(d.visible ? "yes" : "no")",
        ]
        if let content = d.content, let date = d.entryDate {
            lines.append("  entry of \(at(date)): \(TerminalText.escaped(content.compactText(limit: 2000)))")
        } else {
            lines.append("  no timeline yet")
        }
        lines.append(
            "  next entry: \(d.nextEntryDate.map(at) ?? "none (the last entry shows)")  (\(d.entries) entries)")
        lines.append("  policy: \(d.policy ?? "-")\(d.policyDue.map { ", due \(at($0))" } ?? "")")
        lines.append("  next reload: \(d.nextReload.map(at) ?? "none planned")\(d.nextReason.map { ", \($0)" } ?? "")")
        lines.append(
            "  budget: \(d.budgetUsed)/\(d.budgetAllowance) counted reloads in the last \(Timestamp.duration(d.budgetWindow)) (tier \(d.tier))"
        )
        lines.append(
            "  last reload: \(d.lastReload.map(at) ?? "never")\(d.lastOutcome.map { ", \(TerminalText.escaped($0))" } ?? "")\(d.consecutiveFailures > 0 ? " (\(d.consecutiveFailures) failures in a row)" : "")\(d.inFlight ? "; reloading now" : "")"
        )
        var relevance = "  relevance: \(d.relevance)"
        if let own = d.entryRelevance {
            relevance +=
                " (entry: score \(own.score), \(own.duration > 0 ? "for \(Timestamp.duration(own.duration))" : "while displayed"))"
        }
        lines.append(relevance + "; \(d.stackRank) of \(d.stackSize) in the \(d.family) stack")
        if let unavailable = d.unavailable { lines.append("  UNAVAILABLE: \(TerminalText.escaped(unavailable))") }
        return lines.joined(separator: "\n")
    }
}

/// `widgethost push`: a push update for a kind (`push`).
struct PushCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Send a push update for a kind: its instances reload with reason push.",
        discussion: """
            As a widget push notification: with the kind's push token (`widgethost
            status` shows each kind's), every instance of the kind reloads at once,
            free for its timeline budget, counted against its push budget; a push over
            that budget is deferred, never dropped (the message says until when).

            Example:
              widgethost push com.widgethost.countdown --token 3f9c...
            """)

    @Argument(help: "The widget kind.")
    var kind: String

    @Option(help: "The kind's push token.")
    var token: String

    @Flag(help: "Print JSON for machines: schemaVersion, scheduled (instance ids), message.")
    var json = false

    @OptionGroup var connection: SocketOption

    func run() throws {
        var request = ControlRequest(.push, kind: kind)
        request.pushToken = token
        let response = try connection.send(request)
        print(json ? JSONReport.encode(ChangeDocument(response)) : response.message ?? "ok")
    }
}
