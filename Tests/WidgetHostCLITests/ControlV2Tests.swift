import Foundation
import Testing
import WidgetHostControl
import WidgetHostModel

/// Control protocol v2 against a real daemon: watch (resume, gap, a reader
/// that never reads), runtime instances (add, update, remove, restart,
/// SIGHUP), instance, v1 clients, and the CLI verbs' exit codes.
@Suite("Control protocol v2", .serialized)
struct ControlV2Tests {
    /// One quiet instance (a countdown: 73 entries, a policy hours away).
    static let quiet = """
        {
          "plugins": [{ "name": "character", "path": "@BUILD@/libCharacterPlugin.so" },
                      { "name": "countdown", "path": "@BUILD@/libCountdownPlugin.so" }],
          "scheduler": { "minimumReloadInterval": 0, "maximumJitter": 0, "coalescingCap": 0 },
          "instances": [
            { "id": "new-year", "plugin": "countdown", "kind": "com.widgethost.countdown", "app": "com.example.calendar" }
          ]
        }
        """

    static func desk(_ id: String = "desk", kind: String = "com.widgethost.character-detail") -> InstanceSpec {
        InstanceSpec(
            id: id, plugin: "character", kind: kind, family: "systemSmall", app: "com.example.game",
            configuration: .object([("character", .string("Power Panda"))]))
    }

    func add(_ daemon: DaemonProcess, _ spec: InstanceSpec) throws -> ControlResponse {
        var request = ControlRequest(.instancesAdd)
        request.widget = spec
        return try daemon.send(request)
    }

    func detail(_ daemon: DaemonProcess, _ id: String) throws -> InstanceDetail? {
        try daemon.send(ControlRequest(.instance, instance: id)).instance
    }

    /// Reads a watch until `stop` says so (bounded by `timeout` seconds).
    func collect(
        _ daemon: DaemonProcess, after: Int64?, timeout: Double = 30, until stop: ([WatchEvent]) -> Bool
    ) throws -> (start: WatchStart?, events: [WatchEvent]) {
        var client = try ControlClient.connect(to: daemon.socket)
        defer { client.close() }
        let first = try client.watch(after: after)
        #expect(first.ok, "\(String(describing: first.error))")
        var events: [WatchEvent] = []
        let deadline = Date().addingTimeInterval(timeout)
        while !stop(events) && Date() < deadline {
            guard let line = try client.nextLine() else { break }
            if let event = line.event { events.append(event) }
        }
        return (first.watch, events)
    }

    @Test func placedWidgetIsAFreeReloadKeptAcrossRestarts() throws {
        let daemon = try DaemonProcess("v2-add", configuration: Self.quiet)
        try daemon.start()
        let added = try add(daemon, Self.desk())
        #expect(added.ok, "\(String(describing: added.error))")
        #expect(added.scheduled == ["desk"])
        #expect(added.instance?.origin == "runtime")
        try waitUntil("desk has its first timeline") { try detail(daemon, "desk")?.lastOutcome == "ok" }
        let shown = try #require(try detail(daemon, "desk"))
        // The content is an object, not a string; the reload was free.
        #expect(shown.content?.isObject == true)
        #expect(shown.content?.objectMembers?.contains { $0.0 == "character" } == true)
        #expect(shown.entryDate != nil)
        #expect(shown.budgetUsed == 0)
        #expect(shown.budgetAllowance > 0)
        #expect(shown.configuration.objectMembers?.first { $0.0 == "character" }?.1 == .string("Power Panda"))
        let origins = Dictionary(uniqueKeysWithValues: try daemon.status().instances.map { ($0.id, $0.origin) })
        #expect(origins == ["new-year": "configuration", "desk": "runtime"])
        // The reload's event says why and that it was free.
        let seen = try collect(daemon, after: 0) { events in
            events.contains { $0.type == "timeline" && $0.instance == "desk" }
        }
        let reload = try #require(seen.events.first { $0.type == "reload" && $0.instance == "desk" })
        #expect(reload.details?.reason == "instanceAdded")
        #expect(reload.details?.counted == false)
        #expect(
            seen.events.contains {
                $0.type == "instance-added" && $0.instance == "desk" && $0.details?.origin == "runtime"
            })

