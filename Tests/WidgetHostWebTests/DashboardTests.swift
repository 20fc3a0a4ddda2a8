import Foundation
import Testing
import WidgetHostControl
import WidgetHostModel

@testable import WidgetHostWeb

/// `widgethost run --http`: a real daemon (real plugins in their sandboxes,
/// real SQLite) serving its dashboard to a real headless Chromium. Generous
/// timeouts and polling, no timing asserts (the goals are measured by
/// scripts/bench-dashboard, not here).
@Suite(
    .serialized,
    .enabled(if: Browser.available, "chromium and chromedriver are not installed: run scripts/setup --tests"),
    .timeLimit(.minutes(10)))
struct DashboardTests {
    @Test func theDashboardDrawsUpdatesAddsRemovesAndRefuses() async throws {
        let directory = Web.temporaryDirectory("dashboard")
        let canary = try Canary(directory: directory)
        defer { canary.stop() }
        try await canary.waitUntilListening()
        let families = WidgetFamily.allCases
        // tick comes last, so that its stack (systemSmall) has it at the
        // bottom until its relevant entry (score 50) lifts it to the top.
        var instances: [String] = []
        for family in families {
            instances.append(
                #"{ "id": "every-\#(family.name)", "plugin": "every", "kind": "test.hostile", "family": "\#(family.name)", "app": "t", "configuration": { "canary": "\#(canary.url)" } }"#
            )
        }
        instances.append(
            #"{ "id": "evil", "plugin": "hostile", "kind": "test.hostile", "app": "t", "configuration": { "canary": "\#(canary.url)" } }"#
        )
        // tick's entries come `spacing` seconds apart: wide enough that a
        // page drawn late on a loaded machine (CI runs this test beside the
        // fuzzers and the shard tests) still sees a reloaded timeline's next
        // entry become current (2 s ran out three times in a row once,
        // stop 61's CI, the test taking 361 s).
        let spacing = 8.0
        instances.append(
            #"{ "id": "tick", "plugin": "ticking", "kind": "test.fixture", "app": "t", "configuration": { "spacing": \#(Int(spacing)) } }"#
        )
        let configuration = """
            {
              "plugins": [{ "name": "ticking", "path": "\(Dashboard.ticking)" },
                          { "name": "every", "path": "\(Web.hostile(6))" },
                          { "name": "hostile", "path": "\(Web.hostile(0))" }],
              "scheduler": { "minimumReloadInterval": 0, "maximumJitter": 0, "coalescingCap": 0 },
              "instances": [\(instances.joined(separator: ",\n"))]
            }
            """
        let daemon = try DashboardProcess(directory: directory, configuration: configuration)
        defer { daemon.stop() }
        let browser = try await Browser()
        do {
            try await browser.open(daemon.url)
            let total = families.count + 2
            #expect(try await browser.waitUntil("return document.querySelectorAll('article.card').length === \(total)"))
            // Every instance's first timeline arrives (live, or already there);
            // a widget's frame is made when its card nears the viewport, so
            // the page is scrolled to each card still without one.
            #expect(
                try await browser.waitUntil(
                    """
                    const waiting = document.querySelector('.wh-deferred');
                    if (waiting) { waiting.scrollIntoView(); return false; }
                    return document.querySelectorAll('article.card iframe.wh-widget').length === \(total);
                    """))
            try await browser.run("window.scrollTo(0, 0)")
            #expect(try await browser.waitUntil("return document.getElementById('wh-live').textContent === 'live'"))
            try await browser.run("window.whMarker = 'same page'")

            // Every family at its size.
            let measured =
                try await browser.run(
                    """
                    return [...document.querySelectorAll('article.card[id^="w-every-"] iframe.wh-widget')].map(frame => {
                      const box = frame.getBoundingClientRect();
                      return [frame.dataset.family, box.width, box.height];
                    });
                    """) as? [[Any]] ?? []
            #expect(measured.count == families.count)
            for row in measured {
                let family = try #require(WidgetFamily(name: row[0] as? String ?? ""), "\(row)")
                let box = FamilyBox(family)
                let width = (row[1] as? NSNumber)?.doubleValue ?? -1
                let height = (row[2] as? NSNumber)?.doubleValue ?? -1
                #expect(abs(width - Double(box.width)) < 0.5 && abs(height - Double(box.height)) < 0.5, "\(row)")
            }
            // The budget gauge and the strips are drawn.
            #expect(
                try await browser.run(
                    "return document.querySelectorAll('article.card meter').length === \(total) && document.querySelectorAll('.strip.ahead').length === \(total) && document.querySelectorAll('.strip.behind').length === \(total)"
                ) as? Bool == true)

