import Foundation
import Testing

/// `widgethost new` in each language: the project builds with the language's
/// usual command and loads with every call ok.
@Suite("widgethost new")
struct NewCommandTests {
    /// Writes project `name` in a fresh directory, builds it with `build`
    /// and loads `library`; returns the seconds the build took.
    @discardableResult
    func newBuildLoad(
        _ language: String, _ name: String, build: String, library: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Double {
        let parent = CLI.temporaryDirectory("new-\(language)")
        let written = try CLI.run(["new", "--\(language)", name], in: parent)
        #expect(written.status == 0, "\(written.stderr)", sourceLocation: sourceLocation)
        #expect(written.stdout.contains(build), "\(written.stdout)", sourceLocation: sourceLocation)
        let start = Date()
        let built = CLI.shell("cd '\(parent)/\(name)' && PATH=\"$HOME/.cargo/bin:$PATH\" \(build) 2>&1")
        let seconds = Date().timeIntervalSince(start)
        #expect(built.status == 0, "\(build) failed:\n\(built.output)", sourceLocation: sourceLocation)
        // Generous call timeouts: this is about the project building and
        // answering, not its latency (the timeouts have tests of their own).
        // Under a full test run beside release builds, a first placeholder
        // call once took 0.87 s against the default 500 ms.
        let loaded = try CLI.run([
            "load", "\(parent)/\(name)/\(library)", "--json", "--data-dir", CLI.temporaryDirectory("new-data-\(name)"),
            "--timeout", "30s",
        ])
        #expect(loaded.status == 0, "\(loaded.stdout)\n\(loaded.stderr)", sourceLocation: sourceLocation)
        let document = try CLI.json(loaded.stdout)
        #expect(document["ok"] as? Bool == true, sourceLocation: sourceLocation)
        let calls = (document["kinds"] as? [[String: Any]] ?? []).flatMap { $0["calls"] as? [[String: Any]] ?? [] }
        #expect(calls.count == 8, "two families, four calls each", sourceLocation: sourceLocation)
        print("widgethost new --\(language): \(build) took \(String(format: "%.1f", seconds)) s")
        return seconds
    }

    @Test func cProjectBuildsWithMakeAndLoads() throws {
        try newBuildLoad("c", "hello-c", build: "make", library: "hello_c.so")
    }

    @Test func rustProjectBuildsWithCargoAndLoads() throws {
        try newBuildLoad(
            "rust", "hello-rust", build: "cargo build --release --offline", library: "target/release/libhello_rust.so")
    }

    @Test func swiftProjectBuildsWithSwiftPMAndLoads() throws {
        try newBuildLoad(
            "swift", "HelloSwift", build: "swift build -c release", library: ".build/release/libHelloSwift.so")
        // The SDK package alone: SwiftPM fetched none of the host's dependencies.
        let checkouts = CLI.temporaryDirectory("new-swift") + "/HelloSwift/.build/checkouts"
        let fetched = (try? FileManager.default.contentsOfDirectory(atPath: checkouts)) ?? []
        #expect(fetched.isEmpty, "fetched: \(fetched)")
    }

    @Test func badNamesExistingDirectoriesAndAMissingSDKExitTwo() throws {
        let parent = CLI.temporaryDirectory("new-usage")
        for bad in ["9lives", "has space", "dot.name", "-x", ""] {
            let result = try CLI.run(["new", "--c", bad], in: parent)
            #expect(result.status == 2, "\(bad): \(result.stderr)")
        }
        let noLanguage = try CLI.run(["new", "plain"], in: parent)
        #expect(noLanguage.status == 2)
        #expect(try CLI.run(["new", "--c", "twice"], in: parent).status == 0)
        let again = try CLI.run(["new", "--c", "twice"], in: parent)
        #expect(again.status == 2 && again.stderr.contains("already exists"), "\(again.stderr)")
        let noSDK = try CLI.run(["new", "--rust", "nosdk", "--sdk", parent], in: parent)
        #expect(noSDK.status == 2 && noSDK.stderr.contains("has no widgethost SDK"), "\(noSDK.stderr)")
        #expect(!FileManager.default.fileExists(atPath: parent + "/nosdk"))
        let json = try CLI.run(["new", "--rust", "as-json", "--id", "com.example.tides", "--json"], in: parent)
        #expect(json.status == 0, "\(json.stderr)")
        let document = try CLI.json(json.stdout)
        #expect(document["schemaVersion"] as? Int == 1)
        #expect(document["pluginID"] as? String == "com.example.tides")
        #expect(document["build"] as? String == "cargo build --release --offline")
        #expect((document["library"] as? String)?.hasSuffix("/as-json/target/release/libas_json.so") == true)
        #expect((document["files"] as? [String])?.contains("src/lib.rs") == true)
        let badID = try CLI.run(["new", "--c", "idtest", "--id", "not an id"], in: parent)
        #expect(badID.status == 2 && badID.stderr.contains("reverse-DNS"), "\(badID.stderr)")
    }
}
