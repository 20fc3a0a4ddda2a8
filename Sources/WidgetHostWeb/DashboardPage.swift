import WidgetHostModel

/// The dashboard's HTML: the page shell and one card per instance. Widgets
/// are drawn by the web side's one renderer (``EntryRenderer``), each in its
/// sandboxed frame at its family's size; the host's own markup is escaped
/// with ``HTMLText``.
///
/// ```swift
/// let page = DashboardPage()
/// let html = page.html(snapshot, history: history, nonce: nonce)
/// ```
public struct DashboardPage: Sendable {
    public let renderer: EntryRenderer

    public init(renderer: EntryRenderer = EntryRenderer()) {
        self.renderer = renderer
    }

    /// The whole page: every card, in stacks (one per family, as the Smart
    /// Stack holds widgets of one size) ordered by relevance, top first; the
    /// add form (built from the kinds' descriptors) and the script (by
    /// `nonce`) that follows `/events`.
    public func html(_ snapshot: DashboardSnapshot, history: [String: [DashboardMark]], nonce: String) -> String {
        var cards = ""
        cards.reserveCapacity(snapshot.widgets.count * 2048)
        for (family, members) in Self.stacks(snapshot.widgets) {
            cards += Self.stackOpening(family)
            for widget in members { cards += card(widget, history: history[widget.id] ?? [], now: snapshot.now) }
            cards += "</div></section>"
        }
        return """
            <!doctype html><html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>widgethost dashboard</title><style>\(Self.style)</style></head>
            <body><header class="top"><h1>widgethost</h1>
            <span id="wh-count">\(snapshot.widgets.count) instances</span>
            <span id="wh-live" class="live">connecting</span></header>
            <main id="wh-cards">\(cards)</main>
            \(addForm(snapshot.plugins))
            <script type="application/json" id="wh-plugins">\(Self.pluginsJSON(snapshot.plugins))</script>
            <script nonce="\(nonce)">\(Self.script)</script>
            </body></html>
            """
    }

    /// The widgets by stack, in WidgetFamily's order, each stack by rank
    /// (top first; unknown ranks last, in the snapshot's order).
    static func stacks(_ widgets: [DashboardWidget]) -> [(WidgetFamily, [DashboardWidget])] {
        var byFamily: [WidgetFamily: [DashboardWidget]] = [:]
        for widget in widgets { byFamily[widget.family, default: []].append(widget) }
        return WidgetFamily.allCases.compactMap { family in
            guard let members = byFamily[family] else { return nil }
            let ordered = members.enumerated().sorted {
                ($0.element.stackRank ?? .max, $0.offset) < ($1.element.stackRank ?? .max, $1.offset)
            }
            return (family, ordered.map(\.element))
        }
    }

    /// A stack's section up to its cards (the script makes the same for a
    /// family that appears later).
    static func stackOpening(_ family: WidgetFamily) -> String {
        "<section class=\"stack\" id=\"s-\(family.name)\" data-family=\"\(family.name)\"><h2>\(family.name) stack</h2><div class=\"stack-cards\">"
    }

    /// One instance's card (also what `/events` sends when it changes).
    public func card(_ widget: DashboardWidget, history: [DashboardMark], now: Double) -> String {
        let id = HTMLText.escape(widget.id)
        var badges = ""
        if widget.isQuarantined {
            badges += "<span class=\"badge quarantine\">quarantined</span>"
        } else if let unavailable = widget.unavailable {
            badges += "<span class=\"badge failure\" title=\"\(HTMLText.escape(unavailable))\">unavailable</span>"
        }
        if widget.consecutiveFailures > 0 {
            badges +=
                "<span class=\"badge failure\">\(widget.consecutiveFailures) failed (\(HTMLText.escape(widget.lastOutcome ?? "failed")))</span>"
        }
        if widget.inFlight { badges += "<span class=\"badge reloading\">reloading</span>" }
        let drawn: String
        if let entry = widget.entry {
            drawn =
                renderer.render(
                    entry: entry, family: widget.family,
                    template: widget.template, label: "\(widget.id): \(widget.kind)"
                ).deferredFrame
        } else {
            let box = FamilyBox(widget.family)
            drawn =
                "<div class=\"wh-empty\" data-family=\"\(box.family.name)\" style=\"width:\(box.width)px;height:\(box.height)px\">no timeline yet</div>"
        }
        let used = widget.budgetUsed ?? 0
        let allowance = max(widget.budgetAllowance ?? 0, 0)
        let next =
            widget.nextReload.map {
                "next reload \(Timestamp.relative($0, to: now)) (\(HTMLText.escape(widget.nextReason ?? "planned")))"
            } ?? "no reload planned"
        return """
            <article class="card" id="w-\(id)" data-id="\(id)" data-family="\(widget.family.name)" \
            data-entry-date="\(widget.entry.map { String($0.date) } ?? "")" data-rank="\(widget.stackRank ?? 0)">\
            <header><span class="rank" title="place in its stack by relevance (score \(widget.relevance))">\
            #\(widget.stackRank.map(String.init) ?? "?")</span> <b>\(id)</b> <span class="meta">\(HTMLText.escape(widget.plugin)) · \(HTMLText.escape(widget.kind)) · \
            \(widget.family.name) · \(HTMLText.escape(widget.origin))</span>\(badges)</header>\
            <div class="frame">\(drawn)</div>\
            <div class="budget"><meter min="0" max="\(max(allowance, 1))" value="\(min(used, max(allowance, 1)))"></meter> \
            <span class="used">\(used)/\(allowance)</span> <span class="next">\(next)</span></div>\
            \(Self.ahead(widget, now: now))\(Self.behind(history, now: now))\
            <button class="remove" data-id="\(id)"\(widget.origin == "runtime" ? "" : " disabled title=\"from the configuration file\"")>Remove</button>\
            </article>
            """
    }