            // One section per stack (family), its cards numbered by relevance.
            #expect(
                try await browser.run(
                    """
                    const sections = [...document.querySelectorAll('section.stack')];
                    return sections.length === \(families.count) && sections.every(section =>
                      [...section.querySelectorAll('article.card')].every((card, index) =>
                        card.dataset.rank === String(index + 1) && card.dataset.family === section.dataset.family));
                    """) as? Bool == true)
            // tick's first timeline lifts it to the top for the 8 s its
            // relevant entry is current (entry 1 of 3), so a busy machine may
            // find it there: it is at the bottom again once entry 2 is. The
            // wait is the test's usual 60 s: under a full suite's load (a
            // fresh-clone CI run, 2026-11-28, the test taking 140 s) 30 s
            // were not enough.
            let smallStack = "document.querySelector('#s-systemSmall .stack-cards')"
            #expect(try await browser.waitUntil("return \(smallStack).lastElementChild.id === 'w-tick'"))
            try await browser.run(
                """
                window.whTops = [];
                const list = \(smallStack);
                new MutationObserver(() => window.whTops.push(list.firstElementChild.id)).observe(list, { childList: true });
                """)

            // A reload shows up live: a new timeline (entries `spacing` apart from the call's now).
            let entryDate = "return parseFloat(document.getElementById('w-tick').dataset.entryDate || '0')"
            // Then the next entry becomes current at its date, without a reload.
            // A busy machine may first draw the new timeline at its last entry
            // (2 × spacing after the call), with no entry after it: reload again then.
            var advanced = false
            for _ in 0..<3 where !advanced {
                let before = (try await browser.run(entryDate) as? NSNumber)?.doubleValue ?? 0
                let reload = Web.shell("'\(Web.executable)' reload --kind test.fixture --socket '\(daemon.socket)'")
                try #require(reload.status == 0, "\(reload.output)")
                try #require(try await browser.waitUntil("\(entryDate) > \(before)"), "the reload was not shown")
                let reloaded = (try await browser.run(entryDate) as? NSNumber)?.doubleValue ?? 0
                advanced = try await browser.waitUntil(
                    "\(entryDate) >= \(reloaded + spacing / 2)", timeout: 2 * spacing + 20)
            }
            #expect(advanced, "no reloaded timeline's next entry was shown at its date in three tries")
            // That entry is relevant (score 50): tick went to the top of its stack, live.
            #expect(try await browser.waitUntil("return window.whTops.includes('w-tick')", timeout: 30))
            #expect(try await browser.run("return window.whMarker") as? String == "same page", "the page reloaded")

            // Add from the page's form (built from the kinds' descriptors).
            try await browser.run(
                """
                const form = document.getElementById('wh-add');
                form.elements.plugin.value = 'ticking'; form.elements.plugin.dispatchEvent(new Event('change'));
                form.elements.id.value = 'added';
                form.requestSubmit();
                """)
            #expect(try await browser.waitUntil("return document.querySelector('#w-added iframe.wh-widget') !== null"))
            #expect(
                try await browser.run("return document.getElementById('w-added').dataset.family") as? String
                    == "systemSmall")
            // Remove it from the page.
            try await browser.run("document.querySelector('#w-added button.remove').click()")
            #expect(try await browser.waitUntil("return document.getElementById('w-added') === null"))
            let shown = Web.shell("'\(Web.executable)' show added --socket '\(daemon.socket)'")
            #expect(shown.status != 0, "the daemon still has the removed instance: \(shown.output)")

            // The hostile plugin's entry and template stayed inert.
            try await Task.sleep(for: .seconds(2))
            #expect(try await browser.run("return document.title") as? String == "widgethost dashboard")
            #expect(
                try await browser.run(
                    "return [...document.querySelectorAll('iframe.wh-widget')].every(f => f.getAttribute('sandbox') === '')"
                ) as? Bool == true)
            #expect(canary.requests.isEmpty, "\(canary.requests)")
            BrowserTests.save(try await browser.screenshot(), as: "dashboard.png")
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()

        // A wrong token is refused, for the page and for a change.
        #expect(try await HTTP.request(daemon.base + "/?token=wrong").status == 403)
        #expect(try await HTTP.request(daemon.base + "/events").status == 403)
        let forged = try await HTTP.request(
            daemon.base + "/api/instances/tick", method: "DELETE", headers: ["X-Widgethost-Token": "wrong"])
        #expect(forged.status == 403)
        let crossSite = try await HTTP.request(
            daemon.base + "/api/instances/tick", method: "DELETE",
            headers: ["X-Widgethost-Token": daemon.token, "Origin": "http://evil.example"])
        #expect(crossSite.status == 403)
        #expect(Web.shell("'\(Web.executable)' show tick --socket '\(daemon.socket)'").status == 0)
        // /metrics in Prometheus text, with the token.
        let metrics = try await HTTP.request(
            daemon.base + "/metrics", headers: ["Authorization": "Bearer \(daemon.token)"])
        #expect(metrics.status == 200)
        #expect(metrics.body.contains("widgethost_reloads_total{reason=\"instanceAdded\",outcome=\"ok\"}"))
        #expect(metrics.body.contains("widgethost_reload_seconds_bucket{le=\"+Inf\"}"))
        #expect(metrics.body.contains("widgethost_budget_used{instance=\"tick\"}"))
    }
}

