/// A Mustache template a plugin ships for one kind (and some or all of its
/// families), through the templates extension
/// (`SDK/include/widgethost/ext/templates.h`).
///
/// ```swift
/// let template = plugin.template(kind: "com.widgethost.countdown", family: .systemSmall)
/// template?.source   // "<div class=\"countdown\">{{days}} days</div>"
/// ```
public struct TemplateDescription: Sendable, Hashable, Codable {
    /// The kind the template draws.
    public var kind: String
    /// The `wh_family` bits it is for; 0 means every family of the kind.
    public var familyBits: UInt32
    /// The Mustache source (UTF-8, checked by the runner).
    public var source: String

    public init(kind: String, familyBits: UInt32, source: String) {
        self.kind = kind
        self.familyBits = familyBits
        self.source = source
    }

    /// Whether the template draws `family` (a template for every family
    /// matches all of them).
    public func draws(_ family: WidgetFamily) -> Bool {
        familyBits == 0 || familyBits & family.rawValue != 0
    }
}

extension PluginDescription {
    /// The template that draws `kind` in `family`: the one naming the family
    /// wins over the kind's template for every family; nil when the plugin
    /// ships none (the host then draws its generic card).
    public func template(kind: String, family: WidgetFamily) -> TemplateDescription? {
        let candidates = templates.filter { $0.kind == kind && $0.draws(family) }
        return candidates.first { $0.familyBits != 0 } ?? candidates.first
    }
}
