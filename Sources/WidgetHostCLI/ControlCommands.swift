import ArgumentParser
import WidgetHostControl
import WidgetHostModel
import WidgetHostStore

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `--socket` of the commands that talk to a running daemon.
struct SocketOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The daemon's control socket (default: $WIDGETHOST_SOCKET, else $XDG_RUNTIME_DIR/widgethost/control.sock).",
            valueName: "path"))
    var socket: String = ControlPaths.socket

    /// Sends one request; a refused request or an unreachable daemon ends the command with an error.
    func send(_ request: ControlRequest) throws -> ControlResponse {
        var client = try ControlClient.connect(to: socket)
        defer { client.close() }
        let response = try client.send(request)
        if let error = response.error {
            switch error.code {
            case .badArgument, .unknownInstance, .unknownKind, .unknownPlugin, .instanceExists, .configuredInstance,
                .badPushToken:
                throw UsageError(error.message + (error.field.map { " (field \($0))" } ?? ""))
            default:
                // Printed by WidgetHostCommand (text, and a document with --json).
                throw error
            }
        }
        return response
    }
}

/// `widgethost reload`: WidgetCenter's reloadTimelines(ofKind:) / reloadAllTimelines().
struct ReloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload",
        abstract: "Ask the daemon to reload the timelines of a kind, or of every kind.",
        discussion: """
            As WidgetCenter.reloadTimelines(ofKind:) and reloadAllTimelines() from an app:
            the reload is free while the app is in the foreground (or in an audio or
            navigation session), counted against each instance's budget otherwise. Without
            --app, every app's instances of the kind are reloaded.

            Examples:
              widgethost reload --kind com.example.character-detail --app emoji-rangers
              widgethost reload --all
            """)

    @Option(help: "The widget kind to reload.")
    var kind: String?

    @Flag(help: "Reload every kind.")
    var all = false

    @Option(help: "The app asking (its instances only).")
    var app: String?

    @OptionGroup var connection: SocketOption

    func validate() throws {
        if (kind == nil) == !all { throw ValidationError("give either --kind KIND or --all") }
    }

    @Flag(help: "Print JSON for machines: schemaVersion, scheduled (instance ids), message.")
    var json = false

    func run() throws {
        let response = try connection.send(ControlRequest(.reload, kind: kind, app: app))
        let ids = response.scheduled ?? []
        if json {
            print(JSONReport.encode(ChangeDocument(response)))
            return
        }
        if let message = response.message {
            print(message)
        } else if ids.isEmpty {
            print("no instance needed a new request (one is already pending)")
        } else {
            print("will reload: \(ids.joined(separator: ", "))")
        }
    }
}

extension ControlEvent: ExpressibleByArgument {}

/// `widgethost event`: something happened that the scheduler cares about.
struct EventCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "event",
        abstract: "Tell the daemon that something happened (app foreground, session, system change, intent).",
        discussion: """
            Events and their subject:
              app-foreground APP     APP's reload requests are free while it is in front
              app-background APP
              session-start APP      an audio or navigation session (--session); its
              session-end APP        reload requests are free meanwhile
              locale-changed, accessibility-changed, timezone-changed
                                     every instance reloads, free
              location-changed       instances that use location reload when next seen
              intent INSTANCE        a button or toggle in the instance ran an app
                                     intent: one free reload

            Examples:
              widgethost event app-foreground emoji-rangers
              widgethost event intent hero
              widgethost event locale-changed
            """)

    @Argument(help: "The event.")
    var event: ControlEvent

    @Argument(help: "The app (app and session events) or the instance (intent).")
    var subject: String?

    @Option(help: "The session kind of session-start / session-end: audio or navigation.")
    var session: String?

    @OptionGroup var connection: SocketOption

    func validate() throws {
        switch event.subject {
        case .app where subject == nil:
            throw ValidationError("\(event.rawValue) needs the app: widgethost event \(event.rawValue) APP")
        case .instance where subject == nil:
            throw ValidationError("intent needs the instance: widgethost event intent INSTANCE")
        case .none where subject != nil: throw ValidationError("\(event.rawValue) takes no argument")
        default: break
        }
        if session != nil && event != .sessionStart && event != .sessionEnd {
            throw ValidationError("--session applies to session-start and session-end only")
        }
    }

    func run() throws {
        let request = ControlRequest(
            .event, app: event.subject == .app ? subject : nil, instance: event.subject == .instance ? subject : nil,
            event: event, session: session)
        let response = try connection.send(request)
        print(json ? JSONReport.encode(ChangeDocument(response)) : response.message ?? "ok")
    }

    @Flag(help: "Print JSON for machines: schemaVersion, scheduled (instance ids), message.")
    var json = false
}

/// `widgethost view`: an instance became visible or hidden.
struct ViewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "view",
        abstract: "Tell the daemon an instance is now visible or hidden.",
        discussion: """
            Hidden instances get fewer reloads (their due reloads wait, and their budget
            tier drops); an instance that becomes visible with a due reload reloads at
            once.

            Example:
              widgethost view hero --hidden
            """)

    @Argument(help: "The instance id.")
    var instance: String

    @Flag(help: "The instance is on screen.")
    var visible = false

    @Flag(help: "The instance is off screen.")
    var hidden = false

    @OptionGroup var connection: SocketOption

    func validate() throws {
        if visible == hidden { throw ValidationError("give exactly one of --visible and --hidden") }
    }

    func run() throws {
        let response = try connection.send(ControlRequest(.view, instance: instance, visible: visible))
        print(json ? JSONReport.encode(ChangeDocument(response)) : response.message ?? "ok")
    }

    @Flag(help: "Print JSON for machines: schemaVersion, scheduled (instance ids), message.")
    var json = false
}

