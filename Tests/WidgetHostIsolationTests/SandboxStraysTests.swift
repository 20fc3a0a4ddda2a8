import Foundation
import Testing
import WidgetHostModel

/// The runner's between-calls interface (`sandbox.h`:
/// `wh_sandbox_end_strays`, `wh_sandbox_reap_orphans`), which a warm
/// worker's call loop uses: checked by a small C program linked with the
/// runner's own sandbox sources (Tests/Fixtures/faulty/sandbox_unit).
@Suite("Sandbox: ending strays between calls")
struct SandboxStraysTests {
    /// The check program, compiled once.
    static let program: String? = {
        let root = TestSupport.repositoryRoot
        let runner = root + "/Sources/widgethost-runner"
        let output = TestSupport.temporaryDirectory("strays") + "/strays"
        let command =
            "cc -std=gnu11 -O1 -w -I'\(runner)' -I'\(root)/Sources/CWidgetHostSupport/include' -o '\(output)' "
            + "'\(root)/Tests/Fixtures/faulty/sandbox_unit/strays.c' '\(runner)'/sandbox*.c -lseccomp"
        return TestSupport.shell(command).status == 0 ? output : nil
    }()

    static func run(_ arguments: String) throws -> [String: JSONValue] {
        let program = try #require(program, "the check program did not compile")
        let result = TestSupport.shell("'\(program)' \(arguments)")
        let line = result.output.split(separator: "\n").last.map(String.init) ?? ""
        let members = try #require(try? JSONValue.parse(line).objectMembers, "not JSON: \(result.output)")
        return Dictionary(members, uniquingKeysWith: { first, _ in first })
    }

    @Test func straysAreKilledAndReapedAndTrackedChildrenLeftAlone() throws {
        let data = TestSupport.temporaryDirectory("strays-data")
        let report = try Self.run("'\(data)'")
        #expect(report["error"] == nil, "the sandbox failed: \(report)")
        // The caller is the runner under the namespace's init.
        #expect(report["pid"] == .number(2), "\(report)")
        // reap_orphans reaps the exited child it was not told about, and
        // leaves the tracked one to its owner.
        #expect(report["untracked_reaped"] == .number(1), "\(report)")
        #expect(report["tracked_left"] == .number(1), "\(report)")
        // end_strays kills and reaps the three children the "plugin" left
        // (one in a session of its own); the grandchild orphans go too.
        #expect(report["strays_reaped"] == .number(3), "\(report)")
        #expect(report["left"] == .number(0), "\(report)")
    }

    @Test func withoutAPidNamespaceNothingIsKilled() throws {
        // Outside a namespace kill(-1) would reach every process of the
        // user: the function refuses.
        let report = try Self.run("/tmp --no-namespace")
        #expect(report["outside"] == .number(-1), "\(report)")
    }
}
