import Synchronization
internal import WidgetHostABI
internal import WidgetHostJSON

/// Exports a plugin's kinds through the widgethost C ABI.
///
/// A plugin written in Swift exports the one C symbol the host looks for,
/// `widgethost_provider_entry`, with this function and the kinds it has. Write
/// it once, in one file of the plugin's dynamic library target:
///
/// ```swift
/// import WidgetHostKit
///
/// @_cdecl("widgethost_provider_entry")
/// public func widgethostProviderEntry(_ offer: UnsafeRawPointer?) -> UnsafeRawPointer? {
///     WidgetHostExport.descriptor(
///         offer: offer,
///         plugin: PluginInfo(id: "com.example.game", name: "Game Widgets", version: "1.0.0"),
///         kinds: [
///             WidgetKind(
///                 "com.example.character-detail", displayName: "Character",
///                 description: "Your hero's health.", families: [.systemSmall, .systemMedium],
///                 parameters: [.string("character", default: "Power Panda")],
///                 provider: CharacterDetailProvider()),
///         ])
/// }
/// ```
///
/// and build the target as a `.dynamic` library product. See
/// `docs/swift-sdk.md`.
public enum WidgetHostExport {
    /// Builds the plugin's `wh_plugin_descriptor` for the host's offer and
    /// returns a pointer to it.
    ///
    /// - The descriptor, its kinds, parameters and strings are built once, on
    ///   the first call, in memory that lives as long as the process; later
    ///   calls return the same pointer (and do not evaluate `kinds` again).
    /// - Version negotiation: if the offer's range `abi_min...abi_max`
    ///   contains the ABI version this SDK speaks (`WH_ABI_VERSION`, 1), the
    ///   descriptor answers it; otherwise it answers `abi_version` 0 and a
    ///   `refusal` naming both ranges.
    /// - Kinds that break the ABI's rules (no kinds, an empty or duplicate
    ///   id, no family, a bad parameter name) make the descriptor refuse the
    ///   host with a message naming the problem, since the function must not
    ///   return `NULL`.
    /// - Each kind's entry points call the kind's provider, encode its entries
    ///   as JSON and complete the call, from whichever thread the provider
    ///   completes on.
    ///
    /// The function does no I/O and starts no threads, as the ABI requires.
    ///
    /// - Parameters:
    ///   - offer: The `const wh_host_offer *` the host passed to
    ///     `widgethost_provider_entry`.
    ///   - plugin: The plugin's identity.
    ///   - kinds: The kinds the plugin exports, in gallery order.
    /// - Returns: A `const wh_plugin_descriptor *`, never `NULL`.
    public static func descriptor(
        offer: UnsafeRawPointer?, plugin: PluginInfo, kinds: @autoclosure () -> [WidgetKind]
    ) -> UnsafeRawPointer {
        let range = negotiationRange(offer)
        return registry.withLock { state -> UInt in
            let record: PluginRecord
            if let existing = state.plugins[plugin.id] {
                record = existing
            } else {
                let kinds = kinds()
                let firstIndex = state.kinds.count
                state.kinds.append(contentsOf: kinds)
                record = PluginRecord(plugin: plugin, kinds: kinds, firstIndex: firstIndex)
                state.plugins[plugin.id] = record
            }
            return record.descriptor(for: range)
        }.asPointer
    }

    /// Builds the descriptor of a ``WidgetBundle``'s widgets (see
    /// ``descriptor(offer:plugin:kinds:)``).
    ///
    /// ```swift
    /// @_cdecl("widgethost_provider_entry")
    /// public func widgethostProviderEntry(_ offer: UnsafeRawPointer?) -> UnsafeRawPointer? {
    ///     WidgetHostExport.descriptor(offer: offer, plugin: info, bundle: GameWidgets())
    /// }
    /// ```
    public static func descriptor<Bundle: WidgetBundle>(
        offer: UnsafeRawPointer?, plugin: PluginInfo, bundle: @autoclosure () -> Bundle
    ) -> UnsafeRawPointer {
        descriptor(offer: offer, plugin: plugin, kinds: bundle().kinds)
    }

