import Foundation
import Testing
import WidgetHostStore
import WidgetHostTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The C client library (SDK/client, <widgethost/center.h>) and the sample
/// app (samples/app/market-update), built with their Makefiles, against the
/// real `widgethost run` daemon: WidgetKit's shared-container flow end to end.
@Suite("C client library and sample app", .serialized)
struct CenterClientTests {
    static let marketKind = "com.widgethost.market-hours"
    static let reloadReason = "reason=reloadTimelines(ofKind: com.widgethost.market-hours) by com.example.broker"

    /// The header compiles as C99 and C++11; the library passes its own
    /// tests against a scripted fake daemon (malformed, oversized and
    /// out-of-step answers, reconnection, escaping, the default paths).
    @Test func headerAndLibraryChecks() {
        let check = CLI.shell("make -s -C '\(CLI.repositoryRoot)/SDK/client' check")
        #expect(check.status == 0, "make check failed:\n\(check.output)")
        let test = CLI.shell("make -s -C '\(CLI.repositoryRoot)/SDK/client' test")
        #expect(test.status == 0, "make test failed:\n\(test.output)")
        #expect(!test.output.contains("not ok") && test.output.contains("\n1..3"), "\(test.output)")
    }

    @Test func sampleAppWritesTheSharedContainerAndTheDaemonReloads() throws {
        let built = try CenterBuild.shared.get()
        let sandbox = try CenterSandbox()
        defer { sandbox.remove() }
        var daemon = try sandbox.startDaemon()
        defer { daemon.stop() }

        // The data directory the daemon reports (and gives the plugin).
        let dataDirectory = sandbox.dataHome + "/widgethost/plugins/market"
        let configurations = try built.probe(sandbox.socket, "configurations")
        #expect(configurations.rc == 1, "\(configurations.output)")
        #expect(
            configurations.output.contains(
                "widget id=nyse kind=\(Self.marketKind) family=systemSmall app=com.example.broker plugin=market configuration={} data=\(dataDirectory)\n"
            ), "\(configurations.output)")

        // The app: new prices into market.json there, then reloadTimelines(ofKind:).
        let app = CLI.shell(
            "env -u WIDGETHOST_APP WIDGETHOST_SOCKET='\(sandbox.socket)' '\(built.app)' AAPL=240.10 NEW=12.5")
        #expect(app.status == 0, "market-update failed:\n\(app.output)")
        #expect(app.output.contains("wrote \(dataDirectory)/market.json"), "\(app.output)")
        #expect(app.output.contains("will reload: nyse"), "\(app.output)")