    /// The strip of the next 24 h: entries (ticks) and the planned reload (a diamond).
    static func ahead(_ widget: DashboardWidget, now: Double) -> String {
        var marks = ""
        var count = 0
        for date in widget.entryDates where date > now && date <= now + 86_400 {
            marks += "<i class=\"entry\" style=\"left:\(percent(date - now))%\"></i>"
            count += 1
        }
        if let next = widget.nextReload, next <= now + 86_400 {
            marks += "<i class=\"reload\" style=\"left:\(percent(max(0, next - now)))%\"></i>"
        }
        return
            "<div class=\"strip ahead\" title=\"next 24 h: \(count) entries\(widget.nextReload == nil ? "" : ", a reload")\"><span>next 24 h</span>\(marks)</div>"
    }

    /// The strip of the past 24 h: reloads counted (dark), free (light), failures (red).
    static func behind(_ history: [DashboardMark], now: Double) -> String {
        var marks = ""
        var counted = 0
        var free = 0
        var failed = 0
        for mark in history where mark.time > now - 86_400 {
            let left = 100 - percent(now - mark.time)
            marks += "<i class=\"\(mark.kind.rawValue)\" style=\"left:\(left)%\"></i>"
            switch mark.kind {
            case .counted: counted += 1
            case .free: free += 1
            case .failure: failed += 1
            }
        }
        return
            "<div class=\"strip behind\" data-counted=\"\(counted)\" data-free=\"\(free)\" data-failed=\"\(failed)\" title=\"past 24 h: \(counted) counted, \(free) free, \(failed) failed\"><span>past 24 h: \(counted) counted · \(free) free · \(failed) failed</span>\(marks)</div>"
    }

    static func percent(_ seconds: Double) -> Int { Int((min(max(seconds, 0), 86_400) / 864).rounded()) }

    /// The add form: plugin, kind, family, id; the parameter fields are
    /// built by the script from the kinds' descriptors (`#wh-plugins`).
    func addForm(_ plugins: [DashboardPlugin]) -> String {
        let options = plugins.filter { !$0.kinds.isEmpty }.map {
            "<option>\(HTMLText.escape($0.name))</option>"
        }.joined()
        return """
            <form id="wh-add" class="add"><h2>Add an instance</h2>
            <label>Plugin <select name="plugin">\(options)</select></label>
            <label>Kind <select name="kind"></select></label>
            <label>Family <select name="family"></select></label>
            <label>Id <input name="id" required pattern="[A-Za-z0-9._-]+"></label>
            <fieldset id="wh-parameters"><legend>Parameters</legend></fieldset>
            <button type="submit">Add</button> <output id="wh-add-result"></output></form>
            """
    }

    /// The plugins' kinds as JSON for the form (`<` escaped: it sits in a `<script>` element).
    static func pluginsJSON(_ plugins: [DashboardPlugin]) -> String {
        let value = JSONValue.array(
            plugins.map { plugin in
                .object([
                    ("name", .string(plugin.name)),
                    (
                        "kinds",
                        .array(
                            plugin.kinds.map { kind in
                                .object([
                                    ("id", .string(kind.id)),
                                    ("name", .string(kind.displayName)),
                                    ("families", .array(kind.families.map { .string($0.name) })),
                                    (
                                        "parameters",
                                        .array(
                                            kind.parameters.map { parameter in
                                                .object([
                                                    ("name", .string(parameter.name)),
                                                    ("type", .string(parameter.type?.description ?? "string")),
                                                    ("default", .string(parameter.defaultJSON ?? "")),
                                                    ("summary", .string(parameter.summary)),
                                                ])
                                            })
                                    ),
                                ])
                            })
                    ),
                ])
            })
        return value.compactText(limit: .max).replacingAll("<", with: "\\u003c")
    }

