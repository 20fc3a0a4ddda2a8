import Foundation
import Testing

/// `widgethost sandbox-check` reports every layer and tries every hole of
/// issue 14 live; its exit status says whether all layers are active and
/// every hole closed.
@Suite("sandbox-check")
struct SandboxCheckTests {
    @Test func reportsEveryLayerAndHoleAndExitsZeroOnlyIfAllAreActiveAndClosed() throws {
        let before = Self.checkDirectories()
        let result = try CLI.run(["sandbox-check", "--json"])
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(report["schemaVersion"] as? Int == 2)
        let layers = try #require(report["layers"] as? [[String: Any]])
        #expect(
            layers.compactMap { $0["layer"] as? String }
                == ["session", "rlimits", "no_new_privs", "landlock", "seccomp", "netns", "pids", "pidns", "mountns"])
        let holes = try #require(report["holes"] as? [[String: Any]])
        #expect(
            holes.compactMap { $0["hole"] as? String }
                == ["proc_environ", "chmod_outside", "pidfd_getfd", "setsid", "survivor", "unix_socket"])
        for hole in holes { #expect(["open", "closed", "not tried"].contains(hole["state"] as? String ?? "")) }
        let allActive = layers.allSatisfy { $0["active"] as? Bool == true }
        let allClosed = holes.allSatisfy { $0["state"] as? String == "closed" }
        #expect(result.status == (allActive && allClosed ? 0 : 1))
        for entry in layers + holes { #expect(!((entry["detail"] as? String) ?? "").isEmpty) }
        // With every layer active, as on this machine's kernel, no hole may
        // be open: the layers are what closes them.
        if allActive {
            for hole in holes { #expect(hole["state"] as? String == "closed", "\(hole)") }
        }

        let text = try CLI.run(["sandbox-check"])
        #expect(text.status == result.status)
        #expect(text.stdout.split(separator: "\n").count >= 16)
        #expect(text.stdout.contains("holes, each tried live from inside the sandbox:"))
        // The probes' directories in /tmp are gone (the mount probe's was
        // left behind at every run; only this suite runs the check).
        #expect(Self.checkDirectories().subtracting(before).isEmpty)
    }

    static func checkDirectories() -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []
        return Set(names.filter { $0.hasPrefix("widgethost-check-") })
    }
}
