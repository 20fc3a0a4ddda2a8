import Foundation
import Testing

@testable import WidgetHostWeb

struct WebSecurityTests {
    @Test func theServerListensOnLoopbackUnlessTold() throws {
        #expect(throws: WebAddress.Problem.self) { try WebAddress(parsing: "0.0.0.0:8765") }
        #expect(throws: WebAddress.Problem.self) { try WebAddress(parsing: "192.168.1.2:80") }
        #expect(throws: WebAddress.Problem.self) { try WebAddress(parsing: "127.0.0.1:70000") }
        #expect(throws: WebAddress.Problem.self) { try WebAddress(parsing: "localhost") }
        #expect(try WebAddress(parsing: "127.0.0.1:0").port == 0)
        #expect(try WebAddress(parsing: "[::1]:8765").host == "::1")
        #expect(try WebAddress(parsing: "0.0.0.0:8765", allowRemote: true).host == "0.0.0.0")
        do {
            _ = try WebAddress(parsing: "0.0.0.0:1")
        } catch {
            #expect(error.description.contains("--http-allow-remote") || error.description.contains("loopback"))
        }
    }

    @Test func mutatingRequestsNeedTheTokenAndTheSameOrigin() {
        let security = WebSecurity(token: "secret")
        let host = "127.0.0.1:8765"
        #expect(security.refusal(method: .get, host: host, origin: nil, fetchSite: nil, token: nil, port: 8765) == nil)
        #expect(
            security.refusal(method: .post, host: host, origin: nil, fetchSite: nil, token: nil, port: 8765)?.status
                == .forbidden)
        #expect(
            security.refusal(method: .post, host: host, origin: nil, fetchSite: nil, token: "secreT", port: 8765)?
                .status == .forbidden)
        #expect(
            security.refusal(method: .delete, host: host, origin: nil, fetchSite: nil, token: "secret", port: 8765)
                == nil)
        #expect(
            security.refusal(
                method: .post, host: host, origin: "http://evil.example", fetchSite: nil, token: "secret", port: 8765)?
                .status == .forbidden)
        #expect(
            security.refusal(
                method: .post, host: host, origin: "http://127.0.0.1:8765", fetchSite: "cross-site", token: "secret",
                port: 8765)?
                .status == .forbidden)
        #expect(
            security.refusal(
                method: .post, host: host, origin: "http://127.0.0.1:8765", fetchSite: "same-origin", token: "secret",
                port: 8765)
                == nil)
        // A push (POST /push/KIND) carries the kind's push token, which its
        // route checks, not the page's; every other check still applies.
        #expect(
            security.refusal(
                method: .post, path: "/push/k", host: host, origin: nil, fetchSite: nil, token: nil, port: 8765)
                == nil)
        #expect(
            security.refusal(
                method: .delete, path: "/push/k", host: host, origin: nil, fetchSite: nil, token: nil, port: 8765)?
                .status == .forbidden)
        #expect(
            security.refusal(
                method: .post, path: "/api/instances", host: host, origin: nil, fetchSite: nil, token: nil,
                port: 8765)?.status == .forbidden)
        #expect(
            security.refusal(
                method: .post, path: "/push/k", host: host, origin: "http://evil.example", fetchSite: nil, token: nil,
                port: 8765)?.status == .forbidden)
        #expect(
            security.refusal(
                method: .post, path: "/push/k", host: "evil.example:8765", origin: nil, fetchSite: nil, token: nil,
                port: 8765)?.status == .misdirectedRequest)
        // DNS rebinding: another name for 127.0.0.1 is refused even for reads.
        #expect(
            security.refusal(
                method: .get, host: "evil.example:8765", origin: nil, fetchSite: nil, token: nil, port: 8765)?.status
                == .misdirectedRequest)
        #expect(security.refusal(method: .get, host: nil, origin: nil, fetchSite: nil, token: nil, port: 8765) != nil)
    }

    @Test func tokensAndNoncesAreFreshAndLong() {
        #expect(WebSecurity.newToken().count == 64)
        #expect(WebSecurity.newToken() != WebSecurity.newToken())
        #expect(WebSecurity.newNonce() != WebSecurity.newNonce())
        let policy = WebSecurity.pagePolicy(nonce: "abc")
        #expect(policy.hasPrefix("default-src 'none'") && policy.contains("script-src 'nonce-abc'"))
        #expect(!policy.contains("unsafe-eval") && !policy.contains("script-src 'unsafe-inline'"))
        #expect(WebSecurity.pagePolicy(nonce: "abc", static: true).contains("connect-src 'none'"))
    }

    /// The real server over real HTTP: a wrong token is refused, the right
    /// one works, another Host is refused, every answer has the policy.
    @Test(.timeLimit(.minutes(3))) func theRealServerRefusesAWrongToken() async throws {
        let preview = try PreviewProcess(plugin: Web.plugin("Countdown"))
        defer { preview.stop() }
        let page = try await HTTP.request(preview.url)
        #expect(page.status == 200)
        #expect(page.headers["content-security-policy"]?.hasPrefix("default-src 'none'") == true)
        #expect(page.headers["x-content-type-options"] == "nosniff")
        let none = try await HTTP.request(preview.base + "/api/reload", method: "POST")
        #expect(none.status == 403)
        let wrong = try await HTTP.request(
            preview.base + "/api/reload", method: "POST",
            headers: ["X-Widgethost-Token": String(repeating: "0", count: 64)])
        #expect(wrong.status == 403)
        #expect(wrong.body.contains("token"))
        let crossSite = try await HTTP.request(
            preview.base + "/api/reload", method: "POST",
            headers: ["X-Widgethost-Token": preview.token, "Origin": "http://evil.example"])
        #expect(crossSite.status == 403)
        let right = try await HTTP.request(
            preview.base + "/api/reload", method: "POST", headers: ["X-Widgethost-Token": preview.token])
        #expect(right.status == 200)
        #expect(right.body.contains("\"generation\":2"))
        let port = preview.base.split(separator: ":").last!
        let rebound = Web.shell(
            "curl -s -o /dev/null -w '%{http_code}' -H 'Host: evil.example:\(port)' '\(preview.base)/'")
        #expect(rebound.output == "421")
    }
}
