import Synchronization
import WidgetHostABI
import WidgetHostKit

import struct WidgetHostModel.SplitMix64

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A result copied out of the `wh_result` the plugin passed to the
/// completion, as a host does.
struct CopiedResult: Sendable {
    struct Entry: Sendable {
        var date: Double
        var flags: UInt32
        var relevanceScore: Double
        var relevanceDuration: Double
        var json: String
    }
    var status: Int32
    var entries: [Entry]
    var policy: UInt32
    var policyDate: Double
    var errorCode: Int32
    var errorMessage: String?
    /// Whether the entry point had returned before the completion came.
    var completedAfterReturn = false
}

/// The host side of one call: owns the `wh_context` and its strings until
/// the completion, which copies the result and resumes the caller.
///
/// Calls are awaited, not waited for with a semaphore: Swift Testing runs
/// tests on the cooperative pool, which async providers need too.
final class CallCollector: Sendable {
    struct State {
        var continuation: CheckedContinuation<CopiedResult, Never>?
        var entryReturned = false
        var completedAfterReturn = false
    }
    let state: Mutex<State>
    nonisolated(unsafe) let context: UnsafeMutablePointer<wh_context>
    nonisolated(unsafe) let strings: [UnsafeMutablePointer<CChar>]

    init(_ continuation: CheckedContinuation<CopiedResult, Never>, strings: [String]) {
        state = Mutex(State(continuation: continuation))
        self.strings = strings.map { strdup($0)! }
        context = .allocate(capacity: 1)
        context.initialize(to: wh_context())
    }

    deinit {
        for string in strings { free(string) }
        context.deallocate()
    }

    static let complete: wh_complete_fn = { completionContext, result in
        // Balanced with passRetained in call(): the collector lives until here.
        let collector = Unmanaged<CallCollector>.fromOpaque(completionContext!).takeRetainedValue()
        let r = result!.pointee
        var entries: [CopiedResult.Entry] = []
        for index in 0..<Int(r.entry_count) {
            let e = UnsafeRawPointer(r.entries!).advanced(by: index * Int(r.entry_size))
                .assumingMemoryBound(to: wh_entry.self).pointee
            let bytes = UnsafeRawBufferPointer(start: e.content_json, count: e.content_length)
            entries.append(
                .init(
                    date: e.date, flags: e.flags, relevanceScore: e.relevance_score,
                    relevanceDuration: e.relevance_duration, json: String(decoding: bytes, as: UTF8.self)))
        }
        var copied = CopiedResult(
            status: r.status, entries: entries, policy: r.policy, policyDate: r.policy_date, errorCode: r.error_code,
            errorMessage: r.error_message.map { String(cString: $0) })
        let continuation = collector.state.withLock { state in
            defer { state.continuation = nil }
            copied.completedAfterReturn = state.entryReturned
            return state.continuation
        }
        continuation?.resume(returning: copied)
    }
}

/// Calls `widgethost_provider_entry` the way the runner does.
func descriptor(
    _ plugin: PluginInfo, abiMin: UInt32 = 1, abiMax: UInt32 = 1, kinds: @autoclosure () -> [WidgetKind]
) -> UnsafePointer<wh_plugin_descriptor> {
    var offer = wh_host_offer(
        struct_size: UInt32(MemoryLayout<wh_host_offer>.size), abi_min: abiMin, abi_max: abiMax, reserved: 0,
        host_version: nil)
    let raw = withUnsafePointer(to: &offer) { WidgetHostExport.descriptor(offer: $0, plugin: plugin, kinds: kinds()) }
    return raw.assumingMemoryBound(to: wh_plugin_descriptor.self)
}

func kind(_ descriptor: UnsafePointer<wh_plugin_descriptor>, _ index: Int) -> wh_kind {
    UnsafeRawPointer(descriptor.pointee.kinds!).advanced(by: index * Int(descriptor.pointee.kind_size))
        .assumingMemoryBound(to: wh_kind.self).pointee
}

enum Call {
    case placeholder, snapshot, timeline
}

/// Calls an entry point through its C function pointer with a filled
/// `wh_context`, and awaits the completion.
func call(
    _ kind: wh_kind, _ which: Call, now: Double = 1_795_000_000, configuration: String = "{}",
    preview: Bool = false, dataDirectory: String = "/tmp", family: WidgetFamily = .systemSmall,
    timeout: Double = 5, pushToken: String? = nil, contextSize: Int = MemoryLayout<wh_context>.size
) async -> CopiedResult {
    let fn: wh_entry_fn
    switch which {
    case .placeholder: fn = kind.placeholder
    case .snapshot: fn = kind.snapshot
    case .timeline: fn = kind.timeline
    }
    let kindID = String(cString: kind.id)
    let kindContext = UInt(bitPattern: kind.context)
    return await withCheckedContinuation { continuation in
        let collector = CallCollector(
            continuation, strings: [kindID, configuration, "en-US", dataDirectory, pushToken ?? ""])
        let context = collector.context
        context.pointee.struct_size = UInt32(contextSize)
        context.pointee.abi_version = 1
        context.pointee.entry_point = which == .placeholder ? 1 : which == .snapshot ? 2 : 3
        context.pointee.family = family.abiBit
        context.pointee.is_preview = preview ? 1 : 0
        context.pointee.kind = UnsafePointer(collector.strings[0])
        context.pointee.display_width = 170
        context.pointee.display_height = 170
        context.pointee.now = now
        context.pointee.timeout = timeout
        context.pointee.configuration_json = UnsafePointer(collector.strings[1])
        context.pointee.locale = UnsafePointer(collector.strings[2])
        context.pointee.data_directory = UnsafePointer(collector.strings[3])
        context.pointee.kind_context = UnsafeMutableRawPointer(bitPattern: kindContext)
        context.pointee.push_token = pushToken == nil ? nil : UnsafePointer(collector.strings[4])
        let opaque = Unmanaged.passRetained(collector).toOpaque()
        fn(context, CallCollector.complete, opaque)
        collector.state.withLock { $0.entryReturned = true }
    }
}

/// What the Kit's random tests ask of their seeded generator.
extension SplitMix64 {
    /// A number in 0..<bound.
    mutating func below(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &self) }
    /// True `percent` times in 100.
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}
