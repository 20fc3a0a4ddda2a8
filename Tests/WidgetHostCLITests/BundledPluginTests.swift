import Foundation
import Testing

/// `widgethost load` succeeds on every bundled plugin and both samples, built
/// for real in the test run, and shows their timelines.
@Suite("Bundled plugins and samples")
struct BundledPluginTests {
    /// Loads `plugin` with `--json` and returns the document after checking
    /// that every call succeeded.
    func loadAll(
        _ plugin: String, config: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [String: Any] {
        var arguments = [
            "load", plugin, "--json", "--data-dir",
            CLI.temporaryDirectory("data-\((plugin as NSString).lastPathComponent)"),
        ]
        if let config { arguments += ["--kind", "com.widgethost.character-detail", "--config", config] }
        let result = try CLI.run(arguments)
        #expect(
            result.status == 0, "load \(plugin) failed:\n\(result.stdout)\n\(result.stderr)",
            sourceLocation: sourceLocation)
        let document = try CLI.json(result.stdout)
        #expect(document["ok"] as? Bool == true, sourceLocation: sourceLocation)
        return document
    }

    /// The policies of every timeline call in a load document.
    func policies(_ document: [String: Any]) -> [String] {
        let kinds = document["kinds"] as? [[String: Any]] ?? []
        return kinds.flatMap { kind in
            (kind["calls"] as? [[String: Any]] ?? []).compactMap { call in
                (call["policy"] as? [String: Any])?["type"] as? String
            }
        }
    }

    @Test func firstPartyPluginsLoadAndCoverAllThreePolicies() throws {
        var seen: Set<String> = []
        for name in ["CharacterPlugin", "CountdownPlugin", "MarketHoursPlugin"] {
            let path = CLI.buildDirectory + "/lib\(name).so"
            #expect(FileManager.default.fileExists(atPath: path), "\(path) was not built")
            let document = try loadAll(path)
            seen.formUnion(policies(document))
        }
        // The character at full health: one entry and `never` (seed 000).
        let healed = try loadAll(CLI.buildDirectory + "/libCharacterPlugin.so", config: #"{"health":1}"#)
        #expect(Set(policies(healed)) == ["never"])
        seen.formUnion(policies(healed))
        #expect(seen.isSuperset(of: ["atEnd", "after", "never"]), "policies seen: \(seen)")
    }

    @Test func cSampleBuildsWithItsMakefileAndLoads() throws {
        let build = CLI.shell("make -s -C '\(CLI.repositoryRoot)/samples/c' clean all")
        #expect(build.status == 0, "make failed:\n\(build.output)")
        let document = try loadAll(CLI.repositoryRoot + "/samples/c/moonphase.so")
        #expect(!policies(document).isEmpty)
    }

    @Test func rustSampleBuildsWithCargoAndLoads() throws {
        let target = CLI.temporaryDirectory("rust-target")
        let build = CLI.shell(
            "cd '\(CLI.repositoryRoot)/samples/rust' && PATH=\"$HOME/.cargo/bin:$PATH\" cargo build --release --offline --quiet --target-dir '\(target)'"
        )
        #expect(build.status == 0, "cargo build failed:\n\(build.output)")
        let libraries = (try? FileManager.default.contentsOfDirectory(atPath: target + "/release")) ?? []
        let library = try #require(libraries.first { $0.hasSuffix(".so") }, "no .so in \(target)/release: \(libraries)")
        let document = try loadAll(target + "/release/" + library)
        #expect(!policies(document).isEmpty)
    }
}