        let file = try String(contentsOfFile: dataDirectory + "/market.json", encoding: .utf8)
        let market = try CLI.json(file)
        let prices = try #require(market["prices"] as? [String: Any], "\(file)")
        #expect((prices["AAPL"] as? NSNumber)?.doubleValue == 240.10, "\(file)")
        #expect((prices["NEW"] as? NSNumber)?.doubleValue == 12.5, "\(file)")
        #expect(market["exchange"] as? String == "NYSE", "\(file)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dataDirectory).filter {
            $0 != "market.json"
        }
        #expect(leftovers.isEmpty, "temporary files left behind: \(leftovers)")

        // A second run updates in place: AAPL replaced, NEW kept, MSFT added.
        let again = CLI.shell(
            "env -u WIDGETHOST_APP WIDGETHOST_SOCKET='\(sandbox.socket)' '\(built.app)' AAPL=241 MSFT=415.5")
        #expect(again.status == 0, "market-update failed:\n\(again.output)")
        let updated = try #require(
            try CLI.json(String(contentsOfFile: dataDirectory + "/market.json", encoding: .utf8))["prices"]
                as? [String: Any])
        #expect(updated.keys.sorted() == ["AAPL", "MSFT", "NEW"], "\(updated)")
        #expect((updated["AAPL"] as? NSNumber)?.doubleValue == 241)

        // The daemon reloads the instance for the app's request (one log line
        // per reload; the first counted reload is not deferred).
        let line = try #require(
            sandbox.waitForLog(seconds: 60) { $0.contains("reload nyse \(Self.reloadReason) ") },
            "no reload of nyse for the app's request in the daemon's log:\n\(sandbox.log)")
        #expect(line.contains("outcome=ok"), "\(line)")

        // And the plugin, reading that directory, shows the app's prices.
        let timeline = try CLI.run([
            "timeline", CLI.buildDirectory + "/libMarketHoursPlugin.so", "--kind", Self.marketKind, "--data-dir",
            dataDirectory, "--json",
        ])
        #expect(timeline.status == 0, "\(timeline.stderr)")
        #expect(timeline.stdout.contains("\"AAPL\" : 241"), "\(timeline.stdout)")
        #expect(timeline.stdout.contains("\"source\" : \"\(dataDirectory)/market.json\""), "\(timeline.stdout)")

        // An unknown kind (quotes and a newline in it: escaped on the way out):
        // -1 with the daemon's own message.
        let unknown = try built.probe(sandbox.socket, "reload", "no.such\"kind\n")
        #expect(unknown.rc == -1, "\(unknown.output)")
        #expect(unknown.output.contains("code=unknown-kind\n"), "\(unknown.output)")
        #expect(
            unknown.output.contains("error=no plugin declares kind \"no.such\"kind\n\"; kinds: \(Self.marketKind)"),
            "\(unknown.output)")

        // Raw requests: ok, and refused with the daemon's code.
        let hello = try built.probe(sandbox.socket, "request", #"{"v":1,"id":42,"op":"hello"}"#)
        #expect(hello.rc == 0, "\(hello.output)")
        #expect(hello.output.contains(#""id":42"#) && hello.output.contains(#""ok":true"#), "\(hello.output)")
        let version = try built.probe(sandbox.socket, "request", #"{"v":9,"id":1,"op":"hello"}"#)
        #expect(version.rc == -1 && version.output.contains("code=unsupported-version\n"), "\(version.output)")

        // One wh_center across a daemon restart: it connects again by itself.
        let go = sandbox.directory + "/go"
        let waiting = try built.startProbe(sandbox.socket, "restart", go, output: sandbox.directory + "/probe.out")
        defer { if waiting.isRunning { kill(waiting.processIdentifier, SIGKILL) } }
        #expect(
            sandbox.wait(seconds: 60) {
                (try? String(contentsOfFile: sandbox.directory + "/probe.out", encoding: .utf8))?.contains("first rc=0")
                    == true
            },
            "the probe's first request failed: \((try? String(contentsOfFile: sandbox.directory + "/probe.out", encoding: .utf8)) ?? "")"
        )
        #expect(daemon.stop() == 0, "the daemon did not exit 0 on SIGTERM:\n\(sandbox.log)")
        daemon = try sandbox.startDaemon()
        _ = FileManager.default.createFile(atPath: go, contents: Data())
        #expect(sandbox.wait(seconds: 60) { !waiting.isRunning }, "the probe did not finish")
        let restarted = (try? String(contentsOfFile: sandbox.directory + "/probe.out", encoding: .utf8)) ?? ""
        #expect(restarted.contains("second rc=0"), "\(restarted)")

        // SIGTERM: a clean exit.
        #expect(daemon.stop() == 0, "the daemon did not exit 0 on SIGTERM:\n\(sandbox.log)")

        // The timeline the daemon stored (and displays) was built from the
        // app's data. (`status` shows only its first 80 characters.)
        let state = try StateStore(path: sandbox.directory + "/state.sqlite").loadSchedulerState()
        let entries = try #require(state.instances.first { $0.instance.id == "nyse" }?.timeline?.entries)
        #expect(!entries.isEmpty)
        for entry in entries {
            let content = try CLI.json(entry.contentJSON)
            let shown = content["prices"] as? [String: Any]
            #expect((shown?["NEW"] as? NSNumber)?.doubleValue == 12.5, "\(entry.contentJSON)")
        }
    }

    @Test func withoutADaemonTheErrorNamesTheSocket() throws {
        let built = try CenterBuild.shared.get()
        let sandbox = try CenterSandbox()
        defer { sandbox.remove() }

        let probe = try built.probe(sandbox.socket, "reload", Self.marketKind)
        #expect(probe.rc == -1, "\(probe.output)")
        #expect(probe.output.contains("code=not-running\n"), "\(probe.output)")
        #expect(
            probe.output.contains("error=no widgethost daemon is listening on \(sandbox.socket) "), "\(probe.output)")
        #expect(probe.output.contains("`widgethost run`"), "\(probe.output)")

        let app = CLI.shell("WIDGETHOST_SOCKET='\(sandbox.socket)' '\(built.app)' AAPL=1")
        #expect(app.status == 1, "\(app.output)")
        #expect(app.output.contains("no widgethost daemon is listening on \(sandbox.socket)"), "\(app.output)")

        // --data-dir needs the daemon only for the reload: the file is written first.
        let direct = CLI.shell(
            "WIDGETHOST_SOCKET='\(sandbox.socket)' '\(built.app)' --data-dir '\(sandbox.directory)' AAPL=1.5")
        #expect(direct.status == 1, "\(direct.output)")
        #expect(direct.output.contains("the prices are saved"), "\(direct.output)")
        let written = try CLI.json(String(contentsOfFile: sandbox.directory + "/market.json", encoding: .utf8))
        #expect(((written["prices"] as? [String: Any])?["AAPL"] as? NSNumber)?.doubleValue == 1.5)

        // Usage errors exit 2.
        #expect(CLI.shell("'\(built.app)'").status == 2)
        #expect(CLI.shell("'\(built.app)' AAPL=abc").status == 2)
    }
}

