internal import WidgetHostABI

/// The plugin's `warm_up` (`wh_plugin_descriptor.warm_up`, SDK 1.1).
///
/// A fork server calls it once, after loading and before it forks the first
/// call child; every call then starts from the state it leaves. For each kind
/// registered in this process it makes the placeholder call the host would
/// make — through the same C context, configuration parsing, provider and
/// JSON encoding as a real call, with the result dropped — and then calls the
/// provider's ``TimelineProvider/warmUp(in:)``. What this builds lazily (type
/// metadata and conformance caches of the entry types, Foundation's encoder,
/// the provider's own formatters) is then shared by every call child instead
/// of being built again in each (measured: docs/performance.md).
///
/// Placeholders are synchronous by contract, so this starts no thread; a
/// provider whose `warmUp(in:)` does is caught by the host, which then runs
/// the plugin without the warm-up.
enum WarmUp {
    static func run(_ pointer: UnsafePointer<wh_warm_up_context>?) {
        var raw = wh_warm_up_context()
        if let pointer {
            // Zero-extend a smaller struct; never read past the host's.
            let size = Int(pointer.pointee.struct_size)
            withUnsafeMutableBytes(of: &raw) { bytes in
                bytes.copyMemory(
                    from: UnsafeRawBufferPointer(
                        start: pointer, count: min(size, MemoryLayout<wh_warm_up_context>.size)))
            }
        }
        let kinds = registry.withLock { $0.kinds }
        let now = raw.now != 0 ? raw.now : Date().timeIntervalSince1970
        let locale = raw.locale.map { String(cString: $0) } ?? "en-US"
        let dataDirectory = raw.data_directory.map { String(cString: $0) } ?? "."
        for (index, kind) in kinds.enumerated() {
            let configuration = defaultConfiguration(kind)
            var context = wh_context()
            context.struct_size = UInt32(MemoryLayout<wh_context>.size)
            context.abi_version = raw.abi_version != 0 ? raw.abi_version : WH_ABI_VERSION
            context.entry_point = WH_ENTRY_PLACEHOLDER.rawValue
            context.family = (kind.families.first ?? .systemSmall).abiBit
            context.is_preview = 1
            context.now = now
            context.timeout = 5
            context.kind_context = UnsafeMutableRawPointer(bitPattern: index + 1)
            kind.id.withCString { kindID in
                configuration.withCString { configurationJSON in
                    locale.withCString { localeTag in
                        dataDirectory.withCString { directory in
                            context.kind = kindID
                            context.configuration_json = configurationJSON
                            context.locale = localeTag
                            context.data_directory = directory
                            // The result is dropped; a sink completes once, so one per kind.
                            let sink = CompletionSink(complete: { _, _ in }, context: nil)
                            guard let (kind, providerContext) = EntryPoints.prepare(&context, sink: sink) else {
                                return
                            }
                            kind.provider.placeholder(in: providerContext, sink: sink)
                            kind.provider.warmUp(in: providerContext)
                        }
                    }
                }
            }
        }
    }

    /// The configuration a call without overrides gets: each parameter's
    /// default (parameter names are identifiers: no escaping needed).
    static func defaultConfiguration(_ kind: WidgetKind) -> String {
        let members = kind.parameters.compactMap { parameter in
            parameter.defaultJSON.map { "\"\(parameter.name)\":\($0)" }
        }
        return "{" + members.joined(separator: ",") + "}"
    }
}