    /// The warning written to stderr for each call whose entries of `type`
    /// are exported by reflection, because the type is not `Encodable`;
    /// `widgethost load` shows it with the call.
    public static func reflectionWarning(for type: Any.Type) -> String {
        ReflectionEncoder.warning(for: type)
    }

    /// The ABI version this SDK speaks.
    public static let abiVersion: UInt32 = WH_ABI_VERSION

    /// The SDK version string put in every descriptor (`WH_SDK_VERSION`).
    public static let sdkVersion: String = WH_SDK_VERSION
}

// MARK: - Registry

/// The descriptors built so far and the kinds they point to. Entry points
/// find their kind by `kind_context`, which holds the kind's index in
/// `kinds` plus one.
struct RegistryState: ~Copyable {
    var kinds: [WidgetKind] = []
    var plugins: [String: PluginRecord] = [:]
}

/// Guarded by a mutex: the host calls the entry function once, from one
/// thread, but the entry points read `kinds` from whichever thread calls
/// them, and tests build several plugins' descriptors in one process.
let registry = Mutex(RegistryState())

final class PluginRecord: @unchecked Sendable {
    // @unchecked: only used while `registry` is locked; the addresses it keeps
    // point to memory that is written once and then only read.
    let plugin: PluginInfo
    let kinds: [WidgetKind]
    let firstIndex: Int
    let problem: String?
    private var accepted: UInt = 0
    private var refusals: [String: UInt] = [:]
    private var kindArray: UInt = 0

    init(plugin: PluginInfo, kinds: [WidgetKind], firstIndex: Int) {
        self.plugin = plugin
        self.kinds = kinds
        self.firstIndex = firstIndex
        self.problem = validate(plugin: plugin, kinds: kinds)
    }

    func descriptor(for range: (min: UInt32, max: UInt32)?) -> UInt {
        let reason: String?
        if let problem {
            reason = problem
        } else if let range, range.min <= WH_ABI_VERSION, WH_ABI_VERSION <= range.max {
            reason = nil
        } else {
            let offered = range.map { "\($0.min)..\($0.max)" } ?? "nothing (no offer)"
            reason =
                "\(plugin.id) speaks widgethost ABI \(WH_ABI_VERSION_MIN)..\(WH_ABI_VERSION) "
                + "(WidgetHostKit \(WH_SDK_VERSION)); the host offers \(offered)"
        }
        if let reason {
            if let cached = refusals[reason] { return cached }
            let address = build(refusal: reason)
            refusals[reason] = address
            return address
        }
        if accepted == 0 { accepted = build(refusal: nil) }
        return accepted
    }

    private func build(refusal: String?) -> UInt {
        if kindArray == 0 { kindArray = buildKinds() }
        let descriptor = UnsafeMutablePointer<wh_plugin_descriptor>.allocate(capacity: 1)
        descriptor.initialize(to: wh_plugin_descriptor())
        descriptor.pointee.struct_size = UInt32(MemoryLayout<wh_plugin_descriptor>.size)
        descriptor.pointee.magic = WH_PLUGIN_MAGIC
        descriptor.pointee.abi_version = refusal == nil ? WH_ABI_VERSION : 0
        descriptor.pointee.kind_size = UInt32(MemoryLayout<wh_kind>.stride)
        descriptor.pointee.entry_size = UInt32(MemoryLayout<wh_entry>.stride)
        descriptor.pointee.result_size = UInt32(MemoryLayout<wh_result>.size)
        descriptor.pointee.id = permanentCString(plugin.id)
        descriptor.pointee.name = permanentCString(plugin.name)
        descriptor.pointee.version = permanentCString(plugin.version)
        descriptor.pointee.vendor = plugin.vendor.map(permanentCString)
        descriptor.pointee.sdk_version = permanentCString(WH_SDK_VERSION)
        descriptor.pointee.refusal = refusal.map(permanentCString)
        descriptor.pointee.kind_count = UInt32(kinds.count)
        descriptor.pointee.kinds = UnsafePointer(UnsafeMutablePointer<wh_kind>(bitPattern: kindArray))
        descriptor.pointee.warm_up = { context in WarmUp.run(context) }
        return UInt(bitPattern: descriptor)
    }