    static let style = """
        body{margin:0;font:14px/1.4 system-ui,sans-serif;background:#e9e9ee;color:#1c1c1e}
        .top{display:flex;gap:16px;align-items:baseline;padding:10px 18px;background:#1c1c1e;color:#fff}
        .top h1{font-size:17px;margin:0}.live{margin-left:auto;font-size:12px;color:#8e8e93}.live.on{color:#30d158}
        main{padding:4px 14px}.stack h2{font-size:13px;color:#6e6e73;margin:10px 0 6px}
        .stack-cards{display:flex;flex-wrap:wrap;gap:14px;align-items:flex-start}.rank{color:#6e6e73}
        .card{background:#f7f7f9;border-radius:14px;padding:10px;box-shadow:0 1px 3px #0002;min-width:200px}
        .card header{font-size:12px;margin-bottom:6px}.meta{color:#6e6e73}
        .badge{display:inline-block;margin-left:6px;padding:0 6px;border-radius:8px;font-size:11px;color:#fff}
        .badge.failure{background:#ff453a}.badge.quarantine{background:#8e0000}.badge.reloading{background:#0a84ff}
        .wh-widget{border:0;display:block;border-radius:22px;background:#fff}
        .wh-widget[data-family=accessoryCircular]{border-radius:50%}.wh-widget[data-family=accessoryInline]{border-radius:4px}
        .wh-deferred{background:#fff;border-radius:22px}
        .wh-empty{display:flex;align-items:center;justify-content:center;background:#fff;border-radius:22px;color:#8e8e93;font-size:12px}
        .budget{font-size:11px;margin-top:6px;display:flex;gap:6px;align-items:center}.budget meter{width:70px}
        .strip{position:relative;height:16px;margin-top:4px;background:#fff;border-radius:4px;font-size:9px;color:#8e8e93;overflow:hidden}
        .strip span{position:absolute;left:4px;top:2px}.strip i{position:absolute;top:8px;width:2px;height:8px}
        .strip i.entry{background:#0a84ff}.strip i.reload{background:#ff9f0a;width:6px;height:6px;top:9px;transform:rotate(45deg)}
        .strip i.counted{background:#1c1c1e}.strip i.free{background:#aeaeb2}.strip i.failure{background:#ff453a}
        .remove{margin-top:6px;font-size:11px}
        .add{margin:14px;padding:12px;background:#f7f7f9;border-radius:14px;max-width:520px}
        .add h2{font-size:14px;margin:0 0 8px}.add label{display:block;margin:4px 0}
        """

