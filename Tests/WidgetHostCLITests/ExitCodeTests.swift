import Foundation
import Testing

/// The documented exit statuses (docs/cli.md), per command: 0 ok, 1 a plugin
/// failed, 2 usage or configuration, 3 a host fault; and the CLI fixes that
/// go with them.
@Suite("Exit codes and CLI fixes")
struct ExitCodeTests {
    static let good = CLI.fixtures + "/good.so"
    static let calls = ["placeholder", "snapshot", "timeline"]

    /// A copy of `widgethost` alone in a folder: no runner next to it nor
    /// in ../libexec/widgethost, so every call is a host fault.
    static let lonely: String = {
        let directory = CLI.temporaryDirectory("lonely/bin")
        let copy = directory + "/widgethost"
        try? FileManager.default.removeItem(atPath: copy)
        try? FileManager.default.copyItem(atPath: CLI.executable, toPath: copy)
        return copy
    }()

    func status(_ arguments: [String], program: String = CLI.executable) throws -> Int32 {
        let result = CLI.shell(
            "env -u WIDGETHOST_RUNNER '\(program)' " + arguments.map { "'\($0)'" }.joined(separator: " ")
                + " >/dev/null 2>&1")
        return result.status
    }

    @Test func load() throws {
        #expect(try status(["load", Self.good]) == 0)
        #expect(try status(["load", CLI.fixtures + "/crash_segv.so", "--family", "systemSmall"]) == 1)
        #expect(try status(["load", CLI.fixtures + "/not_elf.so"]) == 1)
        #expect(try status(["load", "/nonexistent/plugin.so"]) == 2)
        // A path at the top level: the sandbox binds the file, not "/" (which
        // failed as a host fault, exit 3).
        #expect(try status(["load", "/nonexistent-plugin.so"]) == 2)
        #expect(try status(["load", Self.good, "--kind", "no.such.kind"]) == 2)
        #expect(try status(["load", Self.good, "--family", "systemLarge"]) == 2)
        #expect(try status(["load", Self.good, "--data-dir", "/etc/hostname"]) == 2)
        #expect(try status(["load", Self.good], program: Self.lonely) == 3)
    }

    @Test func placeholderSnapshotTimeline() throws {
        for command in Self.calls {
            #expect(try status([command, Self.good, "--kind", "test.fixture"]) == 0, "\(command)")
            #expect(try status([command, CLI.fixtures + "/not_elf.so", "--kind", "test.fixture"]) == 1, "\(command)")
            #expect(try status([command, "/nonexistent/plugin.so", "--kind", "test.fixture"]) == 2, "\(command)")
            #expect(try status([command, Self.good, "--kind", "no.such.kind"]) == 2, "\(command)")
            // An unsupported family is the caller's mistake, not the plugin's.
            #expect(try status([command, Self.good, "--kind", "test.fixture", "--family", "systemLarge"]) == 2)
            #expect(try status([command, Self.good, "--kind", "test.fixture", "--config", "[1]"]) == 2)
            #expect(try status([command, Self.good, "--kind", "test.fixture"], program: Self.lonely) == 3)
        }
        for command in ["snapshot", "timeline"] {
            #expect(try status([command, CLI.fixtures + "/crash_segv.so", "--kind", "test.fixture"]) == 1)
        }
    }

    @Test func new() throws {
        let parent = CLI.temporaryDirectory("exit-new")
        try? FileManager.default.removeItem(atPath: parent + "/fresh")
        #expect(CLI.shell("cd '\(parent)' && '\(CLI.executable)' new --c fresh >/dev/null").status == 0)
        #expect(CLI.shell("cd '\(parent)' && '\(CLI.executable)' new --c fresh 2>/dev/null").status == 2)
        #expect(CLI.shell("cd '\(parent)' && '\(CLI.executable)' new --c 'bad name' 2>/dev/null").status == 2)
    }

