import Foundation
import Testing
import WidgetHostIsolation
import WidgetHostModel
import WidgetHostTestSupport

@testable import WidgetHostDaemon

@Suite("The daemon's configuration file")
struct DaemonConfigurationTests {
    func write(_ text: String, files: [String] = []) throws -> String {
        let directory = ScratchDirectory.path("config-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(atPath: directory + "/plugins", withIntermediateDirectories: true)
        for file in files { _ = FileManager.default.createFile(atPath: directory + "/" + file, contents: Data()) }
        try text.write(toFile: directory + "/host.json", atomically: true, encoding: .utf8)
        return directory
    }

    @Test func pluginsFromTheListAndTheDirectoryWithPathsRelativeToTheFile() throws {
        let directory = try write(
            """
            {
              "plugins": [{ "name": "weather", "path": "plugins/libweather.so", "dataDirectory": "data/w" }],
              "pluginDirectory": "plugins",
              "scheduler": { "minimumReloadInterval": "10m", "frequentAllowance": 50 },
              "instances": [
                { "id": "a", "plugin": "weather", "kind": "k", "family": "systemMedium", "configuration": { "city": "Oslo" } },
                { "id": "b", "plugin": "libtides.so", "kind": "t", "visible": false, "timeout": "2s" }
              ]
            }
            """, files: ["plugins/libweather.so", "plugins/libtides.so", "plugins/notes.txt"])
        let configuration = try DaemonConfiguration.load(directory + "/host.json")
        let resolved = try #require(realpath(directory, nil).map { String(cString: $0) })
        #expect(configuration.plugins.map(\.name) == ["weather", "libtides.so"])
        #expect(configuration.plugins[0].path == resolved + "/plugins/libweather.so")
        #expect(configuration.plugins[0].dataDirectory?.hasSuffix("/data/w") == true)
        #expect(configuration.scheduler.minimumReloadInterval == 600)
        #expect(configuration.scheduler.frequentAllowance == 50)
        #expect(configuration.instances[0].configuration == ["city": "\"Oslo\""])
        #expect(configuration.instances[0].family == .systemMedium)
        #expect(configuration.instances[1].visible == false)
        #expect(configuration.instances[1].timeout == 2)
        #expect(configuration.instances[1].app == "default")
    }

    /// A plugin's isolation mode and worker recycling come from the file,
    /// checked like every other number (whole numbers, ranges, durations).
    @Test func isolationAndWorkerRecyclingPerPlugin() throws {
        let directory = try write(
            """
            {
              "plugins": [
                { "name": "w", "path": "plugins/libw.so",
                  "workers": { "maxCalls": 200, "maxResidentMiB": 64, "maxIdleSeconds": "2m", "standbys": 0 } },
                { "name": "f", "path": "plugins/libf.so", "isolation": "fork-server" }
              ],
              "instances": []
            }
            """, files: ["plugins/libw.so", "plugins/libf.so"])
        let configuration = try DaemonConfiguration.load(directory + "/host.json")
        #expect(configuration.plugins[0].isolation == .worker)
        #expect(configuration.plugins[0].recycling.maxCalls == 200)
        #expect(configuration.plugins[0].recycling.maxResidentBytes == 64 << 20)
        #expect(configuration.plugins[0].recycling.maxIdleSeconds == 120)
        #expect(configuration.plugins[0].recycling.standbys == 0)
        #expect(configuration.plugins[1].isolation == .forkServer)
        #expect(configuration.plugins[1].recycling == WorkerRecycling())

        for (bad, field) in [
            (#""isolation": "in-process""#, "plugins[0].isolation"),
            (#""workers": { "maxCalls": 1.5 }"#, "plugins[0].workers.maxCalls"),
            (#""workers": { "maxCalls": 1e300 }"#, "plugins[0].workers.maxCalls"),
            (#""workers": { "standbys": 9 }"#, "plugins[0].workers.standbys"),
        ] {
            let broken = try write(
                #"{ "plugins": [{ "path": "plugins/libw.so", \#(bad) }], "instances": [] }"#,
                files: ["plugins/libw.so"])
            #expect(throws: (any Error).self, "\(bad)") { try DaemonConfiguration.load(broken + "/host.json") }
            do {
                _ = try DaemonConfiguration.load(broken + "/host.json")
            } catch {
                #expect("\(error)".contains(field), "\(error)")
            }
        }
    }

    /// A configuration from a pipe (`--config <(...)`, a FIFO): read to its
    /// end once, relative paths relative to the current directory, and not
    /// re-readable by SIGHUP; a regular file is.
    @Test func aConfigurationFromAPipeIsReadOnceRelativeToTheCurrentDirectory() throws {
        let directory = try write(#"{"instances": []}"#, files: ["plugins/libweather.so"])
        let fifo = directory + "/host.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        // The plugin's path relative to the current directory, not to the FIFO's.
        let cwd = DaemonConfiguration.currentDirectory()
        let up = String(repeating: "../", count: cwd.split(separator: "/").count)
        let relative = up + (directory + "/plugins/libweather.so").dropFirst()
        let text = #"{ "plugins": [{ "name": "weather", "path": "\#(relative)" }], "instances": [] }"#
        let writer = Thread {
            let fd = open(fifo, O_WRONLY)
            _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
            close(fd)
        }
        writer.start()
        let configuration = try DaemonConfiguration.load(fifo)
        let resolved = try #require(realpath(directory, nil).map { String(cString: $0) })
        #expect(configuration.plugins.map(\.path) == [resolved + "/plugins/libweather.so"])
        #expect(configuration.rereadable == false)
        #expect(try DaemonConfiguration.load(directory + "/host.json").rereadable == true)
    }

    /// The crash window of quarantine and the request-line timeout: their
    /// defaults, and durations as every other.
    @Test func crashWindowAndRequestLineTimeout() throws {
        let defaults = try DaemonConfiguration.load(try write(#"{ "instances": [] }"#) + "/host.json")
        #expect(defaults.failurePolicy.crashWindow == 86_400)
        #expect(defaults.daemon.requestLineTimeout == 30)
        let directory = try write(
            """
            { "instances": [], "failures": { "quarantineAfterCrashes": 5, "crashWindow": "2h" },
              "daemon": { "requestLineTimeout": "5s", "maximumConnections": 8 } }
            """)
        let configuration = try DaemonConfiguration.load(directory + "/host.json")
        #expect(configuration.failurePolicy.quarantineAfterCrashes == 5)
        #expect(configuration.failurePolicy.crashWindow == 7200)
        #expect(configuration.daemon.requestLineTimeout == 5)
        #expect(configuration.daemon.maximumConnections == 8)
    }

    @Test func perPluginSandboxOverrides() throws {
        let directory = try write(
            """
            {
              "plugins": [{ "path": "a.so", "sandbox": { "readOnlyPaths": ["/usr/share/zoneinfo", "fonts"],
                "readWritePaths": ["/var/tmp"], "addressSpaceMiB": 8192, "cpuSeconds": 5, "maxTasks": 64 } },
                          { "path": "b.so" }],
              "instances": []
            }
            """, files: ["a.so", "b.so"])
        let configuration = try DaemonConfiguration.load(directory + "/host.json")
        let policy = configuration.plugins[0].sandbox
        #expect(policy.extraReadOnlyPaths.first == "/usr/share/zoneinfo")
        #expect(policy.extraReadOnlyPaths.last?.hasSuffix("/fonts") == true)
        #expect(policy.extraReadWritePaths == ["/var/tmp"])
        #expect(policy.addressSpaceBytes == 8192 << 20)
        #expect(policy.cpuSeconds == 5)
        #expect(policy.maxTasks == 64)
        #expect(policy.openFiles == SandboxPolicy.standard.openFiles)
        #expect(configuration.plugins[1].sandbox == .standard)
    }

    @Test func mistakesNameTheLineAndField() throws {
        var cases: [(String, [String], String)] = [
            (
                "{\n \"plugins\": [{ \"path\": \"missing.so\" }],\n \"instances\": []\n}", [],
                "host.json:2:24: plugins[0].path: "
            ),
            (
                "{\n \"plugins\": [{ \"path\": \"a.so\", \"name\": \"x\" },\n  { \"path\": \"b.so\", \"name\": \"x\" }],\n \"instances\": []\n}",
                ["a.so", "b.so"], "host.json:3:3: plugins[1]: plugin name \"x\" is used twice"
            ),
            ("{ \"plugins\": [] }", [], "instances: required"),
            (
                "{ \"instances\": [{ \"id\": \"a\", \"plugin\": \"p\", \"kind\": \"k\", \"timeout\": \"soon\" }], \"plugins\": [{\"path\": \"p\"}] }",
                ["p"], "instances[0].timeout: expected a duration"
            ),
            (
                "{ \"instances\": [], \"failures\": { \"quarantineAfterCrashes\": 0 } }", [],
                "host.json:1:60: failures.quarantineAfterCrashes: expected a whole number from 1 to 1000000, found 0"
            ),
            ("{ \"instances\": [], \"scheduler\": { \"budget\": 3 } }", [], "scheduler.budget: unknown field"),
            (
                "{ \"instances\": [], \"plugins\": [{ \"path\": \"a.so\", \"sandbox\": { \"maxTasks\": -1 } }] }",
                ["a.so"],
                "plugins[0].sandbox.maxTasks: expected a whole number from 8 to 4194304, found -1"
            ),
            // Numbers that once trapped or were rounded through Double: refused with the field.
            (
                "{ \"instances\": [], \"failures\": { \"quarantineAfterCrashes\": 1e300 } }", [],
                "failures.quarantineAfterCrashes: expected a whole number from 1 to 1000000, found 1e300"
            ),
            (
                "{ \"instances\": [], \"plugins\": [{ \"path\": \"a.so\", \"sandbox\": { \"openFiles\": 9007199254740993 } }] }",
                ["a.so"],
                "plugins[0].sandbox.openFiles: expected a whole number from 1 to 1099511627776, found 9007199254740993"
            ),
            (
                "{ \"instances\": [], \"scheduler\": { \"frequentAllowance\": 1e300 } }", [],
                "scheduler.frequentAllowance: expected a whole number from 0 to 1000000000, found 1e300"
            ),
            (
                "{ \"instances\": [], \"scheduler\": { \"frequentAllowance\": 99999999999999999999999 } }", [],
                "scheduler.frequentAllowance: expected a whole number from 0 to 1000000000, found 99999999999999999999999"
            ),
            (
                "{ \"instances\": [], \"scheduler\": {\n \"minimumReloadInterval\": 1e300 } }", [],
                "host.json:2:27: scheduler.minimumReloadInterval: expected a duration from 0 to 10 years"
            ),
            (
                "{ \"instances\": [], \"scheduler\": { \"backoffCap\": \"99999999d\" } }", [],
                "scheduler.backoffCap: expected a duration from 0 to 10 years"
            ),
            (
                "{ \"instances\": [{ \"id\": \"a\", \"plugin\": \"p\", \"kind\": \"k\", \"timeout\": -1 }], \"plugins\": [{\"path\": \"p\"}] }",
                ["p"], "instances[0].timeout: expected a duration from 0 to 10 years"
            ),
            (
                "{ \"instances\": [], \"failures\": { \"crashWindow\": \"0.5s\" } }", [],
                "host.json:1:49: failures.crashWindow: expected a duration from 1.0s to 365d, found 500.0ms; crashes older than it stop counting toward quarantine: write e.g. \"1d\""
            ),
            (
                "{ \"instances\": [], \"failures\": { \"crashWindow\": \"400d\" } }", [],
                "failures.crashWindow: expected a duration from 1.0s to 365d, found"
            ),
            (
                "{ \"instances\": [], \"failures\": { \"crashWindow\": 1e300 } }", [],
                "failures.crashWindow: expected a duration from 0 to 10 years"
            ),
            (
                "{ \"instances\": [], \"daemon\": { \"requestLineTimeout\": \"11m\" } }", [],
                "host.json:1:54: daemon.requestLineTimeout: expected a duration from 1.0s to 10m, found 11m"
            ),
            (
                "{ \"instances\": [], \"daemon\": { \"requestLineTimeout\": 0 } }", [],
                "daemon.requestLineTimeout: expected a duration from 1.0s to 10m, found"
            ),
        ]
        // A key twice, a number beyond a double, a maxTasks the kernel refuses
        // (or that leaves the plugin nothing), a timeout of 0: each refused
        // with its line and why.
        cases += [
            (
                "{ \"instances\": [],\n  \"instances\": [] }", [],
                #"host.json:2:3: instances: the key "instances" appears twice in this object (first at 1:3)"#
            ),
            (
                "{ \"instances\": [], \"daemon\": { \"shutdownGracePeriod\": 1e400 } }", [],
                "host.json:1:55: daemon.shutdownGracePeriod: the number 1e400 is out of range"
            ),
            (
                "{ \"instances\": [], \"plugins\": [{ \"path\": \"a.so\", \"sandbox\": { \"maxTasks\": 5000000 } }] }",
                ["a.so"],
                "plugins[0].sandbox.maxTasks: expected a whole number from 8 to 4194304, found 5000000: it is pids.max of the plugin's pids cgroup; the kernel refuses more than 4194304"
            ),
            (
                "{ \"instances\": [], \"plugins\": [{ \"path\": \"a.so\", \"sandbox\": { \"maxTasks\": 2 } }] }",
                ["a.so"], "plugins[0].sandbox.maxTasks: expected a whole number from 8 to 4194304, found 2"
            ),
            (
                "{ \"instances\": [{ \"id\": \"a\", \"plugin\": \"p\", \"kind\": \"k\", \"timeout\": 0 }], \"plugins\": [{\"path\": \"p\"}] }",
                ["p"], "instances[0].timeout: expected a timeout of more than 0 and at most 600 seconds (10 minutes)"
            ),
        ]
        for (text, files, expected) in cases {
            let directory = try write(text, files: files)
            #expect(throws: DocumentError.self) { try DaemonConfiguration.load(directory + "/host.json") }
            do {
                _ = try DaemonConfiguration.load(directory + "/host.json")
            } catch {
                #expect(error.description.contains(expected), "\(error.description)")
                #expect(error.description.contains("docs/daemon.md"))
            }
        }
    }
}