/// `widgethost status`.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show every plugin and instance of the running daemon.",
        discussion: """
            For each instance: plugin, kind, family, what it shows now, budget used and
            left in the rolling 24 h window, the next reload and why. For each plugin:
            loaded, failed (and why) or quarantined. --json prints the protocol's status
            object (docs/control-protocol.md).

            Examples:
              widgethost status
              widgethost status nyse --full
            """)

    @Argument(help: "Only these instances (default: every one).")
    var instances: [String] = []

    @Flag(help: "Show each displayed entry's whole content, not its first 80 characters.")
    var full = false

    @Flag(help: "Print JSON for machines (the protocol's status object, with schemaVersion).")
    var json = false

    @Flag(help: "Every instance, however many (by default: the first 1000, and the summary).")
    var all = false

    @OptionGroup var connection: SocketOption

    func run() throws {
        // Pages of at most 1000 instances (docs/control-protocol.md), fetched
        // until done with --all or named instances, else the first page.
        var request = ControlRequest(.status)
        request.instances = instances.isEmpty ? nil : instances
        guard var status = try connection.send(request).status else {
            throw ControlSocketError.malformedResponse("an answer to status with no status member")
        }
        while all || !instances.isEmpty, let cursor = status.nextCursor {
            request.after = cursor
            guard let page = try connection.send(request).status else {
                throw ControlSocketError.malformedResponse("an answer to status with no status member")
            }
            status.instances += page.instances
            status.nextCursor = page.nextCursor
        }
        if json {
            print(JSONReport.encode(Versioned(status)))
        } else {
            print(DaemonReport.status(status, full: full))
        }
    }
}

/// `widgethost explain`.
struct ExplainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Explain why an instance has or has not reloaded: policy, budget, spacing, backoff, with exact times."
    )

    @Argument(help: "The instance id.")
    var instance: String

    @Flag(help: "Print JSON for machines.")
    var json = false

    @OptionGroup var connection: SocketOption

    func run() throws {
        guard let explanation = try connection.send(ControlRequest(.explain, instance: instance)).explanation else {
            throw ControlSocketError.malformedResponse("an answer to explain with no explanation member")
        }
        print(json ? JSONReport.encode(explanation) : explanation.text)
    }
}

/// `widgethost configurations`: WidgetCenter's getCurrentConfigurations.
struct ConfigurationsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "configurations",
        abstract: "List the placed widget instances (WidgetCenter's getCurrentConfigurations).")

    @Option(help: "Only this app's instances.")
    var app: String?

    @Flag(help: "Print JSON for machines.")
    var json = false

    @OptionGroup var connection: SocketOption

    func run() throws {
        let list = try connection.send(ControlRequest(.configurations, app: app)).configurations ?? []
        if json {
            print(JSONReport.encode(list))
            return
        }
        if list.isEmpty { print("no instances") }
        for item in list {
            print(
                "\(item.id)  \(item.kind)  \(item.family)  app=\(item.app)  plugin=\(item.plugin)  \(item.configuration)"
            )
        }
    }
}

/// `widgethost unquarantine`.
struct UnquarantineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unquarantine",
        abstract: "Clear the quarantine of a plugin that crashed too often.",
        discussion: """
            Through the running daemon (which loads the plugin again at once), or, with
            --state, directly in a state database while no daemon runs. A plugin whose
            file changes is released from quarantine by itself.

            Examples:
              widgethost unquarantine /opt/widgets/libflaky.so
              widgethost unquarantine /opt/widgets/libflaky.so --state ~/.local/state/widgethost/state.sqlite
            """)

    @Argument(help: "The plugin file (or its configured name).")
    var plugin: String

    @Option(help: ArgumentHelp("Edit this state database directly instead of asking the daemon.", valueName: "path"))
    var state: String?

    @OptionGroup var connection: SocketOption

    func run() throws {
        guard let state else {
            print(try connection.send(ControlRequest(.unquarantine, path: plugin)).message ?? "ok")
            return
        }
        let path = plugin.hasPrefix("/") ? plugin : IsolatedRunnerPath.absolute(plugin)
        // An existing database only: opening creates one (and its directories).
        var info = stat()
        guard stat(state, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > 0 else {
            throw UsageError(
                "--state \(state) is not a state database (no such file, or not a regular non-empty file); name the file the daemon runs with (`widgethost run --state`)"
            )
        }
        do {
            let store = try StateStore(path: state)
            guard try store.unquarantine(path: path, at: Date().timeIntervalSince1970) else {
                throw UsageError("\(path) is not quarantined in \(state)")
            }
            print("\(path) is no longer quarantined")
        } catch let error as UsageError {
            throw error
        } catch {
            throw UsageError("\(state): \(error)")
        }
    }
}

/// `--json` of `reload`, `event` and `view`: what the daemon scheduled.
struct ChangeDocument: Encodable {
    var schemaVersion = JSONReport.schemaVersion
    /// The instances that got a reload request.
    var scheduled: [String]
    var message: String?

    init(_ response: ControlResponse) {
        scheduled = response.scheduled ?? []
        message = response.message
    }
}

/// A document with `schemaVersion` beside its own fields (`status --json`).
struct Versioned<Document: Encodable>: Encodable {
    let document: Document
    init(_ document: Document) { self.document = document }

    private enum Keys: String, CodingKey { case schemaVersion }

    func encode(to encoder: any Encoder) throws {
        try document.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(JSONReport.schemaVersion, forKey: .schemaVersion)
    }
}