/// The library, the sample app and a probe built once per test run with make.
struct CenterBuild: Sendable {
    var app: String
    var probeExecutable: String

    static let shared: Result<CenterBuild, CenterBuildError> = {
        let root = CLI.repositoryRoot
        let library = CLI.shell("make -s -C '\(root)/SDK/client' && make -s -C '\(root)/samples/app'")
        guard library.status == 0 else { return .failure(CenterBuildError(output: library.output)) }
        let directory = CLI.temporaryDirectory("center-probe")
        let source = directory + "/probe.c"
        do { try probeSource.write(toFile: source, atomically: true, encoding: .utf8) } catch {
            return .failure(CenterBuildError(output: "\(error)"))
        }
        let probe = directory + "/probe"
        let compile = CLI.shell(
            "cc -std=c99 -Wall -Wextra -pedantic -Werror -o '\(probe)' '\(source)' $(PKG_CONFIG_PATH='\(root)/SDK' pkg-config --cflags --libs widgethost-center)"
        )
        guard compile.status == 0 else { return .failure(CenterBuildError(output: compile.output)) }
        return .success(CenterBuild(app: root + "/samples/app/market-update", probeExecutable: probe))
    }()

    /// Runs the probe; `rc` is the first `rc=` it printed.
    func probe(_ socket: String, _ arguments: String...) throws -> (rc: Int, output: String) {
        let process = Process()
        // Bounded: a probe that hangs fails its test instead of the whole run.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["-k", "10", "300", probeExecutable, socket] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let output = String(decoding: data, as: UTF8.self)
        let rc = output.split(separator: "\n").first { $0.hasPrefix("rc=") }.flatMap { Int($0.dropFirst(3)) }
        return (rc ?? -99, output)
    }

    /// Starts the probe in the background, its output going to `output`.
    func startProbe(_ socket: String, _ operation: String, _ argument: String, output: String) throws -> Process {
        _ = FileManager.default.createFile(atPath: output, contents: Data())
        let process = Process()
        process.executableURL = URL(fileURLWithPath: probeExecutable)
        process.arguments = [socket, operation, argument]
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return process
    }

    /// A C program over the whole API; prints `rc=`, `code=` and `error=` lines.
    static let probeSource = #"""
        #define _POSIX_C_SOURCE 200809L
        #include <widgethost/center.h>
        #include <stdio.h>
        #include <string.h>
        #include <time.h>
        #include <unistd.h>

        static void report(wh_center *c, const char *label, int rc) {
            printf("%src=%d\ncode=%s\nerror=%s\n", label, rc, wh_center_last_error_code(c), wh_center_last_error(c));
        }