    /// The page's script: follows `/events` (a card replaced, added or
    /// removed when its instance changes), the add form and the remove
    /// buttons (with the token, which only the page's URL carries).
    static let script = """
        const token = new URLSearchParams(location.search).get('token') || '';
        const cards = document.getElementById('wh-cards');
        const live = document.getElementById('wh-live');
        // Widgets' frames are made when their card nears the viewport (see EntryRenderer.deferredFrame):
        // the same sandboxed frame, its attributes set before it is added, the document as data.
        const frames = new IntersectionObserver(seen => {
          for (const entry of seen) if (entry.isIntersecting) materialize(entry.target);
        }, { rootMargin: '600px' });
        function materialize(box) {
          frames.unobserve(box);
          const frame = document.createElement('iframe');
          frame.className = 'wh-widget';
          frame.setAttribute('sandbox', '');
          frame.setAttribute('referrerpolicy', 'no-referrer');
          frame.dataset.family = box.dataset.family;
          frame.width = box.dataset.width; frame.height = box.dataset.height;
          frame.title = box.dataset.title;
          frame.srcdoc = box.dataset.srcdoc;
          box.replaceWith(frame);
        }
        function observe(root) { for (const box of root.querySelectorAll('.wh-deferred')) frames.observe(box); }
        observe(document);
        function stack(family) {
          let section = document.getElementById('s-' + family);
          if (!section) {
            section = document.createElement('section');
            section.className = 'stack'; section.id = 's-' + family; section.dataset.family = family;
            const title = document.createElement('h2'); title.textContent = family + ' stack';
            const list = document.createElement('div'); list.className = 'stack-cards';
            section.append(title, list); cards.appendChild(section);
          }
          return section.querySelector('.stack-cards');
        }
        function renumber(list) {
          [...list.children].forEach((card, index) => {
            card.dataset.rank = index + 1;
            const rank = card.querySelector('.rank'); if (rank) rank.textContent = '#' + (index + 1);
          });
          if (!list.children.length) list.parentElement.remove();
        }
        function place(id, html) {
          const old = document.getElementById('w-' + id);
          const oldList = old && old.parentElement;
          if (!html) { if (old) { old.remove(); renumber(oldList); } return; }
          const holder = document.createElement('div');
          holder.innerHTML = html;
          const fresh = holder.firstElementChild;
          observe(fresh);
          const list = stack(fresh.dataset.family);
          if (old && oldList === list) old.replaceWith(fresh); else { if (old) { old.remove(); renumber(oldList); } list.appendChild(fresh); }
          const rank = parseInt(fresh.dataset.rank || '0', 10);
          if (rank > 0 && list.children[rank - 1] !== fresh) list.insertBefore(fresh, list.children[rank - 1] || null);
          renumber(list);
        }
        function count() { document.getElementById('wh-count').textContent = cards.querySelectorAll('article.card').length + ' instances'; }
        const source = new EventSource('/events?token=' + encodeURIComponent(token));
        source.addEventListener('open', () => { live.textContent = 'live'; live.classList.add('on'); });
        source.addEventListener('error', () => { live.textContent = 'reconnecting'; live.classList.remove('on'); });
        source.addEventListener('stack', message => {
          const change = JSON.parse(message.data);
          const section = document.getElementById('s-' + change.family);
          if (!section) return;
          const list = section.querySelector('.stack-cards');
          for (const id of [...change.order].reverse()) {
            const card = document.getElementById('w-' + id);
            if (card && card.parentElement === list) list.prepend(card);
          }
          renumber(list);
          window.whStackUpdates = (window.whStackUpdates || 0) + 1;
        });
        source.addEventListener('card', message => {
          const change = JSON.parse(message.data);
          place(change.id, change.html);
          count();
          window.whUpdates = (window.whUpdates || 0) + 1;
        });
        async function send(method, path, body) {
          const answer = await fetch(path, { method, headers: { 'X-Widgethost-Token': token, 'Content-Type': 'application/json' },
                                              body: body === undefined ? undefined : JSON.stringify(body) });
          return { ok: answer.ok, text: await answer.text() };
        }
        cards.addEventListener('click', async event => {
          const button = event.target.closest('button.remove');
          if (!button) return;
          const answer = await send('DELETE', '/api/instances/' + encodeURIComponent(button.dataset.id));
          if (!answer.ok) alert(answer.text);
        });
        const plugins = JSON.parse(document.getElementById('wh-plugins').textContent);
        const form = document.getElementById('wh-add');
        const pick = name => form.elements[name];
        function fill(select, values) {
          select.replaceChildren(...values.map(([value, label]) => { const o = document.createElement('option'); o.value = value; o.textContent = label; return o; }));
        }
        function plugin() { return plugins.find(p => p.name === pick('plugin').value); }
        function kind() { const p = plugin(); return p && p.kinds.find(k => k.id === pick('kind').value); }
        function kindChanged() {
          const k = kind();
          fill(pick('family'), k ? k.families.map(f => [f, f]) : []);
          const box = document.getElementById('wh-parameters');
          box.replaceChildren(box.firstElementChild);
          for (const parameter of (k ? k.parameters : [])) {
            const label = document.createElement('label');
            label.textContent = parameter.name + ' (' + parameter.type + ') ';
            label.title = parameter.summary;
            const input = document.createElement('input');
            input.dataset.parameter = parameter.name; input.dataset.type = parameter.type;
            input.placeholder = parameter.default;
            label.appendChild(input); box.appendChild(label);
          }
        }
        function pluginChanged() { const p = plugin(); fill(pick('kind'), p ? p.kinds.map(k => [k.id, k.name || k.id]) : []); kindChanged(); }
        pick('plugin').addEventListener('change', pluginChanged);
        pick('kind').addEventListener('change', kindChanged);
        pluginChanged();
        form.addEventListener('submit', async event => {
          event.preventDefault();
          const configuration = {};
          for (const input of form.querySelectorAll('[data-parameter]')) {
            if (input.value === '') continue;
            configuration[input.dataset.parameter] = input.dataset.type === 'string' ? input.value : JSON.parse(input.value);
          }
          const answer = await send('POST', '/api/instances', { id: pick('id').value, plugin: pick('plugin').value,
            kind: pick('kind').value, family: pick('family').value, configuration });
          document.getElementById('wh-add-result').textContent = answer.text;
        });
        """
}

/// One mark of the strip of the past 24 h.
public struct DashboardMark: Sendable, Hashable {
    public enum Kind: String, Sendable {
        case counted, free, failure
    }
    public var time: Double
    public var kind: Kind

    public init(time: Double, kind: Kind) {
        self.time = time
        self.kind = kind
    }
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
