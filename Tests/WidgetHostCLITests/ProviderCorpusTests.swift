import CenterAppCorpus
import Foundation
import Testing
import WidgetHostCenter

/// The provider corpus (Tests/Fixtures/ProviderCorpus): WidgetKit provider
/// code in the shapes public apps use, built as one plugin by the test
/// build, loaded with the real loader (fork server, sandbox), every call ok.
/// Also: the SDK 1.2 plugin that must load unchanged, and the daemon's
/// configuration check naming an intent parameter.
@Suite("Provider corpus")
struct ProviderCorpusTests {
    static let plugin = CLI.buildDirectory + "/libProviderCorpus.so"

    func load(dataDirectory: String) throws -> [String: Any] {
        let result = try CLI.run(["load", Self.plugin, "--json", "--data-dir", dataDirectory])
        #expect(result.status == 0, "load failed:\n\(result.stdout.prefix(4000))\n\(result.stderr)")
        return try CLI.json(result.stdout)
    }

    @Test func everyProviderLoadsWithEveryCallOK() throws {
        // The app's side of the shared UserDefaults suite: <data directory>/.config/<suite>.plist.
        let data = CLI.temporaryDirectory("corpus-data")
        try FileManager.default.createDirectory(atPath: data + "/.config", withIntermediateDirectories: true)
        let plist = try PropertyListSerialization.data(
            fromPropertyList: ["headline": "From the app", "count": 7], format: .xml, options: 0)
        try plist.write(to: URL(fileURLWithPath: data + "/.config/group.corpus.shared.plist"))
        let document = try load(dataDirectory: data)
        #expect(document["ok"] as? Bool == true)
        let kinds = try #require(document["kinds"] as? [[String: Any]])
        #expect(kinds.count == 23)
        var calls = 0
        for kind in kinds {
            for call in kind["calls"] as? [[String: Any]] ?? [] {
                calls += 1
                #expect(call["ok"] as? Bool == true, "\(kind["id"] ?? "?"): \(call["failure"] ?? "")")
            }
        }
        #expect(calls >= 23 * 4)
        // UserDefaults(suiteName:) is backed by the plugin's data directory: the widget read what the app wrote.
        let shared = try #require(kinds.first { $0["id"] as? String == "corpus.shared" })
        let timeline = try #require((shared["calls"] as? [[String: Any]])?.last)
        let values = ((timeline["entries"] as? [[String: Any]])?.first?["content"] as? [String: Any])?["values"]
        #expect((values as? [String: Any])?["headline"] as? String == "From the app")
        #expect((values as? [String: Any])?["count"] as? Int == 7)
    }

    @Test func intentParametersShowInLoad() throws {
        let document = try load(dataDirectory: CLI.temporaryDirectory("corpus-parameters"))
        let kinds = try #require(document["kinds"] as? [[String: Any]])
        let tracker = try #require(kinds.first { $0["id"] as? String == "corpus.tracker" })
        let parameters = try #require(tracker["parameters"] as? [[String: Any]])
        #expect(parameters.map { $0["name"] as? String } == ["displayMode", "showSavings", "alertThresholdDays"])
        #expect(parameters.map { $0["type"] as? String } == ["string", "boolean", "integer"])
        #expect(parameters.map { $0["title"] as? String } == ["Display Mode", "Show Savings", "Alert Threshold"])
        let choices = try #require(parameters[0]["choices"] as? [[String: Any]])
        #expect(choices.map { $0["value"] as? String } == ["upcoming", "expired", "savings"])
        #expect(choices.map { $0["title"] as? String } == ["Upcoming", "Expired", "Savings"])
        #expect(parameters[0]["defaultJSON"] as? String == #""upcoming""#)
        let server = try #require(kinds.first { $0["id"] as? String == "corpus.server" })
        let host = try #require((server["parameters"] as? [[String: Any]])?.first)
        #expect(host["optional"] as? Bool == true && host["defaultJSON"] == nil)
        // A parameter without `default:` whose intent's init() assigns one has that default.
        let clock = try #require(kinds.first { $0["id"] as? String == "corpus.clock" })
        let style = try #require((clock["parameters"] as? [[String: Any]])?.first)
        #expect(style["name"] as? String == "style" && style["defaultJSON"] as? String == #""modern""#)
        // The text report shows the titles and the choices.
        let text = try CLI.run(["load", Self.plugin, "--kind", "corpus.tracker"])
        #expect(text.stdout.contains(#"displayMode "Display Mode": string = "upcoming", one of upcoming (Upcoming)"#))
    }