        int main(int argc, char **argv) {
            if (argc < 3) return 2;
            wh_center *c = wh_center_open(argv[1], "com.example.broker");
            if (!c) return 1;
            if (strcmp(argv[2], "reload") == 0 && argc == 4) {
                char **ids = NULL;
                int rc = wh_center_reload_timelines(c, argv[3], &ids);
                report(c, "", rc);
                for (int i = 0; rc > 0 && ids[i]; i++) printf("scheduled %s\n", ids[i]);
                wh_center_free(ids);
            } else if (strcmp(argv[2], "configurations") == 0) {
                wh_widget_info *w = NULL;
                int rc = wh_center_get_configurations(c, &w);
                report(c, "", rc);
                for (int i = 0; i < rc; i++)
                    printf("widget id=%s kind=%s family=%s app=%s plugin=%s configuration=%s data=%s\n", w[i].id,
                           w[i].kind, w[i].family, w[i].app, w[i].plugin, w[i].configuration,
                           w[i].data_directory ? w[i].data_directory : "(none)");
                wh_center_free(w);
            } else if (strcmp(argv[2], "request") == 0 && argc == 4) {
                char *response = NULL;
                int rc = wh_center_request(c, argv[3], &response);
                report(c, "", rc);
                printf("response=%s\n", response ? response : "(none)");
                wh_center_free(response);
            } else if (strcmp(argv[2], "restart") == 0 && argc == 4) {
                /* One request, then another on the same center once argv[3] exists. */
                wh_widget_info *w = NULL;
                int rc = wh_center_get_configurations(c, &w);
                wh_center_free(w);
                report(c, "first ", rc < 0 ? rc : 0);
                fflush(stdout);
                for (int i = 0; i < 1200 && access(argv[3], F_OK) != 0; i++) {
                    struct timespec pause = {0, 100000000};
                    nanosleep(&pause, NULL);
                }
                rc = wh_center_get_configurations(c, &w);
                wh_center_free(w);
                report(c, "second ", rc < 0 ? rc : 0);
            } else {
                return 2;
            }
            wh_center_close(c);
            return 0;
        }
        """#
}

struct CenterBuildError: Error, CustomStringConvertible {
    var output: String
    var description: String { "building the C client, the sample app or the probe failed:\n\(output)" }
}

/// A daemon's files: a short directory under /tmp (socket paths hold 107
/// bytes), its configuration over the bundled market-hours plugin, its state,
/// its log, and its own XDG_DATA_HOME.
struct CenterSandbox {
    let directory: String
    var socket: String { directory + "/s.sock" }
    var dataHome: String { directory + "/data" }
    var logPath: String { directory + "/daemon.log" }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    init() throws {
        var template = Array((ScratchDirectory.root + "/whc-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard let made else { throw CenterBuildError(output: "mkdtemp failed") }
        directory = String(cString: made)
        let plugin = CLI.buildDirectory + "/libMarketHoursPlugin.so"
        let configuration = """
            {
              "plugins": [{ "name": "market", "path": "\(plugin)" }],
              "instances": [
                { "id": "nyse", "plugin": "market", "kind": "com.widgethost.market-hours", "app": "com.example.broker" }
              ]
            }
            """
        try configuration.write(toFile: directory + "/host.json", atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: logPath, contents: Data())
    }

    /// Starts `widgethost run` and waits (up to 60 s) until it answers `status`.
    func startDaemon() throws -> CenterDaemon {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.executable)
        process.arguments = [
            "run", "--config", directory + "/host.json", "--state", directory + "/state.sqlite", "--socket", socket,
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = dataHome
        for name in ["WIDGETHOST_SOCKET", "WIDGETHOST_APP", "WIDGETHOST_CONFIG", "WIDGETHOST_STATE"] {
            environment.removeValue(forKey: name)
        }
        process.environment = environment
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        handle.seekToEndOfFile()
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let daemon = CenterDaemon(process: process)
        let ready = wait(seconds: 60) {
            guard process.isRunning else { return true }
            return (try? CLI.run(["status", "--json", "--socket", socket]))?.status == 0
        }
        guard ready, process.isRunning else {
            daemon.stop()
            throw CenterBuildError(output: "the daemon did not start:\n\(log)")
        }
        return daemon
    }

    /// The first log line that satisfies `matches`, waiting up to `seconds`.
    func waitForLog(seconds: Double, _ matches: (Substring) -> Bool) -> String? {
        var found: String?
        _ = wait(seconds: seconds) {
            found = log.split(separator: "\n").first(where: matches).map(String.init)
            return found != nil
        }
        return found
    }

    /// Polls `condition` every 100 ms for up to `seconds`; whether it held.
    func wait(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(100_000)
        }
        return condition()
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

/// A running `widgethost run`.
struct CenterDaemon {
    let process: Process

    /// SIGTERM, then waits up to 30 s (SIGKILL after that); the exit status,
    /// or -1 when it had to be killed or died of a signal.
    @discardableResult
    func stop() -> Int32 {
        guard process.isRunning else {
            return process.terminationReason == .exit ? process.terminationStatus : -1
        }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return -1
        }
        process.waitUntilExit()
        return process.terminationReason == .exit ? process.terminationStatus : -1
    }
}