    private func buildKinds() -> UInt {
        let array = UnsafeMutablePointer<wh_kind>.allocate(capacity: max(kinds.count, 1))
        for (offset, kind) in kinds.enumerated() {
            let parameters = UnsafeMutablePointer<wh_parameter>.allocate(capacity: max(kind.parameters.count, 1))
            for (index, parameter) in kind.parameters.enumerated() {
                var choices: UnsafeMutablePointer<UnsafePointer<CChar>?>?
                var choiceTitles: UnsafeMutablePointer<UnsafePointer<CChar>?>?
                if !parameter.choices.isEmpty {
                    choices = .allocate(capacity: parameter.choices.count)
                    choiceTitles = .allocate(capacity: parameter.choices.count)
                    for (offset, choice) in parameter.choices.enumerated() {
                        (choices! + offset).initialize(to: permanentCString(choice.value))
                        (choiceTitles! + offset).initialize(to: choice.title.map(permanentCString))
                    }
                }
                (parameters + index).initialize(
                    to: wh_parameter(
                        struct_size: UInt32(MemoryLayout<wh_parameter>.size),
                        type: parameter.type.rawValue,
                        name: permanentCString(parameter.name),
                        default_json: parameter.defaultJSON.map(permanentCString),
                        description: parameter.description.map(permanentCString),
                        title: parameter.title.map(permanentCString),
                        choice_count: UInt32(parameter.choices.count),
                        flags: parameter.isOptional ? WH_PARAMETER_OPTIONAL.rawValue : 0,
                        choices: UnsafePointer(choices),
                        choice_titles: UnsafePointer(choiceTitles)))
            }
            var entry = wh_kind()
            entry.struct_size = UInt32(MemoryLayout<wh_kind>.size)
            entry.flags =
                (kind.needsNetwork ? WH_KIND_NEEDS_NETWORK.rawValue : 0)
                | (kind.isDeterministic ? WH_KIND_DETERMINISTIC.rawValue : 0)
                | (kind.supportsPush ? WH_KIND_PUSH.rawValue : 0)
            entry.id = permanentCString(kind.id)
            entry.display_name = permanentCString(kind.displayName)
            entry.description = kind.description.map(permanentCString)
            entry.families = kind.families.reduce(0) { $0 | $1.abiBit }
            entry.parameter_count = UInt32(kind.parameters.count)
            entry.parameter_size = UInt32(MemoryLayout<wh_parameter>.stride)
            entry.parameters = kind.parameters.isEmpty ? nil : UnsafePointer(parameters)
            entry.placeholder = { context, complete, completionContext in
                EntryPoints.call(.placeholder, context, complete, completionContext)
            }
            entry.snapshot = { context, complete, completionContext in
                EntryPoints.call(.snapshot, context, complete, completionContext)
            }
            entry.timeline = { context, complete, completionContext in
                EntryPoints.call(.timeline, context, complete, completionContext)
            }
            entry.context = UnsafeMutableRawPointer(bitPattern: firstIndex + offset + 1)
            (array + offset).initialize(to: entry)
        }
        return UInt(bitPattern: array)
    }
}

/// Checks the rules of `wh_kind` and `wh_parameter`; returns the first
/// problem, phrased for the plugin's author.
func validate(plugin: PluginInfo, kinds: [WidgetKind]) -> String? {
    if plugin.id.isEmpty { return "the plugin has an empty id: set PluginInfo.id, e.g. \"com.example.weather\"" }
    if kinds.isEmpty { return "\(plugin.id) exports no kinds: pass at least one WidgetKind" }
    var seen: Set<String> = []
    for kind in kinds {
        if kind.id.isEmpty { return "\(plugin.id) has a kind with an empty id" }
        if !seen.insert(kind.id).inserted { return "\(plugin.id) exports kind \"\(kind.id)\" twice" }
        if kind.families.isEmpty { return "kind \"\(kind.id)\" lists no families: list at least one" }
        var names: Set<String> = []
        for parameter in kind.parameters {
            if !isIdentifier(parameter.name) {
                return "kind \"\(kind.id)\": parameter name \"\(parameter.name)\" is not [A-Za-z_][A-Za-z0-9_]*"
            }
            if !names.insert(parameter.name).inserted {
                return "kind \"\(kind.id)\": parameter \"\(parameter.name)\" is declared twice"
            }
            if !parameter.choices.isEmpty && parameter.type != .string {
                return "kind \"\(kind.id)\": parameter \"\(parameter.name)\" has choices but is not a string parameter"
            }
        }
    }
    return nil
}

