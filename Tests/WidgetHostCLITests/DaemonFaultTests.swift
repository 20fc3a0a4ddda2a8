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
        // Another state, the first daemon's socket: refused the same way (2, not a restart loop).
        let third = try CLI.run([
            "run", "--config", daemon.config, "--state", daemon.directory + "/third.sqlite", "--socket", daemon.socket,
        ])
        #expect(third.status == 2, "\(third.stderr)")
        #expect(third.stderr.contains("another daemon is listening"), "\(third.stderr)")
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
            let deadline = Date().addingTimeInterval(60)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning {
                Issue.record("the second daemon did not exit within 60 s of SIGTERM")
                kill(process.processIdentifier, SIGKILL)
            }
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

/// CPU time (user + system, seconds) the process has used, from /proc/PID/stat.
func cpuSeconds(of pid: Int32) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return 0 }
    let fields = text[text.index(after: close)...].split(separator: " ")
    // After the command: state is field 3, utime 14, stime 15 (1-based) → 11, 12 here.
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// A non-blocking connection to `path` (nil when the listener's backlog is full).
func connectWithoutWaiting(_ path: String) -> Int32? {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        let bytes = Array(path.utf8)
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard result == 0 else {
        close(fd)
        return nil
    }
    return fd
}

/// A configuration with one instance that reloads once at start and then rarely.
let quietConfiguration = """
    {
      "plugins": [{ "name": "countdown", "path": "@BUILD@/libCountdownPlugin.so" }],
      "instances": [
        { "id": "new-year", "plugin": "countdown", "kind": "com.widgethost.countdown", "app": "com.example.calendar" }
      ]
    }
    """

