import Synchronization
internal import WidgetHostABI

/// A Mustache template that draws a kind's entries as HTML in the host's
/// dashboard and in `widgethost preview` (the templates extension,
/// `SDK/include/widgethost/ext/templates.h`).
///
/// The template sees the entry's JSON members at the top level, plus
/// `{{_date}}`, `{{_family}}`, `{{_width}}` and `{{_height}}`. Values are
/// HTML-escaped, and the host draws each widget in a sandboxed frame with
/// no script and no network: a template is markup and CSS only.
public struct WidgetTemplate: Sendable, Hashable {
    /// The Mustache source.
    public var source: String
    /// The families it draws; empty means every family of the kind.
    public var families: [WidgetFamily]

    /// Creates a template for `families` (every family when empty).
    public init(_ source: String, families: [WidgetFamily] = []) {
        self.source = source
        self.families = families
    }
}

extension WidgetKind {
    /// The kind with one more template: for `families`, or for every family
    /// when empty. A template naming a family wins over the one for all.
    ///
    /// ```swift
    /// WidgetKind("com.example.countdown", displayName: "Countdown", provider: CountdownProvider())
    ///     .template("<div class=\"big\">{{days}}</div><p>{{title}}</p>")
    ///     .template("<span>{{days}} days to {{title}}</span>", families: [.accessoryInline])
    /// ```
    ///
    /// Every Swift plugin exports them through the `widgethost_provider_templates`
    /// symbol WidgetHostKit defines (``widgethostProviderTemplates()``).
    public func template(_ source: String, families: [WidgetFamily] = []) -> WidgetKind {
        var kind = self
        kind.templates.append(WidgetTemplate(source, families: families))
        return kind
    }
}

/// The templates extension's symbol for every plugin built with
/// WidgetHostKit: the templates of the kinds the plugin's
/// `WidgetHostExport.descriptor` registered (none: `NULL`, no templates).
/// The runner calls it once, after `widgethost_provider_entry`. Built once;
/// the memory lives as long as the process.
@_cdecl("widgethost_provider_templates")
public func widgethostProviderTemplates() -> UnsafeRawPointer? {
    templateList.withLock { cached -> UInt in
        if cached != 0 { return cached }
        let records = registry.withLock { state in
            state.kinds.flatMap { kind in
                kind.templates.map { (kind.id, $0.families.reduce(UInt32(0)) { $0 | $1.abiBit }, $0.source) }
            }
        }
        guard !records.isEmpty else { return 0 }
        let array = UnsafeMutablePointer<wh_template>.allocate(capacity: records.count)
        for (index, record) in records.enumerated() {
            (array + index).initialize(
                to: wh_template(
                    struct_size: UInt32(MemoryLayout<wh_template>.size), families: record.1,
                    kind_id: templateCString(record.0), source: templateCString(record.2)))
        }
        let list = UnsafeMutablePointer<wh_template_list>.allocate(capacity: 1)
        list.initialize(
            to: wh_template_list(
                struct_size: UInt32(MemoryLayout<wh_template_list>.size),
                template_size: UInt32(MemoryLayout<wh_template>.stride), template_count: UInt32(records.count),
                templates: UnsafePointer(array)))
        cached = UInt(bitPattern: list)
        return cached
    }.asTemplatePointer
}

private let templateList = Mutex<UInt>(0)

private func templateCString(_ string: String) -> UnsafePointer<CChar> {
    let bytes = Array(string.utf8CString)
    let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
    copy.initialize(from: bytes, count: bytes.count)
    return UnsafePointer(copy)
}

extension UInt {
    fileprivate var asTemplatePointer: UnsafeRawPointer? { UnsafeRawPointer(bitPattern: self) }
}