private func isIdentifier(_ name: String) -> Bool {
    guard let first = name.unicodeScalars.first else { return false }
    func letter(_ c: Unicode.Scalar) -> Bool { (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c == "_" }
    return letter(first) && name.unicodeScalars.allSatisfy { letter($0) || ($0 >= "0" && $0 <= "9") }
}

/// Reads the offer's range, zero-extending a smaller struct.
private func negotiationRange(_ offer: UnsafeRawPointer?) -> (min: UInt32, max: UInt32)? {
    guard let offer else { return nil }
    let size = Int(offer.loadUnaligned(as: UInt32.self))
    var copy = wh_host_offer()
    withUnsafeMutableBytes(of: &copy) { bytes in
        bytes.copyMemory(
            from: UnsafeRawBufferPointer(start: offer, count: min(size, MemoryLayout<wh_host_offer>.size)))
    }
    return (copy.abi_min, copy.abi_max)
}

/// Copies a string into memory that is never freed (descriptor strings live
/// as long as the plugin is loaded).
private func permanentCString(_ string: String) -> UnsafePointer<CChar> {
    let utf8 = string.utf8CString
    let buffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: utf8.count)
    _ = buffer.initialize(from: utf8)
    return UnsafePointer(buffer.baseAddress!)
}

extension UInt {
    fileprivate var asPointer: UnsafeRawPointer { UnsafeRawPointer(bitPattern: self)! }
}

// MARK: - Entry points

/// Type-erased provider, so kinds of different entry types share one array.
protocol AnyProviderBox: Sendable {
    func placeholder(in context: TimelineProviderContext, sink: CompletionSink)
    func snapshot(in context: TimelineProviderContext, sink: CompletionSink)
    func timeline(in context: TimelineProviderContext, sink: CompletionSink)
    func warmUp(in context: TimelineProviderContext)
}

/// `@unchecked Sendable`: providers need not be `Sendable` (WidgetKit's are
/// not); the host calls a plugin process one entry point at a time.
struct ProviderBox<Provider: TimelineProvider>: AnyProviderBox, @unchecked Sendable {
    let provider: Provider

    func placeholder(in context: TimelineProviderContext, sink: CompletionSink) {
        sink.succeed(entries: [provider.placeholder(in: context)], policy: nil)
    }

    func snapshot(in context: TimelineProviderContext, sink: CompletionSink) {
        provider.getSnapshot(in: context) { entry in sink.succeed(entries: [entry], policy: nil) }
    }

    func timeline(in context: TimelineProviderContext, sink: CompletionSink) {
        provider.getTimeline(in: context) { timeline in
            sink.succeed(entries: timeline.entries, policy: timeline.policy)
        }
    }

    func warmUp(in context: TimelineProviderContext) {
        provider.warmUp(in: context)
    }
}

struct IntentProviderBox<Provider: IntentTimelineProvider>: AnyProviderBox, @unchecked Sendable {
    let provider: Provider

    func placeholder(in context: TimelineProviderContext, sink: CompletionSink) {
        sink.succeed(entries: [provider.placeholder(in: context)], policy: nil)
    }

    func snapshot(in context: TimelineProviderContext, sink: CompletionSink) {
        let intent = configuredIntent({ Provider.Intent() }, context.configuration)
        provider.getSnapshot(for: intent, in: context) { entry in sink.succeed(entries: [entry], policy: nil) }
    }

