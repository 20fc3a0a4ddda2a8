import Foundation
import Testing

/// `widgethost sandbox-check` reports every layer, and its exit status says
/// whether all of them are active.
@Suite("sandbox-check")
struct SandboxCheckTests {
    @Test func reportsEveryLayerAndExitsZeroOnlyIfAllAreActive() throws {
        let result = try CLI.run(["sandbox-check", "--json"])
        let layers = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(
            layers.compactMap { $0["layer"] as? String }
                == ["session", "rlimits", "no_new_privs", "landlock", "seccomp", "netns", "pids"])
        let allActive = layers.allSatisfy { $0["active"] as? Bool == true }
        #expect(result.status == (allActive ? 0 : 1))
        for layer in layers { #expect(!((layer["detail"] as? String) ?? "").isEmpty) }

        let text = try CLI.run(["sandbox-check"])
        #expect(text.status == result.status)
        #expect(text.stdout.split(separator: "\n").count >= 7)
    }
}