    /// With `--json`, an error that ends a command before its document is
    /// still one JSON document on standard output, with the exit status's
    /// code; the text stays on standard error.
    @Test(arguments: [
        (["load", "--json"], Int32(2), "usage"),
        (["timeline", Self.good, "--kind", "test.fixture", "--json", "--now", "yesterday-ish"], Int32(2), "usage"),
        (["status", "--json", "--socket", "/nonexistent/control.sock"], Int32(1), "daemonUnavailable"),
        (["watch", "--json", "--socket", "/nonexistent/control.sock"], Int32(1), "daemonUnavailable"),
    ])
    func jsonErrorsAreDocuments(arguments: [String], status: Int32, code: String) throws {
        let result = try CLI.run(arguments)
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderr.contains("rror"), "the text stays on standard error: \(result.stderr)")
        let document = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(document?["schemaVersion"] as? Int == 1)
        #expect(document?["ok"] as? Bool == false)
        let failure = document?["failure"] as? [String: Any]
        #expect(failure?["code"] as? String == code, "\(result.stdout)")
        #expect((failure?["message"] as? String)?.isEmpty == false)
    }

    /// `sandbox-check` and `bench` with no runner: a host fault, exit status
    /// 3, and with `--json` the error document (`hostFault` before a command
    /// can run anything, the failure's own code once a plugin is tried).
    @Test func withoutARunnerSandboxCheckAndBenchAreHostFaultsInJSONToo() throws {
        for (arguments, code) in [
            (["sandbox-check", "--json"], "hostFault"), (["bench", Self.good, "-n", "2", "--json"], "runnerMissing"),
        ] {
            let result = CLI.shell(
                "env -u WIDGETHOST_RUNNER '\(Self.lonely)' " + arguments.map { "'\($0)'" }.joined(separator: " ")
                    + " 2>/dev/null")
            #expect(result.status == 3, "\(arguments): \(result.output)")
            let document = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
            #expect((document?["failure"] as? [String: Any])?["code"] as? String == code, "\(result.output)")
        }
    }

    @Test func hostFaultSaysSo() throws {
        let result = CLI.shell("env -u WIDGETHOST_RUNNER '\(Self.lonely)' load '\(Self.good)' 2>&1")
        #expect(result.status == 3)
        #expect(result.output.contains("runnerUnavailable") || result.output.contains("widgethost-runner"))
    }

    @Test func nowTakesANegativeOffsetWithoutEquals() throws {
        let result = try CLI.run(["timeline", Self.good, "--kind", "test.fixture", "--now", "-30m", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let now = try #require(try CLI.json(result.stdout)["call"] as? [String: Any])["now"] as? String
        let parsed = try #require(try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(now ?? ""))
        #expect(abs(parsed.timeIntervalSinceNow + 1800) < 120)
    }

    @Test func helpShowsDefaultsAsUsersWriteThem() throws {
        for command in ["load", "placeholder", "snapshot", "timeline"] {
            let help = try CLI.run([command, "--help"])
            #expect(!help.stdout.contains("DurationArgument"), "\(command): \(help.stdout)")
            #expect(!help.stdout.contains("default: 1)"), "\(command): \(help.stdout)")
            #expect(help.stdout.contains("default: 5.0s"), "\(command): \(help.stdout)")
            #expect(help.stdout.contains("Exit status"), "\(command)")
        }
        let timeline = try CLI.run(["timeline", "--help"])
        #expect(timeline.stdout.contains("default: systemSmall"), "\(timeline.stdout)")
    }

    @Test func loadWritesNothingIntoTheUsersDataDirectory() throws {
        // Two plugins with the same file name, loaded with XDG_DATA_HOME set.
        let home = CLI.temporaryDirectory("xdg-home")
        let base = CLI.temporaryDirectory("same-name")
        var dataLines: [String] = []
        for folder in ["a", "b"] {
            try FileManager.default.createDirectory(atPath: base + "/" + folder, withIntermediateDirectories: true)
            let copy = base + "/" + folder + "/plugin.so"
            try? FileManager.default.removeItem(atPath: copy)
            try FileManager.default.copyItem(atPath: Self.good, toPath: copy)
            let result = CLI.shell("XDG_DATA_HOME='\(home)' '\(CLI.executable)' load '\(copy)' 2>&1")
            #expect(result.status == 0, "\(result.output)")
            let line = result.output.split(separator: "\n").first { $0.hasPrefix("Data ") }.map(String.init) ?? ""
            #expect(line.contains("temporary"), "\(line)")
            dataLines.append(line)
            // The temporary folder is gone afterwards.
            let path = line.dropFirst("Data     ".count).split(separator: " ").first.map(String.init) ?? ""
            #expect(!path.isEmpty && !FileManager.default.fileExists(atPath: path), "\(path)")
        }
        #expect(dataLines[0] != dataLines[1])
        #expect((try? FileManager.default.contentsOfDirectory(atPath: home))?.isEmpty == true)
    }

    @Test func everyDateInTheJSONIsISO8601() throws {
        let result = try CLI.run(["load", Self.good, "--json", "--now", "2030-01-01T00:00:00Z"])
        #expect(result.status == 0)
        var dates: [String] = []
        func walk(_ value: Any, key: String) {
            if let object = value as? [String: Any] {
                for (name, member) in object { walk(member, key: name) }
            } else if let array = value as? [Any] {
                for item in array { walk(item, key: key) }
            } else if let text = value as? String, ["date", "now", "since"].contains(key) {
                dates.append(text)
            } else if key == "date" || key == "now" {
                Issue.record("\(key) is not a string: \(value)")
            }
        }
        let document = try CLI.json(result.stdout)
        #expect(document["schemaVersion"] as? Int == 1)
        walk(document, key: "")
        #expect(dates.count > 8)
        let pattern = #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$"#
        for date in dates {
            #expect(date.range(of: pattern, options: .regularExpression) != nil, "\(date)")
        }
    }
}