    func timeline(in context: TimelineProviderContext, sink: CompletionSink) {
        let intent = configuredIntent({ Provider.Intent() }, context.configuration)
        provider.getTimeline(for: intent, in: context) { timeline in
            sink.succeed(entries: timeline.entries, policy: timeline.policy)
        }
    }

    /// Builds a configured intent once, so that fork-server call children
    /// inherit its reflection metadata warm.
    func warmUp(in context: TimelineProviderContext) {
        _ = configuredIntent({ Provider.Intent() }, context.configuration)
    }
}

struct AppIntentProviderBox<Provider: AppIntentTimelineProvider>: AnyProviderBox, @unchecked Sendable {
    let provider: Provider

    func placeholder(in context: TimelineProviderContext, sink: CompletionSink) {
        sink.succeed(entries: [provider.placeholder(in: context)], policy: nil)
    }

    func snapshot(in context: TimelineProviderContext, sink: CompletionSink) {
        let intent = configuredIntent({ Provider.Intent() }, context.configuration)
        let provider = CallLocal(provider)
        CallTask.run(context: context) {
            try await provider.value.snapshot(for: intent, in: context)
        } completion: { result in
            switch result {
            case .success(let entry): sink.succeed(entries: [entry], policy: nil)
            case .failure(let error): sink.fail(error)
            }
        }
    }

    func timeline(in context: TimelineProviderContext, sink: CompletionSink) {
        let intent = configuredIntent({ Provider.Intent() }, context.configuration)
        let provider = CallLocal(provider)
        CallTask.run(context: context) {
            try await provider.value.timeline(for: intent, in: context)
        } completion: { result in
            switch result {
            case .success(let timeline): sink.succeed(entries: timeline.entries, policy: timeline.policy)
            case .failure(let error): sink.fail(error)
            }
        }
    }

    /// Builds a configured intent once, so that fork-server call children
    /// inherit its reflection metadata warm.
    func warmUp(in context: TimelineProviderContext) {
        _ = configuredIntent({ Provider.Intent() }, context.configuration)
    }
}

enum EntryPoint: Sendable {
    case placeholder, snapshot, timeline
}

enum EntryPoints {
    static func call(
        _ point: EntryPoint, _ contextPointer: UnsafePointer<wh_context>?, _ complete: wh_complete_fn?,
        _ completionContext: UnsafeMutableRawPointer?
    ) {
        guard let complete else { return }  // Nobody to answer to.
        let sink = CompletionSink(complete: complete, context: completionContext)
        guard let (kind, context) = prepare(contextPointer, sink: sink) else { return }
        if let handler = kind.pushHandler, let contextPointer, let token = PushTokenDelivery.token(in: contextPointer) {
            PushTokenDelivery.deliver(token, to: handler, kind: kind, context: context)
        }
        switch point {
        case .placeholder: kind.provider.placeholder(in: context, sink: sink)
        case .snapshot: kind.provider.snapshot(in: context, sink: sink)
        case .timeline: kind.provider.timeline(in: context, sink: sink)
        }
    }

