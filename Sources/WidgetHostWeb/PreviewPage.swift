import WidgetHostModel

/// The preview's page: every kind × family with its placeholder, snapshot
/// and timeline, each entry drawn by ``EntryRenderer`` in a sandboxed frame at
/// its family's size, and a scrubber over the timeline's dates.
///
/// Two forms: served (`live`: it listens on `/events` and reloads when the
/// plugin changes) and static (`--html FILE`: one self-contained file, its
/// policy in a `<meta>`, nothing fetched at view time).
public struct PreviewPage: Sendable {
    public var renderer: EntryRenderer

    public init(renderer: EntryRenderer = EntryRenderer()) {
        self.renderer = renderer
    }

    /// How the page is delivered.
    public enum Delivery: Sendable {
        /// Served by `preview`: live reload over server-sent events.
        case live
        /// Written to a file: no network at view time.
        case staticFile
    }

    /// The page for `document`; its script carries `nonce`.
    public func html(_ document: PreviewDocument, nonce: String, delivery: Delivery, note: String? = nil) -> String {
        let plugin = document.plugin
        var html = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        if delivery == .staticFile {
            html +=
                "<meta http-equiv=\"Content-Security-Policy\" content=\"\(HTMLText.escape(WebSecurity.pagePolicy(nonce: nonce, static: true)))\">\n"
        }
        html += "<meta name=\"viewport\" content=\"width=device-width\">\n"
        html += "<title>Preview: \(HTMLText.escape(plugin.name))</title>\n<style>\(Self.style)</style></head>\n"
        html += "<body data-delivery=\"\(delivery == .live ? "live" : "static")\">\n<header>"
        html +=
            "<h1>\(HTMLText.escape(plugin.name)) <small>\(HTMLText.escape(plugin.id)) \(HTMLText.escape(plugin.version))</small></h1>\n"
        html +=
            "<p>Calls made at <time>\(Timestamp.iso8601(document.now))</time> · \(document.kinds.count) kinds · "
            + "\(plugin.templates.count) templates · \(HTMLText.escape(plugin.path))</p>\n"
        if let note { html += "<p class=\"note\">\(HTMLText.escape(note))</p>\n" }
        if delivery == .live {
            html += "<p><button id=\"call-again\" type=\"button\">Call the plugin again</button></p>\n"
        }
        html += "</header>\n"
        for kind in document.kinds {
            html += "<section class=\"kind\" data-kind=\"\(HTMLText.escape(kind.kind.id))\">\n"
            html +=
                "<h2>\(HTMLText.escape(kind.kind.displayName)) <code>\(HTMLText.escape(kind.kind.id))</code></h2>\n"
            if !kind.kind.summary.isEmpty { html += "<p>\(HTMLText.escape(kind.kind.summary))</p>\n" }
            for family in kind.families {
                html += familyHTML(family, kind: kind.kind, plugin: plugin, now: document.now)
            }
            html += "</section>\n"
        }
        html += "<script nonce=\"\(nonce)\">\(Self.script(live: delivery == .live))</script>\n</body></html>\n"
        return html
    }

    func familyHTML(_ preview: PreviewDocument.Family, kind: KindDescription, plugin: PluginDescription, now: Double)
        -> String
    {
        let box = FamilyBox(preview.family)
        let template = plugin.template(kind: kind.id, family: preview.family)
        var html = "<div class=\"family\" data-family=\"\(box.family.name)\">\n"
        html +=
            "<h3>\(box.family.name) <small>\(box.width) × \(box.height) pt · "
            + "\(template == nil ? "generic card" : "plugin template")</small></h3>\n<div class=\"panels\">\n"
        for (name, answer) in [("placeholder", preview.placeholder), ("snapshot", preview.snapshot)] {
            html += "<figure class=\"panel\" data-entry-point=\"\(name)\"><figcaption>\(name)</figcaption>\n"
            switch answer {
            case .failed(let message): html += failure(message, box: box)
            case .entries(let entries, _, _):
                if let entry = entries.first {
                    html += widget(entry, box: box, template: template, label: "\(kind.displayName) \(name)")
                } else {
                    html += failure("no entry", box: box)
                }
            }
            html += "</figure>\n"
        }
        html += "<figure class=\"panel timeline\" data-entry-point=\"timeline\">"
        switch preview.timeline {
        case .failed(let message):
            html += "<figcaption>timeline</figcaption>\n" + failure(message, box: box)
        case .entries(let entries, let policy, _):
            html +=
                "<figcaption>timeline · \(entries.count) entries · \(HTMLText.escape(policy?.description ?? "never"))</figcaption>\n"
            let current = entries.lastIndex { $0.date <= now } ?? 0
            // One frame per timeline (a browser draws hundreds of sandboxed
            // frames slowly): the shown entry's; the others' documents wait
            // in data attributes until the scrubber picks them.
            let rendered = entries.enumerated().map { index, entry in
                renderer.render(
                    entry: entry, family: box.family, template: template,
                    label: "\(kind.displayName) entry \(index + 1)")
            }
            html += "<div class=\"entries\" data-current=\"\(current)\">"
            if current < rendered.count { html += rendered[current].frame }
            html += "</div>\n<ol class=\"entry-list\" hidden>\n"
            for (index, entry) in entries.enumerated() {
                let label = "\(Timestamp.iso8601(entry.date)) (\(Timestamp.relative(entry.date, to: now)))"
                html +=
                    "<li data-index=\"\(index)\" data-label=\"\(HTMLText.escape(label))\" "
                    + "data-srcdoc=\"\(HTMLText.escape(rendered[index].document))\"></li>\n"
            }
            html += "</ol>\n"
            if entries.count > 1 {
                html +=
                    "<input type=\"range\" class=\"scrubber\" min=\"0\" max=\"\(entries.count - 1)\" value=\"\(current)\" "
                    + "aria-label=\"entry date\">\n"
            }
            let shown =
                entries.isEmpty
                ? "no entries"
                : "\(Timestamp.iso8601(entries[current].date)) (\(Timestamp.relative(entries[current].date, to: now)))"
            html += "<output class=\"entry-date\">\(HTMLText.escape(shown))</output>\n"
        }
        html += "</figure>\n</div></div>\n"
        return html
    }