        daemon.stop()
        try daemon.start()
        let after = try #require(try detail(daemon, "desk"))
        #expect(after.origin == "runtime")
        #expect(after.lastOutcome == "ok")
        // Kept, not placed again: no second free reload at the restart.
        #expect(after.lastReload == shown.lastReload)
        daemon.stop()
    }

    /// The apps and kinds in use are counted again when an instance is
    /// placed or removed at run time: a `reload` of every app reaches an app
    /// whose only instance was placed after the counts were made (it was
    /// left out until a restart or a SIGHUP).
    @Test func aReloadOfEveryAppReachesAnAppPlacedAtRunTime() throws {
        let daemon = try DaemonProcess("v2-apps", configuration: Self.quiet)
        try daemon.start()
        var reload = ControlRequest(.reload)
        reload.kind = "com.widgethost.character-detail"
        // Counts the apps and kinds in use: only the calendar's countdown.
        let before = try daemon.send(reload)
        #expect(before.ok, "\(String(describing: before.error))")
        #expect(before.scheduled ?? [] == [])
        #expect(try add(daemon, Self.desk()).ok)
        try waitUntil("desk has its first timeline") { try detail(daemon, "desk")?.lastOutcome == "ok" }
        let after = try daemon.send(reload)
        #expect(after.ok, "\(String(describing: after.error))")
        #expect(after.scheduled == ["desk"], "\(String(describing: after.message))")
        var remove = ControlRequest(.instancesRemove)
        remove.instance = "desk"
        #expect(try daemon.send(remove).ok)
        let removed = try daemon.send(reload)
        #expect(removed.scheduled ?? [] == [])
        #expect(removed.message?.contains("no instance of kind") == true, "\(String(describing: removed.message))")
        daemon.stop()
    }

    @Test func updateAndRemoveOnlyRuntimeInstances() throws {
        let daemon = try DaemonProcess("v2-update", configuration: Self.quiet)
        try daemon.start()
        #expect(try add(daemon, Self.desk()).ok)
        try waitUntil("desk has its first timeline") { try detail(daemon, "desk")?.lastOutcome == "ok" }
        var request = ControlRequest(.instancesUpdate)
        request.widget = InstanceSpec(id: "desk", configuration: .object([("character", .string("Spouty"))]))
        let updated = try daemon.send(request)
        #expect(updated.ok, "\(String(describing: updated.error))")
        #expect(updated.scheduled == ["desk"])
        try waitUntil("desk shows Spouty") {
            try detail(daemon, "desk")?.content?.compactText(limit: .max).contains("Spouty") == true
        }
        // Hiding is an update too, without a reload.
        request.widget = InstanceSpec(id: "desk", visible: false)
        let hidden = try daemon.send(request)
        #expect(hidden.ok && hidden.scheduled == [] && hidden.instance?.visible == false)
        // The configuration file's instances are the file's.
        request.widget = InstanceSpec(id: "new-year", visible: false)
        let refused = try daemon.send(request)
        #expect(refused.error?.code == .configuredInstance)
        #expect(refused.error?.message.contains("host.json") == true)
        let refusedRemove = try daemon.send(ControlRequest(.instancesRemove, instance: "new-year"))
        #expect(refusedRemove.error?.code == .configuredInstance)

        #expect(try daemon.send(ControlRequest(.instancesRemove, instance: "desk")).ok)
        #expect(try daemon.send(ControlRequest(.instance, instance: "desk")).error?.code == .unknownInstance)
        daemon.stop()
        try daemon.start()
        #expect(try daemon.status().instances.map(\.id) == ["new-year"])
        daemon.stop()
    }

    @Test func badWidgetsAreRefusedNamingTheField() throws {
        let daemon = try DaemonProcess("v2-bad", configuration: Self.quiet)
        try daemon.start()
        func refusal(_ spec: InstanceSpec) throws -> ControlErrorBody? { try add(daemon, spec).error }
        var spec = Self.desk()
        spec.kind = "no.such.kind"
        #expect(try refusal(spec).map { "\($0.code.rawValue) \($0.field ?? "")" } == "unknown-kind widget.kind")
        spec = Self.desk()
        spec.family = "systemHuge"
        #expect(try refusal(spec)?.field == "widget.family")
        spec.family = "accessoryInline"  // a family the kind does not support
        #expect(try refusal(spec)?.field == "widget.family")
        spec = Self.desk()
        spec.configuration = .object([("character", .number(3))])
        #expect(try refusal(spec)?.field == "widget.configuration.character")
        spec.configuration = .object([("bogus", .number(1))])
        #expect(try refusal(spec)?.field == "widget.configuration.bogus")
        spec.configuration = .array([])
        #expect(try refusal(spec)?.field == "widget.configuration")
        spec = Self.desk()
        spec.plugin = "nope"
        #expect(try refusal(spec).map { "\($0.code.rawValue) \($0.field ?? "")" } == "unknown-plugin widget.plugin")
        spec = Self.desk()
        spec.timeout = 1e300
        #expect(try refusal(spec)?.field == "widget.timeout")
        spec.timeout = -1
        #expect(try refusal(spec)?.field == "widget.timeout")
        spec = Self.desk("new-year")
        #expect(try refusal(spec)?.code == .instanceExists)
        spec = Self.desk("")
        #expect(try refusal(spec)?.field == "widget.id")
        // A request number out of range, and one that is not an integer.
        var watch = ControlRequest(.watch)
        watch.lastEventId = -4
        #expect(try daemon.send(watch).error?.field == "lastEventId")
        var socket = try LineSocket.connect(to: daemon.socket)
        defer { socket.close() }
        try socket.write(Array(#"{"v":2,"id":1,"op":"watch","lastEventId":1.5}"#.utf8) + [10])
        let line = try #require(try socket.readLine())
        #expect(try ControlCoding.decode(ControlResponse.self, from: line).error?.code == .badRequest)
        // Nothing was placed.
        #expect(try daemon.status().instances.map(\.id) == ["new-year"])
        daemon.stop()
    }

    @Test func watchResumesAfterTheLastIdAcrossRestarts() throws {
        let daemon = try DaemonProcess("v2-resume", configuration: Self.quiet)
        try daemon.start()
        let first = try collect(daemon, after: 0) { $0.contains { $0.type == "timeline" } }
        let ids = first.events.map(\.id)
        #expect(ids.first == 1)
        #expect(ids == Array(1...(ids.last ?? 0)), "ids are contiguous: \(ids)")
        let last = try #require(ids.last)
        daemon.stop()
        try daemon.start()
        // Reconnecting with the last id seen: the stop, the restart, and on, with no gap.
        let resumed = try collect(daemon, after: last) { $0.contains { $0.type == "start" } }
        #expect(resumed.start?.gap == nil)
        #expect(resumed.events.first?.id == last + 1)
        #expect(resumed.events.map(\.type).prefix(2) == ["stop", "start"] || resumed.events.first?.type == "stop")
        // An id from another state file is a gap, said so.
        let stranger = try collect(daemon, after: 1_000_000, timeout: 0) { _ in true }
        #expect(stranger.start?.gap?.reason == "unknown")
        daemon.stop()
    }

    @Test func sighupCollisionTheFileWins() throws {
        let daemon = try DaemonProcess("v2-sighup", configuration: Self.quiet)
        try daemon.start()
        #expect(try add(daemon, Self.desk()).ok)
        let withDesk = Self.quiet.replacingOccurrences(
            of: #"{ "id": "new-year","#,
            with:
                #"{ "id": "desk", "plugin": "countdown", "kind": "com.widgethost.countdown", "app": "x" }, { "id": "new-year","#
        ).replacingOccurrences(of: "@BUILD@", with: CLI.buildDirectory)
        try withDesk.write(toFile: daemon.config, atomically: true, encoding: .utf8)
        kill(try #require(daemon.process).processIdentifier, SIGHUP)
        try waitUntil("desk comes from the file") { try detail(daemon, "desk")?.origin == "configuration" }
        #expect(try detail(daemon, "desk")?.kind == "com.widgethost.countdown")
        // The runtime placement is gone for good: without the file's desk, no desk.
        try Self.quiet.replacingOccurrences(of: "@BUILD@", with: CLI.buildDirectory)
            .write(toFile: daemon.config, atomically: true, encoding: .utf8)
        daemon.stop()
        try daemon.start()
        #expect(try daemon.status().instances.map(\.id) == ["new-year"])
        daemon.stop()
    }

    @Test func versionOneClientsKeepWorking() throws {
        let daemon = try DaemonProcess("v2-v1", configuration: Self.quiet)
        try daemon.start()
        var socket = try LineSocket.connect(to: daemon.socket)
        defer { socket.close() }
        func ask(_ line: String) throws -> [String: Any] {
            try socket.write(Array(line.utf8) + [10])
            let answer = try #require(try socket.readLine())
            return try #require(try JSONSerialization.jsonObject(with: Data(answer)) as? [String: Any])
        }
        let hello = try ask(#"{"v":1,"id":1,"op":"hello"}"#)
        #expect(hello["v"] as? Int == 1)
        #expect((hello["server"] as? [String: Any])?["protocolVersions"] as? [Int] == [1, 2])
        let status = try ask(#"{"v":1,"id":2,"op":"status"}"#)
        #expect(status["ok"] as? Bool == true)
        let watch = try ask(#"{"v":1,"id":3,"op":"watch"}"#)
        #expect((watch["error"] as? [String: Any])?["code"] as? String == "unknown-operation")
        #expect(((watch["error"] as? [String: Any])?["message"] as? String)?.contains("version 2") == true)
        let future = try ask(#"{"v":3,"id":4,"op":"hello"}"#)
        #expect((future["error"] as? [String: Any])?["code"] as? String == "unsupported-version")
        daemon.stop()
    }

    /// A watcher that never reads: the daemon goes on reloading and answering,
    /// and drops it (its output stalls) instead of buffering without end.
    @Test func aWatcherThatNeverReadsDoesNotSlowTheDaemon() throws {
        let daemon = try DaemonProcess("v2-slow", configuration: busyConfiguration)
        try daemon.start()
        let socket = try LineSocket.connect(to: daemon.socket)
        defer { socket.close() }
        var small: Int32 = 4096
        setsockopt(socket.descriptor.rawValue, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        try socket.write(Array(#"{"v":2,"id":1,"op":"watch","lastEventId":0}"#.utf8) + [10])
        let started = Date()
        var lastCount = 0
        try waitUntil("the daemon drops the watcher that does not read", timeout: 60) {
            // Meanwhile requests are answered and the busy instance keeps reloading.
            let status = try daemon.status()
            let count = daemon.reloadLines("board").count
            #expect(status.instances.count == 3)
            #expect(count >= lastCount)
            lastCount = count
            return daemon.logText.contains("dropped the control client")
                || daemon.logText.contains("ended the watch of the control client")
        }
        let reloads = daemon.reloadLines("board").count
        try waitUntil("reloads go on after the drop") { daemon.reloadLines("board").count > reloads + 10 }
        #expect(Date().timeIntervalSince(started) < 60)
        daemon.stop()
    }

    @Test func cliVerbsAndTheirExitCodes() throws {
        let daemon = try DaemonProcess("v2-cli", configuration: Self.quiet)
        try daemon.start()
        let socket = ["--socket", daemon.socket]
        let add = try CLI.run(
            [
                "add", "desk", "--plugin", "character", "--kind", "com.widgethost.character-detail", "--param",
                "character=Power Panda", "--app", "game", "--json",
            ] + socket)
        #expect(add.status == 0, "\(add.stderr)")
        #expect(try CLI.json(add.stdout)["origin"] as? String == "runtime")
        let bad = try CLI.run(["add", "x", "--plugin", "character", "--kind", "nope"] + socket)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("widget.kind"))
        try waitUntil("desk has a timeline") { try detail(daemon, "desk")?.lastOutcome == "ok" }
        let show = try CLI.run(["show", "desk", "--json"] + socket)
        #expect(show.status == 0)
        #expect((try CLI.json(show.stdout)["content"] as? [String: Any])?["character"] != nil)
        let text = try CLI.run(["show", "desk"] + socket)
        #expect(text.stdout.contains("runtime") && text.stdout.contains("budget: 0/"))
        #expect(try CLI.run(["show", "nope"] + socket).status == 2)
        let watch = try CLI.run(["watch", "--after", "0", "--count", "3", "--json"] + socket)
        #expect(watch.status == 0)
        let lines = watch.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(try lines.map { try CLI.json(String($0))["id"] as? Int } == [1, 2, 3])
        #expect(try CLI.run(["update", "desk", "--hidden"] + socket).status == 0)
        #expect(try CLI.run(["update", "new-year", "--hidden"] + socket).status == 2)
        #expect(try CLI.run(["remove", "new-year"] + socket).status == 2)
        #expect(try CLI.run(["remove", "desk", "--json"] + socket).status == 0)
        #expect(try CLI.run(["remove", "desk"] + socket).status == 2)
        daemon.stop()
        // No daemon: 1, as the other verbs.
        #expect(try CLI.run(["watch", "--count", "1"] + socket).status == 1)
        #expect(try CLI.run(["show", "desk"] + socket).status == 1)
    }

    /// Entries advance at their dates without a reload (`entry` events), and
    /// a stack (one family) reorders by the relevance in force (`stack` events,
    /// `status` and `instance`).
    @Test func entriesAdvanceAndStacksFollowRelevance() throws {
        let daemon = try DaemonProcess(
            "v2-relevance",
            configuration: """
                {
                  "plugins": [{ "name": "ticking", "path": "@FIXTURES@/ticking.so" },
                              { "name": "countdown", "path": "@BUILD@/libCountdownPlugin.so" }],
                  "scheduler": { "minimumReloadInterval": 0, "maximumJitter": 0, "coalescingCap": 0 },
                  "instances": [
                    { "id": "new-year", "plugin": "countdown", "kind": "com.widgethost.countdown", "app": "cal" },
                    { "id": "tick", "plugin": "ticking", "kind": "test.fixture", "app": "t" }
                  ]
                }
                """)
        try daemon.start()
        // tick's entries: now (no relevance), +2 s (relevance 50), +4 s (none);
        // new-year holds 20 throughout.
        let seen = try collect(daemon, after: 0, timeout: 60) { events in
            events.filter { $0.type == "entry" && $0.instance == "tick" }.count >= 2
                && events.contains { $0.type == "stack" && $0.details?.order?.first == "new-year" && $0.id > 4 }
        }
        let entries = seen.events.filter { $0.type == "entry" && $0.instance == "tick" }
        #expect(entries.count >= 2)
        #expect(entries.first?.details?.relevance == 50)
        #expect(entries.dropFirst().first?.details?.relevance == 0)
        // No reload between them: the entries advanced by themselves.
        let reloads = seen.events.filter { $0.type == "reload" && $0.instance == "tick" }
        #expect(reloads.count == 1)
        let orders = seen.events.filter { $0.type == "stack" }.compactMap { $0.details?.order }
        #expect(orders.contains(["tick", "new-year"]), "\(orders)")
        #expect(orders.last == ["new-year", "tick"], "\(orders)")
        let status = try daemon.status()
        #expect(status.instances.map(\.id) == ["new-year", "tick"])
        #expect(status.instances.map(\.stackRank) == [1, 2])
        #expect(status.instances.first?.relevance == 20)
        let tick = try #require(try detail(daemon, "tick"))
        #expect(tick.stackRank == 2 && tick.stackSize == 2)
        #expect(tick.nextEntryDate == nil)
        #expect(tick.content?.objectMembers?.first { $0.0 == "index" }?.1 == .number(2))
        daemon.stop()
    }

    /// The stacks follow runtime adds (appended in place: each `add`
    /// answers the new instance's rank), removes and updates (into another
    /// family): the ranks are those of the configuration's order, as the
    /// runtime instances' scores are all 0 and new-year comes first.
    @Test func runtimeAddsRemovesAndUpdatesKeepTheStacksRanks() throws {
        let daemon = try DaemonProcess("v2-stacks", configuration: Self.quiet)
        try daemon.start()
        func place(_ id: String, _ family: String) throws -> [Int]? {
            var spec = Self.desk(id)
            spec.family = family
            let added = try add(daemon, spec)
            #expect(added.ok, "\(String(describing: added.error))")
            return added.instance.map { [$0.stackRank, $0.stackSize] }
        }
        func rank(_ id: String) throws -> [Int]? { try detail(daemon, id).map { [$0.stackRank, $0.stackSize] } }
        func ranks() throws -> [String: Int] {
            Dictionary(uniqueKeysWithValues: try daemon.status().instances.map { ($0.id, $0.stackRank ?? 0) })
        }
        #expect(try place("desk-1", "systemSmall") == [2, 2])
        #expect(try place("desk-2", "systemSmall") == [3, 3])
        #expect(try place("desk-3", "systemMedium") == [1, 1])
        #expect(try rank("desk-1") == [2, 3])
        #expect(try ranks() == ["new-year": 1, "desk-1": 2, "desk-2": 3, "desk-3": 1])

        #expect(try daemon.send(ControlRequest(.instancesRemove, instance: "desk-1")).ok)
        #expect(try rank("desk-2") == [2, 2])
        var update = ControlRequest(.instancesUpdate)
        update.widget = InstanceSpec(id: "desk-2", family: "systemMedium")
        let updated = try daemon.send(update)
        #expect(updated.ok, "\(String(describing: updated.error))")
        // Placed before desk-3: the configuration's order.
        #expect(updated.instance.map { [$0.stackRank, $0.stackSize] } == [1, 2])
        #expect(try rank("desk-3") == [2, 2])
        #expect(try rank("new-year") == [1, 1])
        #expect(try place("desk-4", "systemSmall") == [2, 2])
        #expect(try ranks() == ["new-year": 1, "desk-2": 1, "desk-3": 2, "desk-4": 2])
        daemon.stop()
    }

    /// A push with the kind's token reloads its instances with reason push
    /// (loosely timed here; scripts/push-latency measures it); the token is
    /// per installation, survives restarts, and reaches the kind's push
    /// handler in the plugin (`context->push_token`); a wrong one changes
    /// nothing; a kind that does not declare `WH_KIND_PUSH` gets no token and
    /// no push.
    @Test func pushWithTheKindsTokenReloadsItsInstances() throws {
        let daemon = try DaemonProcess("v2-push", configuration: Self.quiet)
        try daemon.start()
        let kind = "com.widgethost.character-detail"
        func token() throws -> String? {
            try daemon.status().plugins.first { $0.name == "character" }?.pushTokens?[kind]
        }
        let first = try #require(try token())
        #expect(first.count == 64)
        #expect(try daemon.status().plugins.first { $0.name == "character" }?.pushTokens?.count == 2)
        #expect(try daemon.status().plugins.first { $0.name == "countdown" }?.pushTokens?.isEmpty ?? true)
        #expect(try add(daemon, Self.desk("hero")).ok)
        try waitUntil("hero has its first timeline") { try detail(daemon, "hero")?.lastOutcome == "ok" }
        // The plugin's push handler got the token in that call and wrote it
        // where its game picks it up.
        let handed = daemon.directory + "/data/widgethost/plugins/character/push-\(kind).json"
        let written = try String(contentsOfFile: handed, encoding: .utf8)
        #expect(written.contains("\"token\":\"\(first)\""), "\(written)")
        var request = ControlRequest(.push, kind: kind)
        request.pushToken = String(first.reversed())
        #expect(try daemon.send(request).error?.code == .badPushToken)
        request.kind = "no.such.kind"
        request.pushToken = first
        #expect(try daemon.send(request).error?.code == .unknownKind)
        request.kind = "com.widgethost.countdown"
        let refused = try daemon.send(request).error
        #expect(refused?.code == .unknownKind)
        #expect(refused?.message.contains("does not accept push updates") == true, "\(String(describing: refused))")
        request.kind = kind
        let before = try #require(try detail(daemon, "hero")?.lastReload)
        let sent = Date()
        let answer = try daemon.send(request)
        #expect(answer.ok && answer.scheduled == ["hero"], "\(String(describing: answer.error))")
        try waitUntil("the push reloads hero", timeout: 10) {
            (try detail(daemon, "hero")?.lastReload ?? 0) > before
        }
        #expect(Date().timeIntervalSince(sent) < 10)
        let seen = try collect(daemon, after: 0) { events in
            events.contains { $0.type == "reload" && $0.details?.reason == "push" }
        }
        #expect(seen.events.contains { $0.type == "push" && $0.message == kind })
        let reload = try #require(seen.events.last { $0.type == "reload" && $0.details?.reason == "push" })
        #expect(reload.details?.counted == false)
        // Free for the timeline budget, spent from the push budget.
        #expect(try detail(daemon, "hero")?.budgetUsed == 0)
        func pushBudget() throws -> String? {
            let text = try daemon.send(ControlRequest(.explain, instance: "hero")).explanation?.text ?? ""
            return text.split(separator: "\n").first { $0.contains("push budget:") }.map(String.init)
        }
        let spent = try #require(try pushBudget())
        #expect(spent.contains("push budget: 1/"), "\(spent)")
        // `lastReload` moves when the reload is issued; a reload still queued
        // at a stop stays in flight and is redone (and charged again) after
        // the restart, so the stop waits for this one to finish.
        try waitUntil("the push reload completes", timeout: 30) { try detail(daemon, "hero")?.inFlight == false }
        daemon.stop()
        try daemon.start()
        #expect(try token() == first)
        // The push budget's window is persisted: a restart does not refill it.
        let after = try pushBudget()
        #expect(after == spent, "\(String(describing: after)) after the restart, \(spent) before")
        daemon.stop()
    }
}