    /// The kind a host context names and the provider's context for it; on
    /// a bad context, fails the call through `sink` and returns nil.
    static func prepare(_ contextPointer: UnsafePointer<wh_context>?, sink: CompletionSink) -> (
        WidgetKind, TimelineProviderContext
    )? {
        guard let contextPointer else {
            sink.fail(
                TimelineProviderError(code: TimelineProviderError.unknownKind, message: "the host passed no context"))
            return nil
        }
        // Zero-extend a context smaller than ours; never read past the host's.
        let size = Int(contextPointer.pointee.struct_size)
        var raw = wh_context()
        withUnsafeMutableBytes(of: &raw) { bytes in
            bytes.copyMemory(
                from: UnsafeRawBufferPointer(start: contextPointer, count: min(size, MemoryLayout<wh_context>.size)))
        }
        let kindID = raw.kind.map { String(cString: $0) } ?? ""
        let index = Int(bitPattern: raw.kind_context) - 1
        let kind = registry.withLock { state -> WidgetKind? in
            state.kinds.indices.contains(index) ? state.kinds[index] : nil
        }
        guard let kind else {
            sink.fail(
                TimelineProviderError(
                    code: TimelineProviderError.unknownKind,
                    message: "kind \"\(kindID)\": its kind_context (\(index + 1)) names no kind of this plugin"))
            return nil
        }
        let configuration: InstanceConfiguration
        do {
            configuration = try InstanceConfiguration(json: raw.configuration_json.map { String(cString: $0) } ?? "{}")
        } catch {
            sink.fail(error)
            return nil
        }
        let family = WidgetFamily(abiBit: raw.family) ?? kind.families.first ?? .systemSmall
        let displaySize =
            raw.display_width > 0 || raw.display_height > 0
            ? CGSize(width: raw.display_width, height: raw.display_height) : family.defaultDisplaySize
        let context = TimelineProviderContext(
            family: family,
            isPreview: raw.is_preview != 0,
            displaySize: displaySize,
            date: raw.now != 0 ? Date(timeIntervalSince1970: raw.now) : Date(),
            configuration: configuration,
            locale: raw.locale.map { String(cString: $0) } ?? "en-US",
            dataDirectoryPath: raw.data_directory.map { String(cString: $0) } ?? ".",
            kind: kind.id,
            timeout: raw.timeout,
            onFailure: { error in sink.fail(error) })
        return (kind, context)
    }
}

/// One entry, encoded.
struct EncodedEntry {
    var date: Double
    var relevance: TimelineEntryRelevance?
    var json: [UInt8]
}

/// Answers one call through the host's C completion, exactly once.
///
/// `@unchecked Sendable`: the function pointer and the context are immutable
/// and the ABI lets the completion be called from any thread; `completed`
/// makes sure only the first answer goes through.
final class CompletionSink: @unchecked Sendable {
    private let complete: wh_complete_fn
    private let context: UnsafeMutableRawPointer?
    private let completed = Atomic<Bool>(false)

    init(complete: @escaping wh_complete_fn, context: UnsafeMutableRawPointer?) {
        self.complete = complete
        self.context = context
    }

    private func claim() -> Bool {
        completed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }

    /// One encoder for every call, for the entries ``JSONTextEncoder`` does not
    /// handle: created (and its options set) once, on first use; for an
    /// entry type that needs it, that is the warm-up's placeholder in a fork
    /// server rather than every call child. JSONEncoder is thread-safe once
    /// configured.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Encodes one entry as JSON: with ``JSONTextEncoder``, which writes the
    /// same bytes as `encoder` at a fraction of the cost in a cold call
    /// child; with `encoder` for what JSONTextEncoder does not handle. On any
    /// other error (a non-finite number, an error the entry's `encode(to:)`
    /// throws) the entry is encoded again with `encoder`, so the error
    /// reported is JSONEncoder's, as before JSONTextEncoder.
    static func encode<Entry: Encodable>(entry: Entry) throws -> [UInt8] {
        do {
            return try JSONTextEncoder.encode(entry)
        } catch {
            return Array(try encoder.encode(entry))
        }
    }

    /// Encodes `entries` (sorted by date) and completes with them.
    func succeed<Entry: TimelineEntry>(entries: [Entry], policy: TimelineReloadPolicy?) {
        guard claim() else { return }
        switch encode(entries) {
        case .success(let encoded):
            send(encoded, policy: policy)
        case .failure(let error):
            send(error: error)
        }
    }

    /// Completes with an error.
    func fail(_ error: any Error) {
        guard claim() else { return }
        send(error: error as? TimelineProviderError ?? TimelineProviderError(message: String(describing: error)))
    }

