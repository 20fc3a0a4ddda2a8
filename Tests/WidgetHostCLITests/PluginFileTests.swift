import Foundation
import Testing
import WidgetHostControl

/// The daemon and a plugin file over time: crashes counted within a rolling
/// window, and a file replaced while the plugin is loaded.
extension DaemonTests {
    /// Crashes count toward quarantine within `failures.crashWindow` only:
    /// crashes further apart than the window never quarantine the plugin
    /// (three OOM kills months apart once did); within it, they do.
    @Test func crashesCountTowardQuarantineWithinTheirWindowOnly() throws {
        // Each reload crashes; the retries come 3 s or more after the last crash.
        func configuration(window: String) -> String {
            """
            {
              "plugins": [{ "name": "segv", "path": "@FIXTURES@/crash_segv.so" }],
              "scheduler": { "backoffBase": "3s", "backoffCap": "3s", "minimumReloadInterval": 0,
                             "maximumJitter": 0 },
              "failures": { "quarantineAfterCrashes": 2, "crashWindow": "\(window)" },
              "instances": [{ "id": "crashy", "plugin": "segv", "kind": "test.fixture" }]
            }
            """
        }
        let daemon = try DaemonProcess("crash-window", configuration: configuration(window: "1s"))
        let process = try daemon.start()
        func crashLines() -> [String] {
            daemon.logText.split(separator: "\n").map(String.init).filter { $0.contains("plugin segv crashed (") }
        }
        try waitUntil("three crashes", timeout: 120, showing: daemon) { crashLines().count >= 3 }
        #expect(crashLines().allSatisfy { $0.contains("(1 of 2 within 1.0s before quarantine)") }, "\(crashLines())")
        let plugin = try #require(try daemon.status().plugins.first)
        #expect(plugin.state == "loaded")
        #expect(plugin.crashes <= 1)
        #expect(!daemon.logText.contains("quarantined after"))

        // A window of an hour (SIGHUP): the next crash is the second within it.
        try configuration(window: "1h").replacingOccurrences(of: "@FIXTURES@", with: CLI.fixtures)
            .write(toFile: daemon.config, atomically: true, encoding: .utf8)
        kill(process.processIdentifier, SIGHUP)
        try waitUntil("the plugin is quarantined", timeout: 120, showing: daemon) {
            try daemon.status().plugins.first?.state == "quarantined"
        }
        #expect(daemon.logText.contains("plugin segv quarantined after 2 crashes"))
        #expect(try daemon.status().quarantined.first?.crashes == 2)
        #expect(daemon.stop() == 0)
    }

    /// A plugin file replaced while it is loaded: `status` says the file
    /// changed (it showed the old file's identifier and version as if
    /// current), and the next due reload loads the new file, whose
    /// identifier and version `status` then shows.
    @Test func statusTellsAReplacedPluginFileAndItsNextReloadLoadsIt() throws {
        let daemon = try DaemonProcess(
            "replaced-file",
            configuration: """
                {
                  "plugins": [{ "name": "p", "path": "plugin.so" }],
                  "scheduler": { "minimumReloadInterval": 0, "maximumJitter": 0 },
                  "instances": [{ "id": "one", "plugin": "p", "kind": "test.fixture" }]
                }
                """)
        let file = daemon.directory + "/plugin.so"
        try FileManager.default.copyItem(atPath: CLI.fixtures + "/good.so", toPath: file)
        try daemon.start()
        try waitUntil("one has its timeline", showing: daemon) {
            try daemon.status().instances.first?.shows != nil
        }
        var plugin = try #require(try daemon.status().plugins.first)
        #expect(plugin.identifier == "test.fixture.good")
        #expect(plugin.fileChanged == nil)
        // No call runs once the reload is done (`calling` is absent).
        try waitUntil("its call has ended", showing: daemon) {
            try daemon.status().plugins.first?.calling == nil
        }

        // Replaced as an install does: a new file renamed over the old one.
        try FileManager.default.copyItem(atPath: CLI.fixtures + "/ticking.so", toPath: file + ".new")
        #expect(rename(file + ".new", file) == 0)
        plugin = try #require(try daemon.status().plugins.first)
        #expect(plugin.fileChanged == true, "\(plugin)")
        #expect(plugin.identifier == "test.fixture.good", "still the loaded file's, and said so")
        let text = try CLI.run(["status", "--socket", daemon.socket])
        #expect(text.stdout.contains("the file changed on disk since it was loaded"), "\(text.stdout)")

        #expect(try daemon.send(ControlRequest(.reload, kind: "test.fixture")).ok)
        try waitUntil("the new file is loaded", showing: daemon) {
            let now = try daemon.status().plugins.first
            return now?.identifier == "test.fixture.ticking" && now?.fileChanged == nil
        }
        #expect(daemon.logText.contains("plugin p: the file changed; loading it again"))
        #expect(daemon.stop() == 0)
    }
}
