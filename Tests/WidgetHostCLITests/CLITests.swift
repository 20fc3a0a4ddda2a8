import Foundation
import Testing
import WidgetHostTestSupport

/// Runs the real `widgethost` executable, as users do.
enum CLI {
    static let repositoryRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The build directory: the test bundle sits next to the executables.
    static let buildDirectory: String = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return (exe as NSString).deletingLastPathComponent
    }()

    static var executable: String { buildDirectory + "/widgethost" }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func run(_ arguments: [String], in directory: String? = nil) throws -> Result {
        let process = Process()
        // Bounded: a command that hangs fails its test (status 124 or 137)
        // instead of the whole run.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["-k", "10", "600", executable] + arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes concurrently so neither can fill up and block the child.
        nonisolated(unsafe) var errData = Data()
        let errReader = Thread { errData = err.fileHandleForReading.readDataToEndOfFile() }
        errReader.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errReader.isFinished { usleep(1000) }
        return Result(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }

    static func shell(_ command: String) -> (status: Int32, output: String) {
        let process = Process()
        // Bounded: a command that hangs fails its test instead of the whole run.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["-k", "10", "1800", "/bin/bash", "-c", command]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do { try process.run() } catch { return (127, "\(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func temporaryDirectory(_ name: String) -> String {
        ScratchDirectory.make(name, unique: false)
    }

    /// The faulty fixtures, built once.
    static let fixtures: String = {
        let directory = temporaryDirectory("fixtures")
        let result = shell("bash '\(repositoryRoot)/Tests/Fixtures/faulty/build.sh' '\(directory)'")
        precondition(result.status == 0, "building the fixtures failed:\n\(result.output)")
        return directory
    }()

    static let dataDirectory = temporaryDirectory("data")

    static func json(_ text: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try #require(object as? [String: Any])
    }
}

@Suite("widgethost CLI")
struct CLITests {
    /// `--locale` is passed to the plugin as given: a BCP 47 tag or a POSIX
    /// name is taken, anything else (spaces, quotes, control characters,
    /// 10 KB) is a usage error naming the flag, before any call.
    @Test(arguments: [
        ("en-US", true), ("zh-Hans-CN", true), ("de-DE-u-co-phonebk", true), ("en_US.UTF-8", true),
        ("sr_RS@latin", true), ("C", true), ("", false), ("en US", false), ("en-US\"", false),
        ("en--US", false), ("en_US.", false), ("en\u{1B}[2J", false), (String(repeating: "a", count: 10_000), false),
    ])
    func localeIsCheckedAsALocaleIdentifier(_ locale: String, _ valid: Bool) throws {
        let result = try CLI.run([
            "snapshot", CLI.fixtures + "/good.so", "--kind", "test.fixture", "--locale", locale, "--data-dir",
            CLI.dataDirectory,
        ])
        if valid {
            #expect(result.status == 0, "\(locale): \(result.stderr)")
        } else {
            #expect(result.status == 2, "\(locale.prefix(20)): \(result.stdout)")
            #expect(result.stderr.contains("--locale must be a locale such as en-US"), "\(result.stderr)")
            #expect(!result.stderr.contains("\u{1B}"))
        }
    }

