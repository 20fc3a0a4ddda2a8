import Foundation
import Testing

/// Each example scenario of samples/scenarios, run through the real
/// `widgethost simulate` with the real plugins, asserting exact reload times.
@Suite("widgethost simulate: one scenario per rule")
struct SimulateScenarioTests {
    struct Reload {
        var time: String
        var instance: String
        var counted: Bool
        var freeReason: String?
        var reason: String
        var deferredFrom: String?
        var deferralCause: String?
        var wouldHaveBeenDeferred: String?
        var outcome: String
    }

    struct Simulation {
        var reloads: [Reload]
        var document: [String: Any]

        func of(_ instance: String) -> [Reload] { reloads.filter { $0.instance == instance } }
        func times(_ instance: String) -> [String] { of(instance).map(\.time) }
        func summary(_ instance: String) -> [String: Any] {
            ((document["summary"] as? [[String: Any]]) ?? []).first { $0["instance"] as? String == instance } ?? [:]
        }
    }

    func simulate(_ scenario: String, _ extra: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) throws
        -> Simulation
    {
        let path = CLI.repositoryRoot + "/samples/scenarios/" + scenario
        let result = try CLI.run(
            ["simulate", "--config", path, "--json", "--data-dir", CLI.temporaryDirectory("sim-\(scenario)")] + extra)
        #expect(result.status == 0, "simulate \(scenario) failed:\n\(result.stderr)", sourceLocation: sourceLocation)
        let document = try CLI.json(result.stdout)
        let reloads = (document["reloads"] as? [[String: Any]] ?? []).map { row in
            let deferred = row["deferred"] as? [String: Any]
            let would = row["wouldHaveBeenDeferred"] as? [String: Any]
            return Reload(
                time: row["time"] as? String ?? "", instance: row["instance"] as? String ?? "",
                counted: row["counted"] as? Bool ?? false, freeReason: row["freeReason"] as? String,
                reason: row["reason"] as? String ?? "", deferredFrom: deferred?["from"] as? String,
                deferralCause: deferred?["cause"] as? String, wouldHaveBeenDeferred: would?["until"] as? String,
                outcome: row["outcome"] as? String ?? "")
        }
        return Simulation(reloads: reloads, document: document)
    }