enum Dashboard {
    /// Tests/Fixtures/faulty/ticking.c: entries 2 s apart.
    static let ticking: String = {
        let path = Web.fixtureDirectory + "/ticking.so"
        let result = Web.shell(
            "cc -shared -fPIC -std=gnu11 -I'\(Web.repositoryRoot)/SDK/include' -o '\(path)' "
                + "'\(Web.repositoryRoot)/Tests/Fixtures/faulty/ticking.c'")
        precondition(result.status == 0, "building ticking.c failed:\n\(result.output)")
        return path
    }()
}

/// `widgethost run --http 127.0.0.1:0` on a fresh state, read until it
/// prints the dashboard's URL.
final class DashboardProcess {
    let process = Process()
    let url: String
    let base: String
    let token: String
    let socket: String
    private let output = Pipe()

    init(directory: String, configuration: String) throws {
        let config = directory + "/host.json"
        try configuration.write(toFile: config, atomically: true, encoding: .utf8)
        socket = directory + "/control.sock"
        process.executableURL = URL(fileURLWithPath: Web.executable)
        process.arguments = [
            "run", "--config", config, "--state", directory + "/state.sqlite", "--socket", socket, "--http",
            "127.0.0.1:0", "--log-level", "warning",
        ]
        process.standardOutput = output
        process.standardError = output
        try process.run()
        var seen = ""
        let deadline = Date().addingTimeInterval(90)
        let handle = output.fileHandleForReading
        while !seen.contains("?token="), Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = seen.range(of: #"http://127\.0\.0\.1:\d+/\?token=[0-9a-f]+"#, options: .regularExpression)
        else {
            process.terminate()
            throw PreviewProcess.PreviewFailed(output: seen)
        }
        url = String(seen[range])
        base = String(url[..<url.range(of: "/?token=")!.lowerBound])
        token = String(url[url.range(of: "token=")!.upperBound...])
    }

    /// SIGINT, then SIGKILL if the daemon has not exited within 20 s (so a
    /// daemon that ignores the signal fails the test instead of hanging it).
    func stop() {
        guard process.isRunning else { return }
        process.interrupt()
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            Issue.record("the daemon did not exit within 20 s of SIGINT")
        }
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// The dashboard's pieces without a browser.
struct DashboardPartsTests {
    @Test func metricsCountReloadsByReasonAndOutcomeWithLatency() async {
        let hub = DashboardHub()
        var started = WatchEventDetails()
        started.reason = "policy"
        started.counted = true
        var failed = WatchEventDetails()
        failed.outcome = "timedOut"
        await hub.record([
            WatchEvent(id: 1, time: 100, type: "reload", instance: "a", message: "", details: started),
            WatchEvent(id: 2, time: 100.3, type: "failure", instance: "a", message: "", details: failed),
        ])
        let text = hub.metrics.exposition(DashboardSnapshot(now: 101, widgets: [], plugins: []), listeners: 0)
        #expect(text.contains("widgethost_reloads_total{reason=\"policy\",outcome=\"timedOut\"} 1"))
        #expect(text.contains("widgethost_reload_seconds_bucket{le=\"0.25\"} 0"))
        #expect(text.contains("widgethost_reload_seconds_bucket{le=\"0.5\"} 1"))
        #expect(
            await hub.history["a"] == [
                DashboardMark(time: 100, kind: .counted), DashboardMark(time: 100.3, kind: .failure),
            ])
        // Gauges follow the snapshot: an instance's go when it does; label values are escaped.
        let widget = DashboardWidget(
            id: "a\"b\\c\nd", plugin: "p", kind: "k", family: .systemSmall, origin: "configuration", budgetUsed: 3,
            budgetAllowance: 72)
        let withIt = hub.metrics.exposition(DashboardSnapshot(now: 101, widgets: [widget], plugins: []), listeners: 2)
        #expect(withIt.contains("widgethost_budget_used{instance=\"a\\\"b\\\\c\\nd\"} 3"), "\(withIt)")
        #expect(withIt.contains("widgethost_budget_allowance{instance=\"a\\\"b\\\\c\\nd\"} 72"))
        #expect(withIt.contains("widgethost_instances 1") && withIt.contains("widgethost_dashboard_pages 2"))
        #expect(withIt.contains("widgethost_dashboard_events_total 2"))
        let without = hub.metrics.exposition(DashboardSnapshot(now: 102, widgets: [], plugins: []), listeners: 0)
        #expect(!without.contains("widgethost_budget_used{") && without.contains("widgethost_instances 0"))
    }

    /// A reload whose plugin was not called (`held`) is given back by the
    /// scheduler: its charge returned, its time not a reload's. The strip of
    /// the past 24 h takes its mark back too, so its counts agree with the
    /// budget (it once kept the counted mark: budget used that was returned).
    @Test func aHeldReloadTakesItsMarkBackSoTheStripAgreesWithTheBudget() async {
        let hub = DashboardHub()
        func reload(_ id: Int64, at time: Double, counted: Bool) -> WatchEvent {
            var details = WatchEventDetails()
            details.reason = counted ? "reloadTimelines" : "policy"
            details.counted = counted
            return WatchEvent(id: id, time: time, type: "reload", instance: "a", message: "", details: details)
        }
        func held(_ id: Int64, at time: Double) -> WatchEvent {
            var details = WatchEventDetails()
            details.outcome = "plugin p cannot be called: it did not load"
            details.budgetUsed = 1
            return WatchEvent(id: id, time: time, type: "held", instance: "a", message: "", details: details)
        }
        await hub.record([
            reload(1, at: 100, counted: true),
            WatchEvent(id: 2, time: 100.2, type: "timeline", instance: "a", message: ""),
        ])
        let before = await hub.history["a"]
        // A counted reload held, then a free one held: both marks go.
        await hub.record([reload(3, at: 200, counted: true)])
        #expect(await hub.history["a"]?.filter { $0.kind == .counted }.count == 2)
        await hub.record([held(4, at: 200.01), reload(5, at: 300, counted: false), held(6, at: 300.01)])
        #expect(await hub.history["a"] == before)
        let strip = DashboardPage.behind(await hub.history["a"] ?? [], now: 400)
        #expect(strip.contains("data-counted=\"1\" data-free=\"0\" data-failed=\"0\""), "\(strip)")
        // Still counted in the metrics, as reloads not called.
        let text = hub.metrics.exposition(DashboardSnapshot(now: 400, widgets: [], plugins: []), listeners: 0)
        #expect(
            text.contains("widgethost_reloads_total{reason=\"reloadTimelines\",outcome=\"notCalled\"} 1"), "\(text)")
    }

