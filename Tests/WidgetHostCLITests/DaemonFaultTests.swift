import Foundation
import Testing
import WidgetHostControl
import WidgetHostScheduler

@testable import WidgetHostStore

/// The real daemon against bad state files, a second daemon, and files'
/// permissions (issue 16).
@Suite("widgethost run: bad state and a second daemon", .serialized)
struct DaemonStateFaultTests {
    /// A value a plugin once returned (`after(now + 1e25)`), committed before
    /// the crash it caused, no longer crash-loops the daemon: the row is set
    /// aside with a log line, the instance starts afresh, the next start is clean.
    @Test func aBadNumberInTheStateIsSetAsideNotACrashLoop() throws {
        let daemon = try DaemonProcess("bad-state", configuration: busyConfiguration)
        try daemon.start()
        try waitUntil("the leaderboard has a timeline") {
            try daemon.status().instances.first { $0.id == "board" }?.shows != nil
        }
        #expect(daemon.stop() == 0)
        do {
            let store = try StateStore(path: daemon.state)
            try store.execute(
                sql:
                    "UPDATE timeline SET policy = 'after', policyDate = \(Date().timeIntervalSince1970 + 1e25) WHERE instanceID = 'board'"
            )
            try store.execute(sql: "UPDATE instance SET policyDue = 1e300, lastReloadAt = -1e19 WHERE id = 'panda'")
        }
        try daemon.start()
        try waitUntil("both instances have a timeline again") {
            let status = try daemon.status()
            return status.instances.filter { ["board", "panda"].contains($0.id) && $0.shows != nil }.count == 2
        }
        let log = daemon.logText
        #expect(log.contains("state: set aside timeline row board: policyDate is 1.0000000000000003e+25"), "\(log)")
        #expect(log.contains("state: set aside instance row panda: policyDue is 1e+300"), "\(log)")
        #expect(daemon.stop() == 0)
        let store = try StateStore(path: daemon.state)
        #expect(try store.setAsideRows().map(\.key).sorted() == ["board", "panda"])
        #expect(try store.loadSchedulerState().instances.count == 3)

        // The next start finds nothing to set aside.
        try daemon.start()
        #expect(daemon.logText.components(separatedBy: "state: set aside").count - 1 == 2)
        #expect(daemon.stop() == 0)
    }

    /// One daemon per state file: a second one exits 2 naming the first's
    /// pid, and touches nothing. The state file is 0600, the socket's
    /// directory 0700.
    @Test func aSecondDaemonOnTheSameStateExits2NamingTheFirst() throws {
        let daemon = try DaemonProcess("second", configuration: busyConfiguration)
        let first = try daemon.start()
        let second = try CLI.run([
            "run", "--config", daemon.config, "--state", daemon.state, "--socket", daemon.directory + "/two/c.sock",
        ])
        #expect(second.status == 2)
        #expect(
            second.stderr.contains(
                "another widgethost daemon (pid \(first.processIdentifier)) is using the state file \(daemon.state)"),
            "\(second.stderr)")
        #expect(!FileManager.default.fileExists(atPath: daemon.directory + "/two/c.sock"))
        #expect(try daemon.hello().server?.pid == first.processIdentifier, "the first daemon goes on")

        var info = stat()
        #expect(stat(daemon.state, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600, "the state file is owner-only")
        #expect(daemon.stop() == 0)

        // Once the first has stopped, a daemon on a socket in a new directory starts; the directory is 0700.
        let runtime = daemon.directory + "/run/widgethost"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.executable)
        process.arguments = [
            "run", "--config", daemon.config, "--state", daemon.state, "--socket", runtime + "/c.sock",
        ]
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        try waitUntil("the daemon listens in \(runtime)") {
            var client = try? ControlClient.connect(to: runtime + "/c.sock")
            defer { client?.close() }
            return (try? client?.send(ControlRequest(.hello))) != nil
        }
        #expect(stat(runtime, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700, "the runtime directory is owner-only")
    }

    /// A state file written by a newer widgethost is refused (exit 2) with
    /// what to do, and left as it was.
    @Test func aStateFileFromANewerVersionIsRefused() throws {
        let daemon = try DaemonProcess("newer", configuration: busyConfiguration)
        do {
            let store = try StateStore(path: daemon.state)
            try store.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v7')")
        }
        let result = try CLI.run(["run", "--config", daemon.config, "--state", daemon.state, "--socket", daemon.socket])
        #expect(result.status == 2)
        #expect(
            result.stderr.contains("was written by a newer widgethost (schema migrations v7 unknown"),
            "\(result.stderr)")
        #expect(result.stderr.contains("run the newer widgethost, or move the file away"))
        #expect(!FileManager.default.fileExists(atPath: daemon.socket))
    }
}
