import Mustache
import Synchronization
import WidgetHostModel

/// One widget drawn: the HTML document of its frame and the `<iframe>` that
/// shows it.
public struct RenderedWidget: Sendable, Hashable {
    /// The widget's own document (what the frame's `srcdoc` holds).
    public var document: String
    /// The family's box the document is drawn in.
    public var box: FamilyBox
    /// The frame's accessible name.
    public var label: String
    /// The sandboxed `<iframe>` element, sized to the family's box, with the
    /// document in its `srcdoc` (built when asked: a page that keeps a
    /// document for later does not pay for it).
    public var frame: String {
        "<iframe class=\"wh-widget\" sandbox=\"\" referrerpolicy=\"no-referrer\" "
            + "data-family=\"\(box.family.name)\" width=\"\(box.width)\" height=\"\(box.height)\" "
            + "title=\"\(HTMLText.escape(label))\" srcdoc=\"\(HTMLText.escape(document))\"></iframe>"
    }
    /// The frame deferred: a box of the family's size that carries the
    /// frame's document and name, which the dashboard's script turns into
    /// the same sandboxed `<iframe>` when it nears the viewport. A browser
    /// makes each frame's document as it parses the page (1,000 frames:
    /// 15 s before the page answers a click), so a page of many widgets
    /// makes only those the reader can see.
    public var deferredFrame: String {
        "<div class=\"wh-deferred\" data-family=\"\(box.family.name)\" data-width=\"\(box.width)\" "
            + "data-height=\"\(box.height)\" style=\"width:\(box.width)px;height:\(box.height)px\" "
            + "data-title=\"\(HTMLText.escape(label))\" data-srcdoc=\"\(HTMLText.escape(document))\"></div>"
    }
    /// Why the plugin's template was not used (it did not parse), or nil.
    public var templateProblem: String?
    /// Whether the plugin's template drew it (false: the generic card).
    public var usedTemplate: Bool
}

/// Turns a timeline entry into HTML: through the kind's Mustache template
/// (``TemplateDescription``) or, without one, a generic card of the entry's
/// fields. The one renderer of the web side: `preview` and the dashboard
/// both draw with it.
///
/// Plugin content is data, never markup:
/// - every `{{value}}` is HTML-escaped (swift-mustache's default for HTML);
/// - whatever the template itself writes (markup, `{{{raw}}}`, style) lands
///   in a frame with `sandbox=""` (no script, no forms, no navigation, no
///   popups, an opaque origin) and its own Content-Security-Policy
///   (`default-src 'none'`; inline style and `data:` images only), so
///   `<script>`, `javascript:` URLs, `on*=` handlers and CSS tricks stay
///   inert and nothing is fetched. docs/preview.md says why a frame rather
///   than a sanitizer.
///
/// ```swift
/// let renderer = EntryRenderer()
/// let widget = renderer.render(entry: entry, family: .systemSmall,
///                              template: plugin.template(kind: kind.id, family: .systemSmall))
/// html += widget.frame
/// ```
public final class EntryRenderer: Sendable {
    /// The policy inside every widget frame (it also inherits the page's).
    public static let framePolicy =
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; base-uri 'none'; form-action 'none'"

    private let compiled = Mutex<[String: CompiledTemplate]>([:])
    private let genericCard: MustacheTemplate

    enum CompiledTemplate {
        case template(MustacheTemplate)
        case problem(String)
    }

    public init() {
        // A constant template: it parses, or the build of this file is wrong.
        do {
            genericCard = try MustacheTemplate(string: Self.genericCardSource)
        } catch {
            preconditionFailure("the generic card's template does not parse: \(error)")
        }
    }

    /// Draws `entry` in `family`'s box with `template` (nil: the generic card).
    /// `label` names the frame for assistive technology.
    public func render(
        entry: EntryRecord, family: WidgetFamily, template: TemplateDescription?, label: String = "widget"
    ) -> RenderedWidget {
        let box = FamilyBox(family)
        let content = Self.context(entry: entry, box: box)
        var body: String
        var problem: String?
        var usedTemplate = false
        switch template.map({ compile($0.source) }) {
        case .template(let mustache)?:
            body = mustache.render(content)
            usedTemplate = true
        case .problem(let message)?:
            problem = message
            body = genericCard.render(content)
        case nil:
            body = genericCard.render(content)
        }
        if let problem {
            body = "<p class=\"wh-problem\">template: \(HTMLText.escape(problem))</p>" + body
        }
        let document = Self.document(body: body, box: box)
        return RenderedWidget(
            document: document, box: box, label: label, templateProblem: problem, usedTemplate: usedTemplate)
    }