    @Test func theAddRequestIsCheckedBeforeTheDaemonSeesIt() {
        if case .success = DashboardRoutes.instanceSpec("[1]") { Issue.record("an array was taken") }
        if case .success = DashboardRoutes.instanceSpec("{\"plugin\":\"p\"}") { Issue.record("no id was taken") }
        if case .success(let spec) = DashboardRoutes.instanceSpec(
            "{\"id\":\"x\",\"plugin\":\"p\",\"kind\":\"k\",\"family\":\"systemMedium\",\"configuration\":{\"n\":2}}")
        {
            #expect(spec.id == "x" && spec.plugin == "p" && spec.kind == "k" && spec.family == "systemMedium")
        } else {
            Issue.record("a good request was refused")
        }
    }

    /// A source that answers snapshots of fixed widgets.
    struct FixedSource: DashboardSource {
        var widgets: [DashboardWidget]
        func snapshot(instances: [String]?) async -> DashboardSnapshot {
            DashboardSnapshot(
                now: 0, widgets: widgets.filter { instances?.contains($0.id) ?? true }, plugins: [])
        }
        func perform(_ request: ControlRequest) async -> ControlResponse { ControlResponse(id: request.id) }
        func events() -> AsyncStream<[WatchEvent]> { AsyncStream { $0.finish() } }
    }