    @Test func reflectedEntriesWarnAndEncodableOnesDoNot() throws {
        let document = try load(dataDirectory: CLI.temporaryDirectory("corpus-warnings"))
        let kinds = try #require(document["kinds"] as? [[String: Any]])
        func warnings(_ id: String) -> [String] {
            let kind = kinds.first { $0["id"] as? String == id }
            return (kind?["calls"] as? [[String: Any]] ?? []).flatMap { $0["warnings"] as? [String] ?? [] }
        }
        #expect(
            warnings("corpus.unread").contains {
                $0.hasPrefix("UnreadEntry is not Encodable") && $0.contains("Codable")
            })
        #expect(warnings("corpus.countdown").isEmpty)
        let apps = try #require(kinds.first { $0["id"] as? String == "corpus.apps" })
        let timeline = try #require((apps["calls"] as? [[String: Any]])?.last)
        let content = (timeline["entries"] as? [[String: Any]])?.first?["content"] as? [String: Any]
        #expect((content?["apps"] as? [String: Any])?["failure"] as? String == "Sign in to see your apps.")
    }

    @Test func anAsyncTimelineIsCancelledAtTheDeadlineInTheRunner() throws {
        let result = try CLI.run([
            "timeline", Self.plugin, "--kind", "corpus.slow-weather", "--config", #"{"downloadSeconds": 600}"#,
            "--timeout", "2s", "--json",
        ])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains(#""cancelled" : true"#) || result.stdout.contains(#""cancelled":true"#))
    }

    @Test func aBadIntentValueIsRefusedNamingTheParameter() throws {
        let call = try CLI.run([
            "timeline", Self.plugin, "--kind", "corpus.tracker", "--config", #"{"displayMode": "weekly"}"#,
        ])
        #expect(call.status != 0)
        #expect(
            call.stdout.contains(
                #"parameter "displayMode" (Display Mode) of kind corpus.tracker: expected one of "upcoming", "expired", "savings", got "weekly""#
            ))
        // The daemon's configuration check says the same, with the file's line and column.
        let directory = CLI.temporaryDirectory("corpus-daemon")
        let config = directory + "/host.json"
        try """
        { "plugins": [{ "name": "corpus", "path": "\(Self.plugin)" }],
          "instances": [{ "id": "t1", "plugin": "corpus", "kind": "corpus.tracker", "family": "systemSmall",
                          "app": "com.example.tracker", "configuration": { "displayMode": "weekly" } }] }
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = CLI.shell(
            "XDG_DATA_HOME='\(directory)/data' timeout 60 '\(CLI.executable)' run --config '\(config)' --state '\(directory)/s.sqlite' --socket '\(directory)/c.sock' 2>&1"
        )
        #expect(daemon.status != 0)
        #expect(daemon.output.contains(#"host.json:3:"#))
        #expect(daemon.output.contains(#"instances[0].configuration: parameter "displayMode" (Display Mode)"#))
    }

    @Test func anSDK12PluginLoadsUnchanged() throws {
        // Built against the 1.2 header: 32-byte parameters without title, flags or choices.
        let directory = CLI.temporaryDirectory("abi12")
        let fixture = CLI.repositoryRoot + "/Tests/Fixtures/ABI12"
        let build = CLI.shell(
            "cc -shared -fPIC -std=gnu11 -Wall -Wextra -Werror -I '\(fixture)/include' -o '\(directory)/weather12.so' '\(fixture)/weather12.c' 2>&1"
        )
        #expect(build.status == 0, "\(build.output)")
        let result = try CLI.run(["load", directory + "/weather12.so", "--json", "--data-dir", directory + "/data"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let document = try CLI.json(result.stdout)
        #expect(document["ok"] as? Bool == true)
        let plugin = try #require(document["plugin"] as? [String: Any])
        #expect(plugin["sdkVersion"] as? String == "1.2.0")
        let kind = try #require((document["kinds"] as? [[String: Any]])?.first)
        let parameters = try #require(kind["parameters"] as? [[String: Any]])
        #expect(parameters.map { $0["name"] as? String } == ["city", "days"])
        #expect(parameters.map { $0["defaultJSON"] as? String } == [#""Paris""#, "3"])
        #expect(parameters.allSatisfy { $0["title"] == nil && ($0["choices"] as? [Any])?.isEmpty == true })
        #expect(parameters.allSatisfy { $0["optional"] as? Bool == false })
        // The configuration reaches the plugin as before.
        let call = try CLI.run([
            "timeline", directory + "/weather12.so", "--kind", "org.example.weather12", "--config",
            #"{"city": "Lima"}"#, "--data-dir", directory + "/data",
        ])
        #expect(call.status == 0, "\(call.stdout)\n\(call.stderr)")
        #expect(call.stdout.contains(#""city":"Lima""#) && call.stdout.contains(#""days":3"#))
    }

    @Test func widgetCenterAppCodeCompilesAndReadsInfo() {
        // CenterAppCorpus compiled with only the import changed; its pure helpers run here.
        let widgets = [
            WidgetInfo(id: "a", kind: "k", family: .systemLarge, configuration: #"{"favoriteEmoji": "🐼"}"#),
            WidgetInfo(id: "b", kind: "k", family: .systemSmall),
        ]
        #expect(WidgetSync.hasLargeWidget(widgets))
        #expect(WidgetSync.emojis(widgets) == ["🐼", "😃"])
    }
}
