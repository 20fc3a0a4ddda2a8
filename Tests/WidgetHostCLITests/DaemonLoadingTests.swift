import Foundation
import Testing
import WidgetHostStore
import WidgetHostTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Plugin loads run off the loop (issue 16): while a plugin loads, the
/// daemon answers, `status` shows the plugin `loading`, and the reloads due
/// for it wait for the load instead of failing.
@Suite("widgethost run: plugin loads off the loop", .serialized)
struct DaemonLoadingTests {
    /// Replaces the file at `path` with `source` in one rename (a new size
    /// and mtime: another identity for the daemon).
    private func replace(_ path: String, with source: String) throws {
        let temporary = path + ".new"
        try? FileManager.default.removeItem(atPath: temporary)
        try FileManager.default.copyItem(atPath: source, toPath: temporary)
        #expect(rename(temporary, path) == 0)
    }

    @Test func aPluginLoadingAgainDoesNotBlockTheLoopAndItsReloadsWait() throws {
        // The plugin's file is in the daemon's directory (DaemonProcess makes it afresh).
        let plugin = ScratchDirectory.path("loading") + "/late.so"
        let daemon = try DaemonProcess(
            "loading",
            configuration: """
                {
                  "plugins": [{ "name": "late", "path": "\(plugin)" },
                              { "name": "character", "path": "@BUILD@/libCharacterPlugin.so" }],
                  "scheduler": { "backoffBase": 1, "minimumReloadInterval": 0, "maximumJitter": 0 },
                  "instances": [
                    { "id": "waiter", "plugin": "late", "kind": "test.fixture" },
                    { "id": "panda", "plugin": "character", "kind": "com.widgethost.character-detail" }
                  ]
                }
                """)
        #expect(daemon.directory + "/late.so" == plugin)
        // At first a plugin whose constructor crashes: it fails to load.
        try FileManager.default.copyItem(atPath: CLI.fixtures + "/ctor_crash.so", toPath: plugin)
        try daemon.start()
        try waitUntil("the failed plugin is reported") {
            try daemon.status().plugins.first { $0.name == "late" }?.state == "failed"
        }
        // A plugin whose constructor never returns: loading it takes the
        // whole load timeout, on the plugin's queue. The loop answers
        // meanwhile, which is the only way `status` can ever show `loading`.
        try replace(plugin, with: CLI.fixtures + "/ctor_hang.so")
        try waitUntil("status shows the plugin loading") {
            try daemon.status().plugins.first { $0.name == "late" }?.state == "loading"
        }
        let during = try daemon.status()
        #expect(during.instances.first { $0.id == "waiter" }?.unavailable?.contains("loading") == true)
        #expect(during.instances.first { $0.id == "panda" }?.shows != nil, "the other plugin works meanwhile")
        try waitUntil("the hung load fails", timeout: 60) {
            try daemon.status().plugins.first { $0.name == "late" }?.state == "failed"
        }
        // A good file: the reload that comes due while it loads waits for
        // the load and gets the timeline.
        try replace(plugin, with: CLI.fixtures + "/good.so")
        try waitUntil("the waiting instance gets its timeline", timeout: 60) {
            try daemon.status().instances.first { $0.id == "waiter" }?.shows != nil
        }
        #expect(try daemon.status().plugins.first { $0.name == "late" }?.state == "loaded")
        #expect(daemon.logText.contains("plugin late: the file changed; loading it again"))
        #expect(daemon.stop() == 0)
    }
}