    /// The page holds one section per stack (family), its cards by
    /// relevance, top first; a change of a stack's order reaches the page
    /// as a `stack` event (the browser test follows it live).
    @Test func stacksAreDrawnByRelevanceAndTheirOrderChangesAreSent() async {
        func widget(_ id: String, _ family: WidgetFamily, rank: Int?, score: Double) -> DashboardWidget {
            DashboardWidget(
                id: id, plugin: "p", kind: "k", family: family, origin: "configuration", stackRank: rank,
                relevance: score)
        }
        let widgets = [
            widget("low", .systemSmall, rank: 3, score: 1), widget("large", .systemLarge, rank: 1, score: 0),
            widget("top", .systemSmall, rank: 1, score: 9), widget("middle", .systemSmall, rank: 2, score: 5),
        ]
        let html = DashboardPage().html(
            DashboardSnapshot(now: 0, widgets: widgets, plugins: []), history: [:], nonce: "n")
        func at(_ text: String) -> Int {
            html.range(of: text).map { html.distance(from: html.startIndex, to: $0.lowerBound) } ?? -1
        }
        #expect(at("id=\"s-systemSmall\"") >= 0 && at("id=\"s-systemLarge\"") > at("id=\"s-systemSmall\""))
        #expect(at("id=\"w-top\"") < at("id=\"w-middle\"") && at("id=\"w-middle\"") < at("id=\"w-low\""))
        #expect(at("id=\"w-low\"") < at("id=\"s-systemLarge\""), "a stack's cards stay in its section")
        #expect(html.contains("data-rank=\"2\"") && html.contains("#2</span>"))

        let routes = DashboardRoutes(source: FixedSource(widgets: widgets), security: WebSecurity(token: "t"))
        var details = WatchEventDetails()
        details.family = "systemSmall"
        details.order = ["middle", "top", "low"]
        let text = await routes.cards(for: [
            WatchEvent(
                id: 7, time: 0, type: WatchEventType.stack.rawValue, instance: "middle", message: "", details: details)
        ])
        #expect(text.contains("event: card\ndata: {\"id\":\"middle\""), "\(text)")
        #expect(
            text.contains(
                "id: 7\nevent: stack\ndata: {\"family\":\"systemSmall\",\"order\":[\"middle\",\"top\",\"low\"]}"),
            "\(text)")
    }

    @Test func thePluginsJSONCannotCloseItsScriptElement() {
        let kind = KindDescription(
            id: "</script><script>alert(1)</script>", displayName: "x", summary: "", familyBits: 1, needsNetwork: false,
            entryPoints: [], parameters: [])
        let json = DashboardPage.pluginsJSON([DashboardPlugin(name: "p", kinds: [kind])])
        #expect(!json.contains("<"))
    }
}