/// The real daemon against a full disk and exhausted descriptors (issue 16).
@Suite("widgethost run: host faults", .serialized)
struct DaemonHostFaultTests {
    /// The state on a small tmpfs filled to the brim: the daemon stops
    /// acting on what it cannot store (reloads pause, changing requests get
    /// `storage-unavailable` and change nothing), logs once, keeps answering
    /// `status`, and resumes by itself when space returns; every
    /// acknowledged change survives a `kill -9` afterwards. Entries that
    /// became current while nothing could be written get their `entry`
    /// event once the store is back.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/bin/mount")))
    func aFullDiskPausesTheDaemonAndItResumesByItself() throws {
        // `tick` shows its first entry, then three more 45, 46 and 47 s
        // after its reload: during the outage below.
        let configuration =
            busyConfiguration
            .replacingOccurrences(
                of: #""plugins": ["#, with: #""plugins": [{ "name": "ticking", "path": "@FIXTURES@/ticking.so" }, "#
            )
            .replacingOccurrences(
                of: #""instances": ["#,
                with: #"""
                    "instances": [{ "id": "tick", "plugin": "ticking", "kind": "test.fixture", "app": "t",
                                    "configuration": { "start": 45, "spacing": 1 } },
                    """#)
        let daemon = try DaemonProcess("full-disk", configuration: configuration, stateDirectory: "fs")
        let mountPoint = daemon.directory + "/fs"
        #expect(CLI.shell("mount -t tmpfs -o size=6m,mode=0700 widgethost-test \(mountPoint)").status == 0)
        defer { _ = CLI.shell("umount -l \(mountPoint)") }
        try daemon.start()
        try waitUntil("the leaderboard reloaded by its policy 3 times") {
            daemon.reloadLines("board").filter { $0.contains("reason=policy") }.count >= 3
        }
        let ticked = try #require(try daemon.status().instances.first { $0.id == "tick" }?.entryDate)
        // Acknowledged changes: panda's visibility, toggled; the last `ok` must survive.
        var visible = true
        func toggle() throws -> ControlResponse {
            try daemon.send(ControlRequest(.view, instance: "panda", visible: !visible))
        }
        for _ in 0..<3 where try toggle().ok { visible.toggle() }

        // Every byte of the file system taken, right after the WAL was emptied
        // (so the next write must grow a file).
        try StateStore(path: daemon.state).checkpoint()
        _ = CLI.shell("dd if=/dev/zero of=\(mountPoint)/filler bs=64k 2>/dev/null; sync")
        var refused: ControlResponse?
        try waitUntil("a change is refused with storage-unavailable") {
            let answer = try toggle()
            if answer.ok { visible.toggle() } else { refused = answer }
            return refused != nil
        }
        let outageSeen = Date().timeIntervalSince1970
        #expect(refused?.error?.code == .storageUnavailable, "\(String(describing: refused))")
        #expect(refused?.error?.message.contains("nothing was changed") == true)
        let reloadsWhenFull = daemon.reloadLines("board").count
        let returnsWhenFull = daemon.logText.components(separatedBy: "storage available again after").count - 1
        let pid = try #require(daemon.process?.processIdentifier)
        let cpuBefore = cpuSeconds(of: pid)
        sleep(3)
        let used = cpuSeconds(of: pid) - cpuBefore
        #expect(used < 1.0, "paused, the loop does not spin: \(used) s of CPU in 3 s")
        // Status still answers, from memory, and says why; the refused change was undone.
        let status = try daemon.status()
        #expect(status.storageProblem?.contains("unavailable since") == true)
        #expect(try #require(status.instances.first { $0.id == "panda" }).visible == visible)
        // Logged once per outage, never per retry. A small write can still
        // succeed on the full file system (in room a failed, larger write or
        // a checkpoint left in the database's files), so under load the store
        // came back for a moment and failed again (a CI run, 2026-11-28:
        // three outages): each return is logged, and the outage after it once.
        let log = daemon.logText
        let outages = log.components(separatedBy: "storage unavailable:").count - 1
        let returns = log.components(separatedBy: "storage available again after").count - 1
        #expect(
            outages >= 1 && outages == returns + 1, "logged once per outage: \(outages) outages, \(returns) returns")
        // Reloads are paused while the store is out; a moment it came back
        // (above) may run some, as it should.
        if returns == returnsWhenFull {
            #expect(daemon.reloadLines("board").count <= reloadsWhenFull + 1, "reloads are paused")
        }
        #expect(daemon.process?.isRunning == true)

        // Space returns, once tick's last entry is current: the daemon resumes by itself.
        let lastEntry = ticked + 47
        Thread.sleep(forTimeInterval: max(0, lastEntry + 1 - Date().timeIntervalSince1970))
        #expect(CLI.shell("rm -f \(mountPoint)/filler").status == 0)
        try waitUntil("a change is accepted again", timeout: 30) {
            let answer = try toggle()
            if answer.ok { visible.toggle() }
            return answer.ok
        }
        #expect(daemon.logText.contains("storage available again after"))
        #expect(try daemon.status().storageProblem == nil)
        try waitUntil("the leaderboard reloads again") { daemon.reloadLines("board").count > reloadsWhenFull + 2 }
        #expect(
            daemon.reloadLines("board").allSatisfy { !$0.contains("crashed") }, "no plugin is blamed for the disk")
        #expect(try daemon.status().plugins.allSatisfy { $0.state == "loaded" && $0.crashes == 0 })

        try waitUntil("tick's entry event is written") {
            let shown = try daemon.status().instances.first { $0.id == "tick" }?.entryDate ?? 0
            let events = try StateStore(path: daemon.state).events(after: 0, limit: 100_000)
            return abs(shown - lastEntry) < 0.001 && events.contains { $0.kind == "entry" && $0.instanceID == "tick" }
        }

        // Nothing acknowledged was lost.
        daemon.kill9()
        let store = try StateStore(path: daemon.state)
        let stored = try store.loadSchedulerState()
        #expect(try #require(stored.instances.first { $0.instance.id == "panda" }).instance.isVisible == visible)
        // tick's entries all became current during the outage: one `entry`
        // event, written when the store was back, for the one displayed then.
        #expect(outageSeen < ticked + 45, "the outage began \(outageSeen - ticked) s after tick's reload")
        let entries = try store.events(after: 0, limit: 100_000).filter {
            $0.kind == "entry" && $0.instanceID == "tick"
        }
        #expect(entries.count == 1, "\(entries.map(\.message))")
        let details = try entries.first.flatMap { $0.data }.map {
            try JSONDecoder().decode(WatchEventDetails.self, from: Data($0.utf8))
        }
        #expect(abs((details?.entryDate ?? 0) - lastEntry) < 0.001, "\(entries.map(\.message))")
        #expect((entries.first?.time ?? 0) > lastEntry)
    }

    /// A client that sends thousands of requests at once and reads none of
    /// the answers: the daemon takes a few of its requests a turn, stops
    /// reading it while its answers wait (the rest wait in the socket), and
    /// goes on answering others and reloading. It once read 4 MiB of
    /// requests and answered them all in one turn: another client waited
    /// 16 s and the daemon grew to 729 MB.
    @Test func aClientFloodingRequestsDoesNotHoldUpOthers() throws {
        let daemon = try DaemonProcess("flood", configuration: busyConfiguration)
        try daemon.start()
        try waitUntil("the leaderboard has a timeline") {
            try daemon.status().instances.first { $0.id == "board" }?.shows != nil
        }
        let flood = try LineSocket.connect(to: daemon.socket)
        defer { flood.close() }
        let lines = Array(String(repeating: #"{"v":2,"op":"status","limit":1000}"# + "\n", count: 40_000).utf8)
        // Blocks once the daemon stops reading it: on a thread of its own.
        let writer = Thread { try? flood.write(lines) }
        writer.start()
        sleep(1)
        let pid = try #require(daemon.process?.processIdentifier)
        var slowest = 0.0
        for _ in 0..<5 {
            let started = Date()
            #expect(try daemon.hello().ok)
            slowest = max(slowest, Date().timeIntervalSince(started))
        }
        #expect(slowest < 2, "hello took \(slowest) s while another client floods")
        let resident = residentMegabytes(of: pid)
        #expect(resident < 200, "the daemon holds \(resident) MB")
        let reloads = daemon.reloadLines("board").count
        try waitUntil("reloads go on") { daemon.reloadLines("board").count > reloads }
        #expect(daemon.stop() == 0)
    }

    /// More clients than the daemon takes: the extra ones are told
    /// `too-many-connections`; the daemon raises its soft descriptor limit,
    /// keeps answering and reloading.
    @Test func aConnectionCapRefusesClearly() throws {
        let daemon = try DaemonProcess("cap", configuration: busyConfiguration)
        let process = try daemon.start(descriptorLimit: 128)
        // The cap with a limit of 128: 128 - 64 kept for plugins and the state = 64.
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        var refusals = 0
        try waitUntil("150 clients connected") {
            if let fd = connectWithoutWaiting(daemon.socket) { held.append(fd) }  // nil: the backlog is full, retry
            return held.count == 150
        }
        try waitUntil("the extra clients are told why") {
            refusals = 0
            for fd in held {
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT | MSG_PEEK))
                if count > 0, String(decoding: buffer[..<count], as: UTF8.self).contains("too-many-connections") {
                    refusals += 1
                }
            }
            return refusals >= 150 - 64 - 2
        }
        #expect(daemon.logText.contains("refused a control connection"))
        #expect(daemon.logText.components(separatedBy: "refused a control connection").count - 1 <= 2, "logged once")
        // The daemon goes on: an accepted connection is answered, reloads go on.
        let before = daemon.reloadLines("board").count
        try waitUntil("the leaderboard reloads while the connections are held") {
            daemon.reloadLines("board").count > before + 2
        }
        for fd in held { close(fd) }
        held = []
        try waitUntil("new clients are accepted again") { (try? daemon.hello())?.ok == true }
        #expect(try daemon.status().plugins.allSatisfy { $0.crashes == 0 })
        #expect(process.isRunning)
        #expect(daemon.stop() == 0)
    }

    /// Descriptors exhausted (a connection limit set above RLIMIT_NOFILE):
    /// `accept` fails with EMFILE; the daemon refuses the waiting client,
    /// pauses accepting instead of spinning (CPU stays low), logs once, and
    /// accepts again when descriptors are freed.
    @Test func outOfDescriptorsTheDaemonBacksOffInsteadOfSpinning() throws {
        let daemon = try DaemonProcess(
            "emfile",
            configuration: quietConfiguration.replacingOccurrences(
                of: "\"instances\"", with: "\"daemon\": { \"maximumConnections\": 5000 },\n  \"instances\""))
        let process = try daemon.start(descriptorLimit: 96)
        try waitUntil("the countdown has its first timeline") {
            try daemon.status().instances.first?.shows != nil
        }
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        // Connect until the daemon runs out (a full backlog refuses a connect: retried on the next poll).
        try waitUntil("the daemon says it is out of descriptors", timeout: 60) {
            for _ in 0..<20 where held.count < 400 {
                if let fd = connectWithoutWaiting(daemon.socket) { held.append(fd) }
            }
            return daemon.logText.contains("out of file descriptors")
        }
        let pid = process.processIdentifier
        let cpuBefore = cpuSeconds(of: pid)
        sleep(3)
        let used = cpuSeconds(of: pid) - cpuBefore
        #expect(used < 1.0, "the loop does not spin: \(used) s of CPU in 3 s")
        #expect(daemon.logText.components(separatedBy: "out of file descriptors").count - 1 <= 3)
        for fd in held { close(fd) }
        held = []
        try waitUntil("new clients are accepted again") { (try? daemon.hello())?.ok == true }
        #expect(try daemon.status().plugins.allSatisfy { $0.state == "loaded" && $0.crashes == 0 })
        #expect(daemon.stop() == 0)
    }
}

/// Signals while a plugin call never ends (issue 16).
@Suite("widgethost run: signals under load", .serialized)
struct DaemonSignalTests {
    /// SIGTERM while a call runs: the daemon stops once that call has
    /// ended (here its 2 s timeout), not at the end of the grace period. It
    /// once waited the whole period in two stops out of three (release, a
    /// stopped worker): the call's completion woke the loop a moment before
    /// its queue counted it done. That race is not reproduced at will here
    /// (this test passed without the fix, twice, in a debug build); the
    /// loop now looks every 50 ms while stopping, so it cannot wait long
    /// past the call's end.
    @Test func sigtermStopsOnceTheRunningCallHasEnded() throws {
        let daemon = try DaemonProcess(
            "grace",
            configuration: """
                {
                  "plugins": [{ "name": "hang", "path": "@FIXTURES@/hang.so" }],
                  "daemon": { "shutdownGracePeriod": "40s" },
                  "instances": [{ "id": "stuck", "plugin": "hang", "kind": "test.fixture", "timeout": "2s" }]
                }
                """)
        try daemon.start()
        // Running in the runner, not only issued: a reload still queued
        // behind the worker's start (a busy machine) stays queued at a
        // SIGTERM, and the daemon stops at once without a timeout to log.
        try waitUntil("the call is running") {
            let status = try daemon.status()
            return status.instances.first { $0.id == "stuck" }?.inFlight == true
                && status.plugins.first { $0.name == "hang" }?.calling == true
        }
        let text = try CLI.run(["status", "--socket", daemon.socket])
        let pluginLine = text.stdout.split(separator: "\n").first { $0.hasPrefix("  hang  loaded") }
        #expect(pluginLine?.hasSuffix("  calling") == true, "\(text.stdout)")
        let started = Date()
        #expect(daemon.stop() == 0)
        let took = Date().timeIntervalSince(started)
        #expect(took < 20, "stopped \(took) s after SIGTERM; the call timed out after 2 s, the grace period is 40 s")
        #expect(daemon.reloadLines("stuck").contains { $0.contains("timedOut") }, "\(daemon.logText)")
    }

    /// A call that never returns (a busy loop, timeout 10 minutes) neither
    /// delays SIGHUP (applied at once, not after the call) nor SIGTERM
    /// (the running call gets the grace period, then the daemon exits 0; the
    /// reload stays in flight in the state and runs after the restart).
    @Test func sighupAndSigtermDoNotWaitForAHungCall() throws {
        let configuration = """
            {
              "plugins": [{ "name": "hang", "path": "@FIXTURES@/hang.so" },
                          { "name": "countdown", "path": "@BUILD@/libCountdownPlugin.so" }],
              "daemon": { "shutdownGracePeriod": "1s" },
              "instances": [
                { "id": "stuck", "plugin": "hang", "kind": "test.fixture", "timeout": "10m" }
              ]
            }
            """
        let daemon = try DaemonProcess("hung", configuration: configuration)
        let process = try daemon.start()
        try waitUntil("the hung call is running") {
            try daemon.status().instances.first { $0.id == "stuck" }?.inFlight == true
        }
        // SIGHUP adds an instance: applied while the call hangs.
        let added = configuration.replacingOccurrences(
            of: #""timeout": "10m" }"#,
            with:
                #""timeout": "10m" }, { "id": "new-year", "plugin": "countdown", "kind": "com.widgethost.countdown" }"#
        ).replacingOccurrences(of: "@BUILD@", with: CLI.buildDirectory).replacingOccurrences(
            of: "@FIXTURES@", with: CLI.fixtures)
        try added.write(toFile: daemon.config, atomically: true, encoding: .utf8)
        kill(process.processIdentifier, SIGHUP)
        try waitUntil("new-year has its first timeline while the call still hangs") {
            try daemon.status().instances.first { $0.id == "new-year" }?.shows != nil
        }
        #expect(try daemon.status().instances.first { $0.id == "stuck" }?.inFlight == true)

        // SIGTERM: the hung call gets 1 s, then the daemon exits 0.
        let started = Date()
        #expect(daemon.stop() == 0)
        #expect(Date().timeIntervalSince(started) < 60, "not the call's 10-minute timeout")
        #expect(daemon.logText.contains("grace period of 1.0s over: killing the calls still running (hang)"))
        let stored = try StateStore(path: daemon.state).loadSchedulerState()
        #expect(
            try #require(stored.instances.first { $0.instance.id == "stuck" }).inFlight != nil,
            "the reload stays in flight in the state: it runs again after the restart")
    }
}

/// `status` at any size (issue 16): pages with a cursor, a summary of all.
@Suite("widgethost run: status at any size", .serialized)
struct DaemonStatusPagingTests {
    @Test func statusIsPagedWithACursorAndSummarised() throws {
        // 1,500 instances of a plugin that fails to load: no calls, cheap to start.
        let instances = (0..<1500).map {
            #"{ "id": "w\#($0)", "plugin": "broken", "kind": "test.fixture", "visible": \#($0 % 2 == 0) }"#
        }
        let daemon = try DaemonProcess(
            "paging",
            configuration: """
                { "plugins": [{ "name": "broken", "path": "@FIXTURES@/ctor_crash.so" }],
                  "instances": [\(instances.joined(separator: ",\n"))] }
                """)
        try daemon.start()
        var ids: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let answer = try daemon.send(ControlRequest(.status, limit: 500, after: cursor))
            let status = try #require(answer.status, "\(String(describing: answer.error))")
            #expect(status.summary?.instances == 1500)
            #expect(status.summary?.visible == 750)
            #expect(status.summary?.unavailable == 1500)
            #expect(status.instances.count <= 500)
            ids += status.instances.map(\.id)
            cursor = status.nextCursor
            pages += 1
        } while cursor != nil && pages < 10
        #expect(pages == 3)
        #expect(ids == (0..<1500).map { "w\($0)" }, "every instance once, in order")

        let stale = try daemon.send(ControlRequest(.status, after: "gone"))
        #expect(stale.error?.code == .badArgument)
        let tooMany = try daemon.send(ControlRequest(.status, limit: 1_000_000))
        #expect(tooMany.error?.code == .badArgument)

        // The CLI: the first page and the summary by default, every instance with --all.
        let socket = ["--socket", daemon.socket]
        let first = try CLI.run(["status"] + socket)
        #expect(first.stdout.contains("1500 instances: 750 visible"))
        #expect(first.stdout.contains("(the first 1000 of 1500; `widgethost status --all`"))
        let all = try CLI.json(try CLI.run(["status", "--all", "--json"] + socket).stdout)
        #expect((all["instances"] as? [Any])?.count == 1500)
        #expect(all["schemaVersion"] as? Int == 1)
        #expect(all["nextCursor"] == nil)
        let two = try CLI.json(try CLI.run(["status", "w7", "w1400", "--json"] + socket).stdout)
        #expect((two["instances"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["w7", "w1400"])
        #expect(daemon.stop() == 0)
    }
}

/// Plugins do not reach the control socket (issue 14, item 4, the daemon's side).
@Suite("widgethost run: clients inside a sandbox", .serialized)
struct DaemonPeerTests {
    /// A client in another PID namespace (as a plugin's call is) or another
    /// user namespace is refused, though its uid is the daemon's; a client
    /// beside the daemon is answered. Settings go to an instance's app only.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")))
    func clientsInAnotherPidOrUserNamespaceAreRefused() throws {
        let daemon = try DaemonProcess("peer", configuration: busyConfiguration)
        try daemon.start()
        let command = "'\(CLI.executable)' configurations --app com.example.game --socket '\(daemon.socket)'"
        let pidNamespace = CLI.shell("/usr/bin/unshare --pid --fork \(command)")
        #expect(pidNamespace.status == 1)
        #expect(
            pidNamespace.output.contains("control connections from inside a plugin sandbox are refused"),
            "\(pidNamespace.output)")
        #expect(!pidNamespace.output.contains("panda"), "nothing about the instances is told")
        let userNamespace = CLI.shell("/usr/bin/unshare --user --map-root-user \(command)")
        #expect(userNamespace.status == 1)
        #expect(userNamespace.output.contains("another user namespace"), "\(userNamespace.output)")
        #expect(daemon.logText.contains("refused a control connection from pid"))

        // Beside the daemon: answered; the settings only to the instance's app.
        let mine = try daemon.send(ControlRequest(.configurations, app: "com.example.game"))
        #expect(mine.configurations?.count == 2)
        let anyone = try daemon.send(ControlRequest(.configurations))
        #expect(anyone.configurations?.count == 3)
        #expect(anyone.configurations?.allSatisfy { $0.configuration == "{}" } == true)
        #expect(daemon.stop() == 0)
    }
}

@Suite("widgethost run: logging to the journal", .serialized)
struct DaemonJournalTests {
    /// With standard error on the journal (`JOURNAL_STREAM` names it), every
    /// line starts with its syslog priority and has no timestamp.
    @Test func linesCarryTheirPriorityWhenStandardErrorIsTheJournal() throws {
        let daemon = try DaemonProcess("journal", configuration: quietConfiguration)
        _ = FileManager.default.createFile(atPath: daemon.log, contents: nil)
        var info = stat()
        #expect(stat(daemon.log, &info) == 0)
        try daemon.start(environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"])
        #expect(daemon.stop() == 0)
        let lines = daemon.logText.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("<6>widgethost: [WidgetHostDaemon] widgethost daemon ") })
        #expect(lines.contains { $0.hasPrefix("<5>widgethost: [WidgetHostDaemon] SIGTERM: shutting down") })
        #expect(lines.allSatisfy { $0.hasPrefix("<") }, "\(lines)")

        // A JOURNAL_STREAM that is not standard error (inherited by a child whose
        // output was redirected) is ignored.
        let other = try DaemonProcess("journal-other", configuration: quietConfiguration)
        try other.start(environment: ["JOURNAL_STREAM": "1:2"])
        #expect(other.stop() == 0)
        #expect(other.logText.split(separator: "\n").allSatisfy { !$0.hasPrefix("<") })
    }
}

/// The resident set of `pid`, MB (/proc/PID/statm), 0 when unreadable.
func residentMegabytes(of pid: Int32) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE))) >> 20
}