    @Test func rule1PoliciesAtEndAfterNever() throws {
        let run = try simulate("01-policies.json")
        // atEnd: hourly entries for 3 h, reloaded when the last one passes.
        #expect(
            Array(run.times("panda").prefix(4)) == [
                "2026-11-20T12:00:00Z", "2026-11-20T15:00:00Z", "2026-11-20T18:00:00Z", "2026-11-20T21:00:00Z",
            ])
        #expect(run.of("panda").first?.freeReason == "instanceAdded")
        // never: only the first timeline.
        #expect(run.times("healed") == ["2026-11-20T12:00:00Z"])
        // after(date): at the market's open (14:30Z), close (21:00Z), then Monday's open.
        #expect(run.times("market") == ["2026-11-20T12:00:00Z", "2026-11-20T14:30:00Z", "2026-11-20T21:00:00Z"])
    }

    @Test func rule2EntriesChangeTheDisplayAtTheirDates() throws {
        let run = try simulate("02-entries.json", ["--display"])
        let display = (run.document["display"] as? [[String: Any]] ?? []).filter {
            $0["instance"] as? String == "panda"
        }
        let times = display.map { $0["time"] as? String ?? "" }
        #expect(
            Array(times.prefix(4)) == [
                "2026-11-23T08:00:00Z", "2026-11-23T09:00:00Z", "2026-11-23T10:00:00Z", "2026-11-23T11:00:00Z",
            ])
        // What it shows is the entry whose date has passed.
        #expect(display.allSatisfy { $0["time"] as? String == $0["entryDate"] as? String })
    }

    @Test func rule3BudgetDefersToTheExactMomentBudgetReturns() throws {
        let run = try simulate("03-budget.json")
        let counted = run.of("healed").filter(\.counted)
        #expect(
            counted.map(\.time) == [
                "2026-11-23T09:00:00Z", "2026-11-23T10:00:00Z", "2026-11-23T11:00:00Z", "2026-11-23T12:00:00Z",
                // oldest counted (09:00) + 24 h
                "2026-11-24T09:00:00Z",
            ])
        #expect(counted.last?.deferredFrom == "2026-11-23T13:00:00Z")
        #expect(counted.last?.deferralCause == "budget")
        #expect(run.summary("healed")["maxCountedIn24h"] as? Int == 4)
    }

    @Test func rule4CountedReloadsAtLeastFiveMinutesApart() throws {
        let run = try simulate("04-spacing.json")
        let counted = run.of("healed").filter(\.counted)
        #expect(counted.map(\.time) == ["2026-11-23T09:00:00Z", "2026-11-23T09:05:00Z"])
        #expect(counted.last?.deferredFrom == "2026-11-23T09:01:00Z")
        #expect(counted.last?.deferralCause == "spacing")
    }

    @Test func rule5FreeReloadsAreTypedAndNotCounted() throws {
        let run = try simulate("05-free-reloads.json")
        #expect(run.reloads.allSatisfy { !$0.counted })
        let reasons = Set(run.reloads.compactMap(\.freeReason))
        #expect(
            reasons == [
                "instanceAdded", "appForeground", "audioSession", "appIntent", "localeChange", "accessibilityChange",
                "timeZoneChange", "significantLocationChange",
            ])
        #expect(run.of("late").first?.time == "2026-11-23T08:30:00Z")
        #expect(run.of("healed").first { $0.freeReason == "appIntent" }?.time == "2026-11-23T11:00:00Z")
        // Location changed at 15:00 while the market widget was hidden: reloaded when shown at 16:00.
        #expect(run.of("market").first { $0.freeReason == "significantLocationChange" }?.time == "2026-11-23T16:00:00Z")
    }

    @Test func rule6WidgetCenterCountedInBackgroundFreeInForeground() throws {
        let run = try simulate("06-widgetcenter.json")
        let byKind = run.reloads.filter { $0.reason.hasPrefix("reloadTimelines") }
        #expect(byKind.map(\.instance) == ["panda"])
        #expect(byKind.first?.time == "2026-11-23T09:00:00Z")
        #expect(byKind.first?.counted == true)
        let all = run.reloads.filter { $0.reason.hasPrefix("reloadAllTimelines") }
        #expect(Set(all.filter { $0.time == "2026-11-23T10:00:00Z" }.map(\.instance)) == ["panda", "board"])
        #expect(all.filter { $0.time == "2026-11-23T10:00:00Z" }.allSatisfy { $0.counted })
        let foreground = all.filter { $0.time == "2026-11-23T11:01:00Z" }
        #expect(Set(foreground.map(\.instance)) == ["panda", "board"])
        #expect(foreground.allSatisfy { $0.freeReason == "appForeground" })
        // Another app's instance is not touched.
        #expect(run.of("other").allSatisfy { !$0.reason.contains("com.example.game") })
    }

    @Test func rule13PushReloadsTheKindWithinAPushBudgetOfItsOwn() throws {
        let run = try simulate("13-push.json")
        for id in ["panda", "hero"] {
            let pushes = run.of(id).filter { $0.reason == "push" }
            #expect(
                pushes.map(\.time) == ["2026-11-23T09:00:00Z", "2026-11-23T10:00:00Z", "2026-11-24T09:00:00Z"], "\(id)")
            #expect(pushes.allSatisfy { !$0.counted && $0.freeReason == "push" })
            // The third push of the day waited for the first to leave the window.
            #expect(pushes.last?.deferralCause == "pushBudget")
            #expect(pushes.last?.deferredFrom == "2026-11-23T11:00:00Z")
        }
        #expect(run.of("other").allSatisfy { $0.reason != "push" })
    }

    @Test func rule7HiddenDueInstanceReloadsWhenShownAndRareGetsLess() throws {
        let run = try simulate("07-visibility.json")
        let hidden = run.of("hidden")
        #expect(hidden.map(\.time) == ["2026-11-23T08:00:00Z", "2026-11-23T13:00:00Z"])
        #expect(hidden.last?.deferredFrom == "2026-11-23T11:00:00Z")
        #expect(hidden.last?.deferralCause == "hidden")
        let often = try #require(run.summary("often")["allowanceAtEnd"] as? Int)
        let rarely = try #require(run.summary("rarely")["allowanceAtEnd"] as? Int)
        #expect(often > rarely)
    }

    @Test func rule8CoalescingBatchesNearbyReloadsIntoOneWakeup() throws {
        let run = try simulate("08-coalescing.json")
        let firstPolicy = ["launch", "trip", "party"].map { id in run.of(id).first { $0.counted }?.time }
        // Due at 14:00:00, 14:00:20 and 14:00:40: one wakeup serves all three.
        #expect(Set(firstPolicy) == ["2026-11-23T14:00:40Z"])
        #expect(run.of("launch").first { $0.counted }?.deferralCause == "coalescing")
    }

    @Test func rule9JitterSpreadsSharedAfterDatesStably() throws {
        let first = try simulate("09-jitter.json")
        let second = try simulate("09-jitter.json")
        let ids = ["m1", "m2", "m3", "m4", "m5"]
        let opens = ids.map { id in first.of(id).first { $0.counted }?.time ?? "" }
        #expect(Set(opens).count > 1, "jitter must spread the reloads: \(opens)")
        #expect(opens.allSatisfy { $0 >= "2026-11-23T14:30:00" && $0 <= "2026-11-23T14:32:00.999Z" })
        // Stable across runs (a hash of the id, not a random draw).
        #expect(opens == ids.map { id in second.of(id).first { $0.counted }?.time ?? "" })
    }

    @Test func rule10FailuresBackOffExponentially() throws {
        let run = try simulate("10-failures.json")
        #expect(
            run.times("broken") == [
                "2026-11-23T08:00:00Z", "2026-11-23T08:05:00Z", "2026-11-23T08:15:00Z", "2026-11-23T08:35:00Z",
                "2026-11-23T09:15:00Z", "2026-11-23T10:15:00Z", "2026-11-23T11:15:00Z", "2026-11-23T12:15:00Z",
                "2026-11-23T13:15:00Z",
            ])
        #expect(run.reloads.allSatisfy { $0.outcome == "pluginError" })
        #expect(run.of("broken").dropFirst().allSatisfy { $0.deferralCause == "backoff" })
    }

    @Test func rule11RelevancePutsTheImminentCountdownOnTop() throws {
        let run = try simulate("11-relevance.json")
        let samples = run.document["stacks"] as? [[String: Any]] ?? []
        let top = Dictionary(
            samples.map { ($0["time"] as? String ?? "", $0["top"] as? String ?? "") }, uniquingKeysWith: { a, _ in a })
        #expect(top["2026-11-23T08:00:00Z"] == "holiday")
        #expect(top["2026-11-23T09:45:00Z"] == "holiday")
        #expect(top["2026-11-23T10:00:00Z"] == "meeting")
    }

    @Test func rule12DeveloperModeLiftsLimitsAndReportsWouldBeDeferrals() throws {
        let run = try simulate("12-developer-mode.json")
        let counted = run.of("healed").filter(\.counted)
        #expect(counted.map(\.time) == ["2026-11-23T08:10:00Z", "2026-11-23T08:11:00Z", "2026-11-23T08:12:00Z"])
        #expect(counted.map(\.wouldHaveBeenDeferred) == [nil, "2026-11-23T08:15:00Z", "2026-11-23T08:16:00Z"])
        #expect(run.document["developerMode"] as? Bool == true)
    }

    @Test func badScenariosAreRefusedWithTheFileAndField() throws {
        let directory = CLI.temporaryDirectory("bad-scenarios")
        let cases: [(String, String)] = [
            (
                #"{"start": "2026-11-23T08:00:00Z", "instances": [{"id": "a", "plugin": "libCharacterPlugin.so", "kind": "com.widgethost.character-detail", "family": "huge"}]}"#,
                "instances[0].family"
            ),
            (#"{"start": "yesterday", "instances": []}"#, "start"),
            (
                #"{"start": "2026-11-23T08:00:00Z", "instances": [{"id": "a", "plugin": "libNope.so", "kind": "k"}]}"#,
                "libNope.so"
            ),
            (
                #"{"start": "2026-11-23T08:00:00Z", "instances": [{"id": "a", "plugin": "libCharacterPlugin.so", "kind": "nope"}]}"#,
                "has no kind \"nope\""
            ),
            (
                #"{"start": "2026-11-23T08:00:00Z", "instances": [{"id": "a", "plugin": "libCharacterPlugin.so", "kind": "com.widgethost.character-detail"}], "events": [{"at": "+1h", "type": "explode"}]}"#,
                "events[0].type"
            ),
            (#"{"start": "2026-11-23T08:00:00Z", "#, "not valid JSON"),
            // Numbers that once reached a Swift trap or ran without end.
            (Self.withCharacter(#""seed": 1e20"#), "seed: expected a whole number"),
            (Self.withCharacter(#""seed": 2.5"#), "seed: expected a whole number"),
            (Self.withCharacter(#""days": -1, "randomViews": [{"instance": "a"}]"#), "days: expected a number of days"),
            (Self.withCharacter(#""days": 1e308"#), "days: expected a number of days above 0 and at most 366"),
            (Self.withCharacter(#""stacks": [{"instances": ["a"], "every": 0}]"#), "stacks[0].every"),
            // Times out of 1970-9999 (every reload once failed as the plugin's "malformed result").
            (
                Self.withCharacter(#""events": [{"at": "0001-01-01T00:00:00Z", "type": "appForeground", "app": "x"}]"#),
                "events[0].at: \"0001-01-01T00:00:00Z\" is not between 1970-01-01 and 9999-12-31"
            ),
            (
                #"{"start": "0001-01-01T00:00:00Z", "instances": [{"id": "a", "plugin": "libCharacterPlugin.so", "kind": "com.widgethost.character-detail"}]}"#,
                "start: \"0001-01-01T00:00:00Z\" is not between 1970-01-01 and 9997-12-31"
            ),
        ]
        for (index, (text, expected)) in cases.enumerated() {
            let path = directory + "/bad\(index).json"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let result = try CLI.run(["simulate", "--config", path, "--plugin-dir", CLI.buildDirectory])
            #expect(result.status == 2, "case \(index): \(result.stdout)")
            #expect(result.stderr.contains(path), "case \(index) must name the file: \(result.stderr)")
            #expect(result.stderr.contains(expected), "case \(index) must mention \(expected): \(result.stderr)")
        }
    }

    /// A scenario of one Character instance, with `fields` added.
    static func withCharacter(_ fields: String) -> String {
        #"{"start": "2026-11-23T08:00:00Z", "instances": [{"id": "a", "plugin": "libCharacterPlugin.so", "kind": "com.widgethost.character-detail"}], "#
            + fields + "}"
    }

    /// `--html` is written over at the end of the run: a path that is not
    /// a regular file (a device, a FIFO, a directory) is refused before the
    /// run starts, and left as it was (it once replaced `/dev/full` with the
    /// page). A FIFO stands for the device here.
    @Test func anHTMLPathThatIsNotARegularFileIsRefused() throws {
        let fifo = CLI.temporaryDirectory("html-path") + "/pipe"
        unlink(fifo)
        #expect(mkfifo(fifo, 0o600) == 0)
        let result = try CLI.run([
            "simulate", "--config", CLI.repositoryRoot + "/samples/scenarios/03-budget.json", "--html", fifo,
        ])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("--html \(fifo) exists and is not a regular file"), "\(result.stderr)")
        var after = stat()
        #expect(stat(fifo, &after) == 0 && (after.st_mode & S_IFMT) == S_IFIFO)
    }

    /// `--data-dir` naming a file is the command line's mistake, refused as
    /// every command refuses it (it once ran, every reload failing with a
    /// "runner unavailable" that blamed nothing it could fix).
    @Test func aDataDirectoryThatIsAFileIsRefused() throws {
        let file = CLI.temporaryDirectory("data-dir-file") + "/file"
        try "x".write(toFile: file, atomically: true, encoding: .utf8)
        let result = try CLI.run([
            "simulate", "--config", CLI.repositoryRoot + "/samples/scenarios/03-budget.json", "--data-dir", file,
        ])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("--data-dir \(file) is a file, expected a directory"), "\(result.stderr)")
    }

    @Test func errorsNameTheLineAndColumnOfTheField() throws {
        let path = CLI.temporaryDirectory("bad-scenarios") + "/lines.json"
        let text = """
            {
              "start": "2026-11-23T08:00:00Z",
              "instances": [
                { "id": "a", "plugin": "libCharacterPlugin.so",
                  "kind": "com.widgethost.character-detail",
                  "family": "huge" }
              ]
            }
            """
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try CLI.run(["simulate", "--config", path])
        #expect(result.status == 2)
        #expect(
            result.stderr.contains("\(path):6:17: instances[0].family: unknown family \"huge\""), "\(result.stderr)")
        #expect(!result.stderr.contains("Usage:"))
    }

    /// Problems found once the plugins load (a missing file, an unknown
    /// kind, a family the kind lacks) name the line and column of the
    /// instance's field, as the parser's problems do (they named only the file).
    @Test func pluginProblemsNameTheLineAndColumnOfTheInstance() throws {
        let directory = CLI.temporaryDirectory("bad-plugins")
        let cases: [(String, String)] = [
            (
                #""plugin": "libNope.so", "kind": "k""#,
                #":4:28: instances[0].plugin: plugin "libNope.so" (instance a) was not found"#
            ),
            (
                #""plugin": "libCharacterPlugin.so", "kind": "nope""#,
                #":4:61: instances[0].kind: instance a: plugin libCharacterPlugin.so has no kind "nope""#
            ),
            (
                #""plugin": "libCharacterPlugin.so", "kind": "com.widgethost.character-detail", "family": "accessoryInline""#,
                ":4:106: instances[0].family: instance a: kind com.widgethost.character-detail does not support accessoryInline"
            ),
        ]
        for (index, (fields, expected)) in cases.enumerated() {
            let path = directory + "/plugin\(index).json"
            let text =
                "{\n  \"start\": \"2026-11-23T08:00:00Z\",\n  \"instances\": [\n    { \"id\": \"a\", \(fields) }\n  ]\n}"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let result = try CLI.run(["simulate", "--config", path, "--plugin-dir", CLI.buildDirectory])
            #expect(result.status == 2, "case \(index): \(result.stdout)")
            #expect(result.stderr.contains(path + expected), "case \(index): \(result.stderr)")
        }
    }

    /// A scenario's timeout follows the daemon's rule (more than 0, at most
    /// 10 minutes): 0 was accepted here and refused there.
    @Test func aTimeoutOfZeroIsRefusedAsTheDaemonRefusesIt() throws {
        let path = CLI.temporaryDirectory("bad-scenarios") + "/timeout.json"
        let text =
            #"{"start": "2026-11-23T08:00:00Z", "instances": [{"id": "a", "plugin": "libCharacterPlugin.so", "kind": "com.widgethost.character-detail", "timeout": 0}]}"#
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try CLI.run(["simulate", "--config", path, "--plugin-dir", CLI.buildDirectory])
        #expect(result.status == 2, "\(result.stdout)")
        #expect(
            result.stderr.contains(
                "instances[0].timeout: expected a timeout of more than 0 and at most 600 seconds (10 minutes)"),
            "\(result.stderr)")
    }

    /// A key twice in one object of a scenario is refused with where it
    /// appears again (it was read silently, the last one winning).
    @Test func aDuplicateKeyIsRefusedWithItsLineAndColumn() throws {
        let path = CLI.temporaryDirectory("bad-scenarios") + "/duplicate.json"
        let text = """
            {
              "start": "2026-11-23T08:00:00Z",
              "instances": [{ "id": "a", "plugin": "libCharacterPlugin.so", "kind": "com.widgethost.character-detail",
                              "id": "b" }]
            }
            """
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try CLI.run(["simulate", "--config", path, "--plugin-dir", CLI.buildDirectory])
        #expect(result.status == 2, "\(result.stdout)")
        #expect(
            result.stderr.contains(
                #"\#(path):4:19: instances[0].id: the key "id" appears twice in this object (first at 3:19)"#),
            "\(result.stderr)")
    }
}