    private func encode<Entry: TimelineEntry>(_ entries: [Entry]) -> Result<[EncodedEntry], TimelineProviderError> {
        if entries.isEmpty {
            return .failure(
                TimelineProviderError(
                    code: TimelineProviderError.emptyTimeline,
                    message: "the timeline of \(Entry.self) has no entries: give at least one (e.g. for now)"))
        }
        var encoded: [EncodedEntry] = []
        encoded.reserveCapacity(entries.count)
        // Encodable entries as JSONEncoder would; the others by reflection,
        // with a warning `widgethost load` shows (TimelineEntry's rules).
        let isEncodable = Entry.self is any Encodable.Type
        if !isEncodable { ReflectionEncoder.warn(for: Entry.self) }
        // Index loops rather than enumerated(): in this generic function
        // EnumeratedSequence<[Entry]> would be instantiated at run time, a
        // conformance lookup in every fork-server child.
        for index in entries.indices {
            let entry = entries[index]
            let data: [UInt8]
            do {
                if isEncodable, let encodable = entry as? any Encodable {
                    data = try Self.encode(entry: encodable)
                } else {
                    data = ReflectionEncoder.encode(entry)
                }
            } catch {
                return .failure(
                    TimelineProviderError(
                        code: TimelineProviderError.encodingFailed,
                        message:
                            "entry \(index) (\(Entry.self), date \(entry.date)) cannot be encoded as JSON: \(error)"
                    ))
            }
            guard data.first == UInt8(ascii: "{") else {
                return .failure(
                    TimelineProviderError(
                        code: TimelineProviderError.encodingFailed,
                        message:
                            "entry \(index) (\(Entry.self)) encodes to \(String(decoding: data.prefix(40), as: UTF8.self)), not a JSON object: make it a struct with stored properties"
                    ))
            }
            encoded.append(
                EncodedEntry(date: entry.date.timeIntervalSince1970, relevance: entry.relevance, json: data))
        }
        // The ABI wants entries sorted by date; keep equal dates in order.
        let order = encoded.indices.sorted { (encoded[$0].date, $0) < (encoded[$1].date, $1) }
        return .success(order.map { encoded[$0] })
    }

    private func send(_ entries: [EncodedEntry], policy: TimelineReloadPolicy?) {
        let cEntries = UnsafeMutablePointer<wh_entry>.allocate(capacity: entries.count)
        var buffers: [UnsafeMutableBufferPointer<UInt8>] = []
        buffers.reserveCapacity(entries.count)
        defer {
            for buffer in buffers { buffer.deallocate() }
            cEntries.deallocate()
        }
        for (index, entry) in entries.enumerated() {
            let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: entry.json.count + 1)
            _ = buffer.initialize(from: entry.json)
            buffer[entry.json.count] = 0
            buffers.append(buffer)
            var cEntry = wh_entry()
            cEntry.struct_size = UInt32(MemoryLayout<wh_entry>.size)
            cEntry.date = entry.date
            if let relevance = entry.relevance {
                cEntry.flags = WH_ENTRY_HAS_RELEVANCE.rawValue
                cEntry.relevance_score = Double(max(relevance.score, 0))
                cEntry.relevance_duration = max(relevance.duration, 0)
            }
            cEntry.content_json = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            cEntry.content_length = entry.json.count
            (cEntries + index).initialize(to: cEntry)
        }
        var result = wh_result()
        result.struct_size = UInt32(MemoryLayout<wh_result>.size)
        result.status = Int32(WH_STATUS_OK.rawValue)
        result.entry_count = UInt32(entries.count)
        result.entry_size = UInt32(MemoryLayout<wh_entry>.stride)
        result.entries = UnsafePointer(cEntries)
        switch policy {
        case .atEnd, nil: result.policy = WH_POLICY_AT_END.rawValue
        case .after(let date):
            result.policy = WH_POLICY_AFTER.rawValue
            result.policy_date = date.timeIntervalSince1970
        case .never: result.policy = WH_POLICY_NEVER.rawValue
        }
        complete(context, &result)
    }

    private func send(error: TimelineProviderError) {
        error.message.withCString { message in
            var result = wh_result()
            result.struct_size = UInt32(MemoryLayout<wh_result>.size)
            result.status = Int32(WH_STATUS_ERROR.rawValue)
            result.entry_size = UInt32(MemoryLayout<wh_entry>.stride)
            result.error_code = error.code
            result.error_message = message
            complete(context, &result)
        }
    }
}
