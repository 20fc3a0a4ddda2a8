import WidgetHostModel

/// The tagged sections that may follow LOADED's fixed fields: each is a u32
/// tag and a length-prefixed body. The runner appends one per ABI
/// extension a plugin uses (`Sources/widgethost-runner/templates.c`); a
/// plugin that uses none sends none. A tag this host does not know is
/// skipped, so a newer runner's section does not break an older host.
enum LoadedSections {
    /// "WHTP" read as a little-endian integer: the templates extension.
    static let templatesTag: UInt32 = 0x5054_4857

    /// Templates the runner sent at most (`WH_MAX_TEMPLATES`).
    static let maxTemplates: UInt32 = 1024

    /// Decodes every section left in `reader`; the templates section
    /// becomes ``TemplateDescription`` values.
    static func decode(_ reader: inout WireReader, kinds: [KindDescription])
        -> Result<[TemplateDescription], PluginFailure.Reason>
    {
        var templates: [TemplateDescription] = []
        while reader.remaining > 0 {
            let tag = reader.u32()
            let body = reader.lengthPrefixedBytes()
            if reader.malformed {
                return .failure(.protocolViolation("LOADED has a truncated section after its fields"))
            }
            guard tag == templatesTag else { continue }
            var section = WireReader(body)
            let count = section.u32()
            guard count <= maxTemplates else {
                return .failure(
                    .protocolViolation("the templates section counts \(count) templates (at most \(maxTemplates))"))
            }
            for _ in 0..<count {
                let kindIndex = section.u32()
                let familyBits = section.u32()
                let source = section.string()
                guard !section.malformed, Int(kindIndex) < kinds.count else {
                    return .failure(.protocolViolation("the templates section is malformed"))
                }
                templates.append(
                    TemplateDescription(kind: kinds[Int(kindIndex)].id, familyBits: familyBits, source: source))
            }
        }
        return .success(templates)
    }
}
