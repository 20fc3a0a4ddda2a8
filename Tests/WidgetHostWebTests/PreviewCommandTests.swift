import Foundation
import Testing

/// `widgethost preview` as users run it: the static page and the exit codes.
struct PreviewCommandTests {
    func run(_ arguments: [String]) -> (status: Int32, output: String) {
        Web.shell(([Web.executable] + arguments).map { "'\($0)'" }.joined(separator: " ") + " 2>&1")
    }

    @Test func htmlWritesOneSelfContainedPage() throws {
        let page = Web.temporaryDirectory("static") + "/countdown.html"
        let result = run(["preview", Web.plugin("Countdown"), "--html", page, "--now", "2026-12-31T20:00:00Z"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("Wrote \(page): 1 kinds, 4 families"))
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src &#39;none&#39;"))
        #expect(html.contains("connect-src &#39;none&#39;"))
        // Nothing fetched at view time: no URL, no source attribute, no live events.
        #expect(!html.contains("http://") && !html.contains("https://") && !html.contains(" src="))
        #expect(!html.contains("EventSource"))
        #expect(html.components(separatedBy: "<iframe class=\"wh-widget\" sandbox=\"\"").count - 1 == 12)
    }

    @Test func usageErrorsExitTwoAndPluginFailuresOne() {
        let unknownKind = run(["preview", Web.plugin("Countdown"), "--kind", "nope", "--html", "/dev/null"])
        #expect(unknownKind.status == 2, "\(unknownKind.output)")
        #expect(unknownKind.output.contains("has no kind \"nope\"; it has: com.widgethost.countdown"))
        let remote = run(["preview", Web.plugin("Countdown"), "--host", "0.0.0.0"])
        #expect(remote.status == 2, "\(remote.output)")
        #expect(remote.output.contains("loopback"))
        let both = run(["preview", Web.plugin("Countdown"), "--watch", "--html", "/dev/null"])
        #expect(both.status == 2, "\(both.output)")
        let broken = run(["preview", Web.hostile(1), "--html", "/dev/null"])
        #expect(broken.status == 1, "\(broken.output)")
        #expect(broken.output.contains("templates[0].kind_id"))
        let missing = run(["preview", "/nonexistent/plugin.so", "--html", "/dev/null"])
        #expect(missing.status == 2, "\(missing.output)")
    }
}
