import Foundation
import Testing
import WidgetHostIsolation
import WidgetHostModel

@testable import WidgetHostWeb

/// `widgethost preview` in a real headless Chromium (Debian's, through
/// chromedriver). Generous timeouts and polling, no timing asserts: these
/// run on a busy 2-core machine.
@Suite(
    .serialized,
    .enabled(if: Browser.available, "chromium and chromedriver are not installed: run scripts/setup --tests"),
    .timeLimit(.minutes(10)))
struct BrowserTests {
    /// Where the screenshots go: the build directory always, and
    /// `WIDGETHOST_SCREENSHOTS` (e.g. docs/images) when set.
    static func save(_ png: Data, as name: String) {
        var directories = [Web.buildDirectory + "/web-tests/screenshots"]
        if let extra = ProcessInfo.processInfo.environment["WIDGETHOST_SCREENSHOTS"], !extra.isEmpty {
            directories.append(extra.hasPrefix("/") ? extra : Web.repositoryRoot + "/" + extra)
        }
        for directory in directories {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: directory + "/" + name, contents: png)
        }
    }

    @Test func everyFamilyRendersAtItsSize() async throws {
        let preview = try PreviewProcess(plugin: Web.hostile(6))
        defer { preview.stop() }
        let browser = try await Browser()
        do {
            try await browser.open(preview.url)
            #expect(try await browser.waitUntil("return document.querySelectorAll('iframe.wh-widget').length > 0"))
            let measured =
                try await browser.run(
                    """
                    return [...document.querySelectorAll('iframe.wh-widget')].map(frame => {
                      const box = frame.getBoundingClientRect();
                      return [frame.dataset.family, box.width, box.height];
                    });
                    """) as? [[Any]] ?? []
            var families = Set<String>()
            for row in measured {
                let name = row[0] as? String ?? ""
                let family = try #require(WidgetFamily(name: name), "\(row)")
                let box = FamilyBox(family)
                let width = (row[1] as? NSNumber)?.doubleValue ?? -1
                let height = (row[2] as? NSNumber)?.doubleValue ?? -1
                #expect(abs(width - Double(box.width)) < 0.5 && abs(height - Double(box.height)) < 0.5, "\(row)")
                families.insert(name)
            }
            #expect(families == Set(WidgetFamily.allCases.map(\.name)))
            // Placeholder, snapshot and the shown timeline entry per family
            // (one frame per timeline: the scrubber swaps its document).
            #expect(measured.count == WidgetFamily.allCases.count * 3)
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }

    @Test func theScrubberChangesTheShownEntryAndTheScreenshotIsSaved() async throws {
        let preview = try PreviewProcess(plugin: Web.plugin("Countdown"), arguments: ["--now", "2026-12-31T20:00:00Z"])
        defer { preview.stop() }
        let browser = try await Browser()
        do {
            try await browser.open(preview.url)
            #expect(try await browser.waitUntil("return document.querySelector('.timeline .scrubber') !== null"))
            let shown = """
                const timeline = document.querySelector('[data-family=systemSmall] .timeline');
                const frames = timeline.querySelectorAll('.entries iframe');
                return [frames.length, timeline.querySelector('.entries').dataset.current,
                        timeline.querySelector('.entry-date').textContent, frames[0].srcdoc];
                """
            Self.save(try await browser.screenshot(), as: "preview.png")
            let before = try await browser.run(shown) as? [Any] ?? []
            #expect(before.count == 4)
            #expect(before[0] as? Int == 1 && before[1] as? String == "0")
            try await browser.run(
                """
                const range = document.querySelector('[data-family=systemSmall] .timeline .scrubber');
                range.value = '12';
                range.dispatchEvent(new Event('input'));
                """)
            let after = try await browser.run(shown) as? [Any] ?? []
            #expect(after[0] as? Int == 1 && after[1] as? String == "12")
            #expect((after[2] as? String)?.contains("2026-12-31T21:00:00") == true, "\(after[2])")
            #expect(after[3] as? String != before[3] as? String)
            let document = try #require(after[3] as? String)
            #expect(document.contains("<div class=\"big\">0<span class=\"unit\"> days</span>"))
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }

    @Test func theHostileEntryAndTemplateStayInertServedAndStatic() async throws {
        let directory = Web.temporaryDirectory("canary")
        let canary = try Canary(directory: directory)
        defer { canary.stop() }
        try await canary.waitUntilListening()
        let configuration = "{\"canary\":\"\(canary.url)\"}"
        let preview = try PreviewProcess(plugin: Web.hostile(0), arguments: ["--config", configuration])
        defer { preview.stop() }
        let staticPage = directory + "/hostile.html"
        let written = Web.shell(
            "'\(Web.executable)' preview '\(Web.hostile(0))' --config '\(configuration)' --html '\(staticPage)'")
        try #require(written.status == 0, "\(written.output)")

        let browser = try await Browser()
        do {
            for url in [preview.url, "file://" + staticPage] {
                try await browser.open(url)
                #expect(try await browser.waitUntil("return document.querySelectorAll('iframe.wh-widget').length >= 6"))
                // Time for anything that would run (autofocus, onerror, refresh) to run.
                try await Task.sleep(for: .seconds(3))
                let title = try await browser.run("return document.title") as? String
                #expect(title == "Preview: Hostile", "\(url)")
                let frames = try await browser.run(
                    "return [...document.querySelectorAll('iframe.wh-widget')].every(f => f.getAttribute('sandbox') === '')"
                )
                #expect(frames as? Bool == true)
                let location = try await browser.run("return location.href") as? String
                #expect(location == url, "the page navigated away")
            }
            #expect(canary.requests.isEmpty, "\(canary.requests)")

            // The control: the same template output without the frame's
            // sandbox and policy does reach the canary, so the check above
            // can fail.
            let engine = IsolationEngine(plugin: Web.hostile(0))
            defer { engine.stop() }
            let plugin = try engine.prepare(dataDirectory: Web.temporaryDirectory("data")).get()
            let output = engine.call(
                PluginCall(
                    .snapshot, kind: "test.hostile", family: .systemSmall, now: 1_790_000_000,
                    configuration: ["canary": "\"\(canary.url)\""], dataDirectory: Web.temporaryDirectory("data")))
            let entry = try #require(output.result?.entries.first)
            let rendered = EntryRenderer().render(
                entry: entry, family: .systemSmall,
                template: plugin.template(kind: "test.hostile", family: .systemSmall))
            let unprotected = rendered.document.replacingOccurrences(
                of: "<meta http-equiv=\"Content-Security-Policy\" content=\"\(EntryRenderer.framePolicy)\">", with: "")
            #expect(unprotected != rendered.document)
            let controlPage = directory + "/unprotected.html"
            FileManager.default.createFile(atPath: controlPage, contents: Data(unprotected.utf8))
            try await browser.open("file://" + controlPage)
            var reached = false
            for _ in 0..<120 where !reached {
                reached = !canary.requests.isEmpty
                if !reached { try await Task.sleep(for: .milliseconds(250)) }
            }
            #expect(reached, "the unprotected control page reached nothing: the canary check could not fail")
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }

    @Test func watchReloadsThePageWhenThePluginChanges() async throws {
        let directory = Web.temporaryDirectory("watch")
        let plugin = directory + "/libWatched.so"
        #expect(Web.shell("cp '\(Web.plugin("Countdown"))' '\(plugin)'").status == 0)
        let preview = try PreviewProcess(plugin: plugin, arguments: ["--watch"])
        defer { preview.stop() }
        let browser = try await Browser()
        do {
            try await browser.open(preview.url)
            #expect(try await browser.waitUntil("return document.body.dataset.events === 'open'"))
            #expect(
                try await browser.run("return document.querySelector('h1').textContent") as? String
                    == "Countdown com.widgethost.countdown 1.0.0")
            try await browser.run("window.beforeRebuild = true;")
            // A rebuild, as a linker writes it: a new file renamed over the old.
            #expect(
                Web.shell("cp '\(Web.plugin("Character"))' '\(plugin).new' && mv '\(plugin).new' '\(plugin)'").status
                    == 0)
            #expect(
                try await browser.waitUntil(
                    "return window.beforeRebuild === undefined && document.querySelector('h1').textContent.startsWith('Game Widgets')",
                    timeout: 90))
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }
}