    /// `--timeout` takes what a scenario's and the daemon's timeout take:
    /// more than 0, at most 10 minutes.
    @Test func timeoutFollowsTheOneCallTimeoutRule() throws {
        let result = try CLI.run([
            "snapshot", CLI.fixtures + "/good.so", "--kind", "test.fixture", "--timeout", "11m", "--data-dir",
            CLI.dataDirectory,
        ])
        #expect(result.status == 2, "\(result.stdout)")
        #expect(
            result.stderr.contains("--timeout must be more than 0 and at most 600 seconds (10 minutes)"),
            "\(result.stderr)")
    }

    @Test func loadShowsEverythingAboutAGoodPlugin() throws {
        let result = try CLI.run(["load", CLI.fixtures + "/good.so", "--data-dir", CLI.dataDirectory, "--verbose"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        for expected in [
            "ABI      v1", "Kind test.fixture", "systemSmall", "systemMedium", "placeholder", "snapshot (preview)",
            "timeline", "policy atEnd", "stdout | hello from good", "All calls succeeded.",
        ] {
            #expect(result.stdout.contains(expected), "missing \(expected) in:\n\(result.stdout)")
        }
    }

    /// A host that is pid 1 (a container's init, `docker run` without
    /// `--init`) loads and calls plugins: a runner whose parent is pid 1
    /// once took it for a dead host and exited, and every plugin "failed".
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")))
    func aHostThatIsPidOneLoadsPlugins() throws {
        let load = CLI.shell(
            "unshare --pid --fork '\(CLI.buildDirectory)/widgethost' load '\(CLI.fixtures)/good.so' --data-dir '\(CLI.dataDirectory)'"
        )
        #expect(load.status == 0, "\(load.output)")
        #expect(load.output.contains("All calls succeeded."), "\(load.output)")
    }

    /// A timeout past 10 years, or a `--now` outside 1970-9999, is refused
    /// as a usage error: a timeout of 1e10 s once reached a Swift trap
    /// converting the deadline for `poll`.
    @Test func aTimeOrTimeoutOutOfRangeIsRefused() throws {
        for flag in ["--timeout", "--load-timeout"] {
            let result = try CLI.run(["timeline", CLI.fixtures + "/good.so", flag, "1e10"])
            #expect(result.status == 2, "\(flag): \(result.stderr)")
            #expect(result.stderr.contains("The value '1e10' is invalid for '\(flag)"), "\(result.stderr)")
        }
        // A time outside 1970-9999 is the command line's mistake, not the
        // plugin's (1e308 once crashed the plugin and blamed it).
        for now in ["1e308", "-1e308", "nan", "0001-01-01T00:00:00Z"] {
            let result = try CLI.run(["timeline", CLI.fixtures + "/good.so", "--now", now])
            #expect(result.status == 2, "--now \(now): \(result.stdout) \(result.stderr)")
        }
    }

    /// `unquarantine --state` edits an existing state database only: a
    /// path that is missing, empty or a directory is refused, and nothing
    /// is created (it once made the directories and a new database).
    @Test func unquarantineEditsOnlyAnExistingStateDatabase() throws {
        let directory = CLI.temporaryDirectory("unquarantine-state")
        let empty = directory + "/empty.sqlite"
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        for state in [directory + "/missing/x.sqlite", empty, directory] {
            let result = try CLI.run(["unquarantine", CLI.fixtures + "/good.so", "--state", state])
            #expect(result.status == 2, "\(state): \(result.stderr)")
            #expect(result.stderr.contains("is not a state database"), "\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory + "/missing"))
        #expect((try FileManager.default.attributesOfItem(atPath: empty)[.size] as? Int) == 0)
    }

    @Test func loadJSONFollowsTheDocumentedSchema() throws {
        let result = try CLI.run([
            "load", CLI.fixtures + "/good.so", "--data-dir", CLI.dataDirectory, "--json", "--family", "systemSmall",
        ])
        #expect(result.status == 0)
        let document = try CLI.json(result.stdout)
        #expect(document["schemaVersion"] as? Int == 1)
        #expect(document["ok"] as? Bool == true)
        let plugin = try #require(document["plugin"] as? [String: Any])
        #expect(plugin["abiVersion"] as? Int == 1)
        let kinds = try #require(document["kinds"] as? [[String: Any]])
        let calls = try #require(kinds.first?["calls"] as? [[String: Any]])
        #expect(calls.count == 4)
        let timeline = try #require(calls.last)
        #expect(timeline["entryPoint"] as? String == "timeline")
        #expect((timeline["policy"] as? [String: Any])?["type"] as? String == "atEnd")
        #expect((timeline["entries"] as? [[String: Any]])?.count == 3)
    }

    @Test func inProcessModeLoadsAndCallsAGoodPluginAndWarnsLoudly() throws {
        let result = try CLI.run([
            "load", CLI.fixtures + "/good.so", "--data-dir", CLI.dataDirectory, "--isolation", "in-process",
        ])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        for expected in ["Kind test.fixture", "timeline", "policy atEnd", "All calls succeeded."] {
            #expect(result.stdout.contains(expected), "missing \(expected) in:\n\(result.stdout)")
        }
        #expect(result.stderr.contains("WARNING: --isolation in-process"))
        #expect(result.stderr.contains("debugging only"))
        let snapshot = try CLI.run([
            "snapshot", CLI.fixtures + "/good.so", "--kind", "test.fixture", "--data-dir", CLI.dataDirectory,
            "--isolation", "in-process", "--json",
        ])
        #expect(snapshot.status == 0, "\(snapshot.stdout)\(snapshot.stderr)")
        #expect((try CLI.json(snapshot.stdout)["call"] as? [String: Any])?["ok"] as? Bool == true)
        #expect(snapshot.stderr.contains("WARNING: --isolation in-process"))

        // A timeout in process abandons the call: nothing is killed, and the
        // message says so (not "its process group was killed").
        let hung = try CLI.run([
            "timeline", CLI.fixtures + "/sleep_forever.so", "--kind", "test.fixture", "--data-dir",
            CLI.dataDirectory, "--isolation", "in-process", "--timeout", "100ms",
        ])
        #expect(hung.status == 1)
        #expect(hung.stdout.contains("it was abandoned, not stopped"), "\(hung.stdout)")
        #expect(!hung.stdout.contains("process group was killed"))
    }

    @Test func loadOfAFaultyPluginExitsOneWithTheTypedError() throws {
        let result = try CLI.run([
            "load", CLI.fixtures + "/crash_segv.so", "--data-dir", CLI.dataDirectory, "--family", "systemSmall",
        ])
        #expect(result.status == 1)
        #expect(result.stdout.contains("[crashed]"))
        #expect(result.stdout.contains("SIGSEGV"))
        #expect(result.stdout.contains("Some calls failed"))
    }

    @Test func loadOfANonELFFileNamesTheFileAndWhatToDo() throws {
        let result = try CLI.run(["load", CLI.fixtures + "/not_elf.so"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("not_elf.so is not a shared object"))
        #expect(result.stdout.contains("hint:"))
    }

    @Test func singleCallCommands() throws {
        for command in ["placeholder", "snapshot", "timeline"] {
            let result = try CLI.run([
                command, CLI.fixtures + "/good.so", "--kind", "test.fixture", "--data-dir", CLI.dataDirectory, "--json",
            ])
            #expect(result.status == 0, "\(command): \(result.stdout)\(result.stderr)")
            let call = try #require(try CLI.json(result.stdout)["call"] as? [String: Any])
            #expect(call["entryPoint"] as? String == command)
            #expect(call["ok"] as? Bool == true)
        }
        let timedOut = try CLI.run([
            "timeline", CLI.fixtures + "/hang.so", "--kind", "test.fixture", "--timeout", "200ms", "--data-dir",
            CLI.dataDirectory,
        ])
        #expect(timedOut.status == 1)
        #expect(timedOut.stdout.contains("[timedOut]"))
        #expect(timedOut.stdout.contains("200.0ms"))
    }

    @Test func usageErrorsExitTwo() throws {
        let badFamily = try CLI.run([
            "timeline", CLI.fixtures + "/good.so", "--kind", "test.fixture", "--family", "huge",
        ])
        #expect(badFamily.status == 2)
        #expect(badFamily.stderr.contains("systemSmall"))
        let badTimeout = try CLI.run([
            "timeline", CLI.fixtures + "/good.so", "--kind", "test.fixture", "--timeout", "soon",
        ])
        #expect(badTimeout.status == 2)
        let badConfig = try CLI.run([
            "timeline", CLI.fixtures + "/good.so", "--kind", "test.fixture", "--config", "[1]",
        ])
        #expect(badConfig.status == 2)
        #expect(badConfig.stderr.contains("--config must be a JSON object"))
        let unknownFlag = try CLI.run(["load", "--frobnicate"])
        #expect(unknownFlag.status == 2)
        let help = try CLI.run(["load", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("Examples:"))
    }

    @Test func nowAcceptsISOEpochAndOffsets() throws {
        func now(_ value: String) throws -> String? {
            let result = try CLI.run([
                "timeline", CLI.fixtures + "/good.so", "--kind", "test.fixture", "--data-dir", CLI.dataDirectory,
                "--json", "--now=\(value)",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            return try #require(try CLI.json(result.stdout)["call"] as? [String: Any])["now"] as? String
        }
        #expect(try now("2030-01-01T00:00:00Z") == "2030-01-01T00:00:00Z")
        #expect(try now("1893456000") == "2030-01-01T00:00:00Z")
        let ahead = try #require(try now("+2d"))
        let parsed = try #require(try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(ahead))
        #expect(abs(parsed.timeIntervalSinceNow - 2 * 86_400) < 120)
        let bad = try CLI.run(["timeline", CLI.fixtures + "/good.so", "--kind", "test.fixture", "--now", "soon"])
        #expect(bad.status == 2)
    }
}
