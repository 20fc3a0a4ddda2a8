import Foundation
import Testing

@testable import WidgetHostWeb

/// `POST /push/KIND` on `run --http`: a real daemon, the Character plugin
/// (whose kinds accept pushes), real sockets. The server behind the widgets
/// holds the kind's push token only, never the page's token.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct HTTPPushTests {
    static let kind = "com.widgethost.character-detail"

    /// The kind's push token, from `widgethost status --json`.
    static func pushToken(socket: String) throws -> String {
        let result = Web.shell("'\(Web.executable)' status --json --socket '\(socket)' 2>/dev/null")
        try #require(result.status == 0, "\(result.output)")
        let line = result.output
        let document = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        let plugins = document?["plugins"] as? [[String: Any]] ?? []
        let tokens = plugins.first { $0["name"] as? String == "character" }?["pushTokens"] as? [String: String]
        return try #require(tokens?[kind], "no push token for \(kind) in \(line)")
    }

    /// The instance's last reload time, from `widgethost show --json`.
    static func lastReload(_ id: String, socket: String) -> Double {
        let result = Web.shell("'\(Web.executable)' show \(id) --json --socket '\(socket)' 2>/dev/null")
        let document = (try? JSONSerialization.jsonObject(with: Data(result.output.utf8))) as? [String: Any]
        return (document?["lastReload"] as? NSNumber)?.doubleValue ?? 0
    }

    @Test func aPushWithTheKindsTokenReloadsItsInstancesAndOthersAreRefused() async throws {
        let directory = Web.temporaryDirectory("http-push")
        let configuration = """
            {
              "plugins": [{ "name": "character", "path": "\(Web.plugin("Character"))" },
                          { "name": "countdown", "path": "\(Web.plugin("Countdown"))" }],
              "scheduler": { "minimumReloadInterval": 0, "maximumJitter": 0, "coalescingCap": 0 },
              "instances": [
                { "id": "hero", "plugin": "character", "kind": "\(Self.kind)", "app": "com.example.game",
                  "configuration": { "character": "Power Panda" } },
                { "id": "new-year", "plugin": "countdown", "kind": "com.widgethost.countdown", "app": "c" }
              ]
            }
            """
        let daemon = try DashboardProcess(directory: directory, configuration: configuration)
        defer { daemon.stop() }
        let token = try Self.pushToken(socket: daemon.socket)
        #expect(token != daemon.token)
        let url = daemon.base + "/push/" + Self.kind
        func push(_ url: String, _ headers: [String: String]) async throws -> HTTP.Answer {
            try await HTTP.request(url, method: "POST", headers: headers)
        }

        // Without a token, with the page's token, with a wrong one: refused, nothing reloads.
        #expect(try await push(url, [:]).status == 401)
        let pageToken = try await push(url, ["Authorization": "Bearer \(daemon.token)"])
        #expect(pageToken.status == 403 && pageToken.body.contains("bad-push-token"), "\(pageToken.body)")
        let wrong = try await push(url, ["Authorization": "Bearer \(String(token.reversed()))"])
        #expect(wrong.status == 403, "\(wrong.body)")
        // A kind that does not accept pushes, and one nobody declares: 404 naming the fix.
        let countdown = try await push(
            daemon.base + "/push/com.widgethost.countdown", ["Authorization": "Bearer \(token)"])
        #expect(countdown.status == 404 && countdown.body.contains("WH_KIND_PUSH"), "\(countdown.body)")
        #expect(try await push(daemon.base + "/push/no.such.kind", ["Authorization": "Bearer \(token)"]).status == 404)
        // From another site's page: refused before the token is looked at.
        let crossSite = try await push(url, ["Authorization": "Bearer \(token)", "Origin": "http://evil.example"])
        #expect(crossSite.status == 403)

        // The right token: accepted, and the kind's instance reloads.
        let deadline = Date().addingTimeInterval(60)
        while Self.lastReload("hero", socket: daemon.socket) == 0 && Date() < deadline { usleep(100_000) }
        let before = Self.lastReload("hero", socket: daemon.socket)
        #expect(before > 0, "hero never got its first timeline")
        let accepted = try await push(url, ["Authorization": "Bearer \(token)"])
        #expect(accepted.status == 202, "\(accepted.body)")
        let answer = try JSONSerialization.jsonObject(with: Data(accepted.body.utf8)) as? [String: Any]
        #expect(answer?["ok"] as? Bool == true)
        #expect(answer?["scheduled"] as? [String] == ["hero"], "\(accepted.body)")
        while Self.lastReload("hero", socket: daemon.socket) <= before && Date() < deadline { usleep(100_000) }
        #expect(Self.lastReload("hero", socket: daemon.socket) > before, "the push did not reload hero")
    }
}