    /// Parses `source` once and keeps it (or its parse error).
    func compile(_ source: String) -> CompiledTemplate {
        if let known = compiled.withLock({ $0[source] }) { return known }
        let result: CompiledTemplate
        do {
            result = .template(try MustacheTemplate(string: source))
        } catch {
            result = .problem("the template does not parse: \(error)")
        }
        compiled.withLock { cache in
            if cache.count > 4096 { cache.removeAll() }
            cache[source] = result
        }
        return result
    }

    /// What a template sees: the entry's members, plus `_date`, `_family`,
    /// `_width`, `_height` and, for the generic card, `_fields`.
    static func context(entry: EntryRecord, box: FamilyBox) -> [String: Any] {
        let value = (try? JSONValue.parse(entry.contentJSON)) ?? .string(entry.contentJSON)
        var context: [String: Any] = [:]
        var fields: [[String: Any]] = []
        if case .object(let members) = value {
            for (name, member) in members {
                context[name] = mustacheValue(member)
                let shown: String
                if case .string(let text) = member { shown = text } else { shown = member.compactText(limit: 200) }
                fields.append(["name": name, "value": shown])
            }
        } else {
            context["value"] = mustacheValue(value)
            fields.append(["name": "value", "value": value.compactText(limit: 200)])
        }
        context["_date"] = Timestamp.iso8601(entry.date)
        context["_family"] = box.family.name
        context["_width"] = box.width
        context["_height"] = box.height
        context["_fields"] = fields
        return context
    }

    /// JSON as the values swift-mustache walks: objects as dictionaries,
    /// arrays as arrays, integral numbers as integers.
    static func mustacheValue(_ value: JSONValue) -> Any {
        switch value {
        case .null: return Optional<String>.none as Any
        case .bool(let flag): return flag
        case .number(let number):
            if number == number.rounded(), abs(number) < 1e15 { return Int(number) }
            return number
        case .string(let text): return text
        case .array(let items): return items.map(mustacheValue)
        case .object(let members):
            var dictionary: [String: Any] = [:]
            for (name, member) in members { dictionary[name] = mustacheValue(member) }
            return dictionary
        }
    }

    /// The frame's document: its policy, the base style, the body.
    static func document(body: String, box: FamilyBox) -> String {
        """
        <!doctype html><html><head><meta charset="utf-8">\
        <meta http-equiv="Content-Security-Policy" content="\(framePolicy)">\
        <style>\(baseStyle(box))</style></head>\
        <body class="wh-\(box.family.name)">\(body)</body></html>
        """
    }

    static func baseStyle(_ box: FamilyBox) -> String {
        "html,body{margin:0;padding:0;width:\(box.width)px;height:\(box.height)px;overflow:hidden}"
            + "body{font:13px/1.3 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1c1c1e;"
            + "background:#fff;border-radius:\(box.cornerRadius)px;box-sizing:border-box}"
            + ".wh-card{padding:10px 12px;height:100%;box-sizing:border-box;overflow:hidden}"
            + ".wh-card dl{margin:0}.wh-card dt{font-size:9px;text-transform:uppercase;color:#8e8e93;letter-spacing:.04em}"
            + ".wh-card dd{margin:0 0 4px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}"
            + ".wh-date{font-size:9px;color:#8e8e93}"
            + ".wh-accessoryInline .wh-card{padding:4px 6px;white-space:nowrap}"
            + ".wh-accessoryInline .wh-card dl,.wh-accessoryInline .wh-card dt,.wh-accessoryInline .wh-date{display:inline}"
            + ".wh-accessoryInline .wh-card dd{display:inline;margin:0 6px 0 2px}"
            + ".wh-accessoryCircular .wh-card{padding:14px 8px;text-align:center;font-size:10px}"
            + ".wh-problem{margin:0;padding:2px 6px;font-size:9px;background:#ffd60a;color:#000}"
    }

    /// The card drawn for a kind with no template: the entry's fields, readably.
    static let genericCardSource =
        "<div class=\"wh-card\"><div class=\"wh-date\">{{_date}}</div><dl>"
        + "{{#_fields}}<dt>{{name}}</dt><dd>{{value}}</dd>{{/_fields}}</dl></div>"
}