    func widget(_ entry: EntryRecord, box: FamilyBox, template: TemplateDescription?, label: String) -> String {
        let rendered = renderer.render(entry: entry, family: box.family, template: template, label: label)
        return rendered.frame
    }

    func failure(_ message: String, box: FamilyBox) -> String {
        "<div class=\"failure\" style=\"width:\(box.width)px;min-height:\(box.height)px\">\(HTMLText.escape(message))</div>\n"
    }

    static let style = """
        body{font:14px system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;background:#e5e5ea;color:#1c1c1e}
        header{padding:16px 24px;background:#fff;border-bottom:1px solid #d1d1d6}
        header h1{margin:0;font-size:20px}header small{color:#8e8e93;font-weight:400;font-size:13px}
        header p{margin:4px 0 0;color:#636366;font-size:12px}.note{color:#b25000}
        .kind{padding:8px 24px 16px}.kind h2{font-size:17px;margin:12px 0 2px}.kind h2 code{font-size:12px;color:#8e8e93}
        .kind>p{margin:0 0 8px;color:#636366}
        .family{background:#f2f2f7;border-radius:14px;padding:10px 14px;margin:10px 0}
        .family h3{margin:0 0 8px;font-size:14px}.family h3 small{color:#8e8e93;font-weight:400}
        .panels{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}
        figure{margin:0}figcaption{font-size:11px;color:#636366;margin-bottom:4px}
        iframe.wh-widget{border:0;display:block;border-radius:18px;background:#fff;box-shadow:0 1px 3px rgba(0,0,0,.15)}
        iframe.wh-widget[data-family=accessoryCircular]{border-radius:50%}
        iframe.wh-widget[data-family=accessoryInline]{border-radius:4px}
        iframe.wh-widget[data-family=accessoryRectangular]{border-radius:12px}
        .scrubber{display:block;width:100%;min-width:170px;margin-top:6px}
        .entry-date{display:block;font-size:11px;color:#636366}
        .failure{box-sizing:border-box;padding:8px;border-radius:14px;background:#ffe5e5;color:#8a1111;font-size:11px;overflow:auto}
        """

    static func script(live: Bool) -> String {
        var script = """
            for (const timeline of document.querySelectorAll('.timeline')) {
              const range = timeline.querySelector('.scrubber');
              if (!range) continue;
              const shown = timeline.querySelector('.entries');
              const entries = timeline.querySelectorAll('.entry-list li');
              const output = timeline.querySelector('.entry-date');
              range.addEventListener('input', () => {
                const entry = entries[Number(range.value)];
                shown.querySelector('iframe').srcdoc = entry.dataset.srcdoc;
                shown.dataset.current = entry.dataset.index;
                output.textContent = entry.dataset.label;
              });
            }
            """
        if live {
            script += """

                const token = new URLSearchParams(location.search).get('token') ?? '';
                const button = document.getElementById('call-again');
                button.addEventListener('click', async () => {
                  const answer = await fetch('/api/reload', { method: 'POST', headers: { 'X-Widgethost-Token': token } });
                  if (!answer.ok) button.title = await answer.text();
                });
                const events = new EventSource('/events');
                events.addEventListener('reload', () => location.reload());
                events.addEventListener('open', () => document.body.dataset.events = 'open');
                """
        }
        return script
    }
}
