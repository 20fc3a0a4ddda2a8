import Testing
import WidgetHostABI
import WidgetHostKit

private struct ScoreEntry: TimelineEntry, Encodable {
    var date: Date
    var score: Double
    var label: String
    var relevance: TimelineEntryRelevance? { TimelineEntryRelevance(score: Float(score), duration: 60) }
}

/// Completion form, reads the configuration, answers out of order.
private struct SyncProvider: TimelineProvider {
    func placeholder(in context: Context) -> ScoreEntry {
        ScoreEntry(date: context.date, score: 0, label: "placeholder")
    }
    func getSnapshot(in context: Context, completion: @escaping (ScoreEntry) -> Void) {
        completion(ScoreEntry(date: context.date, score: 1, label: context.isPreview ? "preview" : context.locale))
    }
    func getTimeline(in context: Context, completion: @escaping (Timeline<ScoreEntry>) -> Void) {
        let label = context.configuration.string("label") ?? "none"
        let entries = [
            ScoreEntry(date: context.date.addingTimeInterval(600), score: 2, label: label),
            ScoreEntry(date: context.date, score: 1, label: "\(context.family.rawValue) \(context.dataDirectory.path)"),
        ]
        completion(Timeline(entries: entries, policy: .after(context.date.addingTimeInterval(3600))))
    }
}

/// Async form that answers later, from another thread.
private struct SlowAsyncProvider: TimelineProvider {
    func placeholder(in context: Context) -> ScoreEntry { ScoreEntry(date: context.date, score: 0, label: "p") }
    func snapshot(in context: Context) async throws -> ScoreEntry {
        try await Task.sleep(for: .milliseconds(50))
        return ScoreEntry(date: context.date, score: 1, label: "late")
    }
    func timeline(in context: Context) async throws -> Timeline<ScoreEntry> {
        try await Task.sleep(for: .milliseconds(50))
        return Timeline(entries: [ScoreEntry(date: context.date, score: 1, label: "late")], policy: .never)
    }
}

/// Completion form whose completions are captured in a `Task` (they are
/// `@Sendable`: this compiles under Swift 6's strict checking).
private struct TaskCompletionProvider: TimelineProvider {
    func placeholder(in context: Context) -> ScoreEntry { ScoreEntry(date: context.date, score: 0, label: "p") }
    func getSnapshot(in context: Context, completion: @escaping @Sendable (ScoreEntry) -> Void) {
        let date = context.date
        Task {
            try? await Task.sleep(for: .milliseconds(20))
            completion(ScoreEntry(date: date, score: 1, label: "from a task"))
        }
    }
    func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<ScoreEntry>) -> Void) {
        let date = context.date
        Task.detached {
            completion(Timeline(entries: [ScoreEntry(date: date, score: 1, label: "detached")], policy: .atEnd))
        }
    }
}

private struct Failure: Error, CustomStringConvertible {
    var description: String { "the disk is on fire" }
}

/// Every way to fail.
private struct FailingProvider: TimelineProvider {
    func placeholder(in context: Context) -> ScoreEntry {
        ScoreEntry(date: context.date, score: .nan, label: "not JSON")  // NaN cannot be encoded.
    }
    func getSnapshot(in context: Context, completion: @escaping (ScoreEntry) -> Void) {
        context.fail(TimelineProviderError(code: 42, message: "no data for \(context.kind)"))
    }
    func timeline(in context: Context) async throws -> Timeline<ScoreEntry> {
        switch context.configuration.string("mode") {
        case "empty": return Timeline(entries: [], policy: .atEnd)
        case "other": throw Failure()
        default: throw TimelineProviderError(code: 7, message: "server said 503")
        }
    }
}

/// Implements neither form of snapshot/timeline.
private struct LazyProvider: TimelineProvider {
    func placeholder(in context: Context) -> ScoreEntry { ScoreEntry(date: context.date, score: 0, label: "") }
}

private let syncKinds = [
    WidgetKind(
        "test.sync", displayName: "Sync", description: "A test kind.", families: [.systemSmall, .accessoryInline],
        parameters: [
            .string("label", default: "say \"hi\"\n", description: "a label"), .number("ratio", default: 0.5),
            .integer("count", default: 3), .boolean("flag", default: true), .string("required"),
        ],
        needsNetwork: true, provider: SyncProvider()),
    WidgetKind("test.async", displayName: "Async", provider: SlowAsyncProvider()),
    WidgetKind("test.task", displayName: "Task", provider: TaskCompletionProvider()),
]

@Suite struct DescriptorTests {
    @Test func describesThePluginThroughTheCTypes() async throws {
        let plugin = PluginInfo(id: "test.descriptor", name: "Test", version: "2.0.0", vendor: "Tests")
        let d = descriptor(plugin, kinds: syncKinds)
        #expect(d.pointee.magic == WH_PLUGIN_MAGIC)
        #expect(d.pointee.struct_size == UInt32(MemoryLayout<wh_plugin_descriptor>.size))
        #expect(d.pointee.abi_version == 1)
        #expect(d.pointee.kind_size == UInt32(MemoryLayout<wh_kind>.stride))
        #expect(d.pointee.entry_size == UInt32(MemoryLayout<wh_entry>.stride))
        #expect(d.pointee.result_size == UInt32(MemoryLayout<wh_result>.size))
        #expect(String(cString: d.pointee.id) == "test.descriptor")
        #expect(String(cString: d.pointee.name) == "Test")
        #expect(String(cString: d.pointee.version) == "2.0.0")
        #expect(String(cString: d.pointee.vendor) == "Tests")
        #expect(String(cString: d.pointee.sdk_version) == WH_SDK_VERSION)
        #expect(d.pointee.refusal == nil)
        #expect(d.pointee.kind_count == 3)

        let first = kind(d, 0)
        #expect(first.struct_size == UInt32(MemoryLayout<wh_kind>.size))
        #expect(String(cString: first.id) == "test.sync")
        #expect(String(cString: first.description) == "A test kind.")
        #expect(first.families == WH_FAMILY_SYSTEM_SMALL.rawValue | WH_FAMILY_ACCESSORY_INLINE.rawValue)
        #expect(first.flags == WH_KIND_NEEDS_NETWORK.rawValue)
        #expect(first.placeholder != nil && first.snapshot != nil && first.timeline != nil)
        #expect(first.parameter_count == 5)
        let parameters = (0..<5).map {
            UnsafeRawPointer(first.parameters!).advanced(by: $0 * Int(first.parameter_size))
                .assumingMemoryBound(to: wh_parameter.self).pointee
        }
        #expect(parameters.map { String(cString: $0.name) } == ["label", "ratio", "count", "flag", "required"])
        #expect(parameters.map(\.type) == [1, 3, 2, 4, 1])
        #expect(
            parameters.map { $0.default_json.map { String(cString: $0) } } == [
                #""say \"hi\"\n""#, "0.5", "3", "true", nil,
            ])
        #expect(String(cString: parameters[0].description) == "a label")

        let second = kind(d, 1)
        #expect(second.families == WH_FAMILY_ALL_V1)
        #expect(second.parameter_count == 0 && second.parameters == nil)
        #expect(second.description == nil)
    }

    @Test func isBuiltOnceAndKeepsItsAddress() {
        let plugin = PluginInfo(id: "test.once", name: "Once", version: "1")
        let first = descriptor(plugin, kinds: syncKinds)
        nonisolated(unsafe) var evaluated = false
        let second = descriptor(
            plugin, abiMin: 1, abiMax: 5,
            kinds: {
                evaluated = true
                return []
            }())
        #expect(first == second)
        #expect(!evaluated)
    }

    @Test func refusesAHostWhoseRangeExcludesVersion1() async throws {
        let plugin = PluginInfo(id: "test.refusal", name: "Refusal", version: "1")
        let d = descriptor(plugin, abiMin: 2, abiMax: 3, kinds: syncKinds)
        #expect(d.pointee.magic == WH_PLUGIN_MAGIC)
        #expect(d.pointee.abi_version == 0)
        let refusal = try #require(d.pointee.refusal.map { String(cString: $0) })
        #expect(refusal.contains("1..1") && refusal.contains("2..3"), "\(refusal)")
        // The same plugin still accepts a host that speaks 1.
        #expect(descriptor(plugin, abiMin: 1, abiMax: 2, kinds: syncKinds).pointee.abi_version == 1)
        // No offer at all.
        let none = WidgetHostExport.descriptor(offer: nil, plugin: plugin, kinds: syncKinds)
            .assumingMemoryBound(to: wh_plugin_descriptor.self)
        #expect(none.pointee.abi_version == 0)
        #expect(String(cString: none.pointee.refusal).contains("no offer"))
    }

    @Test func zeroExtendsAnOlderSmallerOffer() {
        // An offer that ends after abi_min: abi_max reads as 0, so 1 is not in range.
        var offer = wh_host_offer(struct_size: 8, abi_min: 1, abi_max: 1, reserved: 0, host_version: nil)
        let d = withUnsafePointer(to: &offer) {
            WidgetHostExport.descriptor(
                offer: $0, plugin: PluginInfo(id: "test.small-offer", name: "S", version: "1"), kinds: syncKinds)
        }.assumingMemoryBound(to: wh_plugin_descriptor.self)
        #expect(d.pointee.abi_version == 0)
    }

    @Test func refusesKindsThatBreakTheRules() {
        let duplicate = descriptor(
            PluginInfo(id: "test.duplicate", name: "D", version: "1"),
            kinds: [
                WidgetKind("same", displayName: "A", provider: SyncProvider()),
                WidgetKind("same", displayName: "B", provider: SyncProvider()),
            ])
        #expect(duplicate.pointee.abi_version == 0)
        #expect(String(cString: duplicate.pointee.refusal).contains("\"same\" twice"))
        let badName = descriptor(
            PluginInfo(id: "test.bad-name", name: "D", version: "1"),
            kinds: [WidgetKind("k", displayName: "K", parameters: [.string("1st")], provider: SyncProvider())])
        #expect(String(cString: badName.pointee.refusal).contains("\"1st\""))
        let noFamily = descriptor(
            PluginInfo(id: "test.no-family", name: "D", version: "1"),
            kinds: [WidgetKind("k", displayName: "K", families: [], provider: SyncProvider())])
        #expect(String(cString: noFamily.pointee.refusal).contains("no families"))
    }
}

@Suite struct EntryPointTests {
    let d = descriptor(PluginInfo(id: "test.calls", name: "Calls", version: "1"), kinds: syncKinds)
    let failing = descriptor(
        PluginInfo(id: "test.failing", name: "Failing", version: "1"),
        kinds: [
            WidgetKind("test.failing", displayName: "Failing", provider: FailingProvider()),
            WidgetKind("test.lazy", displayName: "Lazy", provider: LazyProvider()),
        ])

    @Test func timelineThroughTheCFunctionPointer() async throws {
        let result = await
            (call(
                kind(d, 0), .timeline, now: 1_795_000_000, configuration: #"{"label": "from config"}"#,
                dataDirectory: "/tmp/whdata", family: .accessoryInline))
        #expect(result.status == 0)
        #expect(result.policy == WH_POLICY_AFTER.rawValue)
        #expect(result.policyDate == 1_795_003_600)
        // Sorted by date, whatever order the provider used.
        #expect(result.entries.map(\.date) == [1_795_000_000, 1_795_000_600])
        #expect(result.entries[0].flags == WH_ENTRY_HAS_RELEVANCE.rawValue)
        #expect(result.entries[1].relevanceScore == 2 && result.entries[1].relevanceDuration == 60)
        #expect(
            result.entries[0].json
                == #"{"date":"2026-11-18T11:06:40Z","label":"accessoryInline /tmp/whdata","score":1}"#)
        #expect(result.entries[1].json.contains(#""label":"from config""#))
    }

    @Test func placeholderAndSnapshot() async throws {
        let placeholder = await (call(kind(d, 0), .placeholder))
        #expect(placeholder.status == 0 && placeholder.entries.count == 1)
        #expect(placeholder.entries[0].json.contains("placeholder"))
        let preview = await (call(kind(d, 0), .snapshot, preview: true))
        #expect(preview.entries[0].json.contains(#""label":"preview""#))
        let snapshot = await (call(kind(d, 0), .snapshot))
        #expect(snapshot.entries[0].json.contains(#""label":"en-US""#))
    }

    @Test func asyncProviderCompletesLaterFromAnotherThread() async throws {
        let result = await call(kind(d, 1), .timeline)
        #expect(result.completedAfterReturn, "the entry point returned before the completion")
        #expect(result.status == 0)
        #expect(result.policy == WH_POLICY_NEVER.rawValue)
        #expect(result.entries[0].json.contains("late"))
        let snapshot = await (call(kind(d, 1), .snapshot))
        #expect(snapshot.entries.count == 1)
    }

    @Test func completionCapturedInATask() async throws {
        let snapshot = await call(kind(d, 2), .snapshot)
        #expect(snapshot.completedAfterReturn)
        #expect(snapshot.status == 0 && snapshot.entries[0].json.contains("from a task"))
        let timeline = await call(kind(d, 2), .timeline)
        #expect(timeline.status == 0 && timeline.policy == WH_POLICY_AT_END.rawValue)
        #expect(timeline.entries[0].json.contains("detached"))
    }

    @Test func errorsBecomeStatusError() async throws {
        let thrown = await (call(kind(failing, 0), .timeline))
        #expect(thrown.status == Int32(WH_STATUS_ERROR.rawValue))
        #expect(thrown.errorCode == 7 && thrown.errorMessage == "server said 503")
        #expect(thrown.entries.isEmpty)

        let other = await (call(kind(failing, 0), .timeline, configuration: #"{"mode": "other"}"#))
        #expect(other.errorCode == TimelineProviderError.failed && other.errorMessage == "the disk is on fire")

        let empty = await (call(kind(failing, 0), .timeline, configuration: #"{"mode": "empty"}"#))
        #expect(empty.errorCode == TimelineProviderError.emptyTimeline)

        let failed = await (call(kind(failing, 0), .snapshot))
        #expect(failed.errorCode == 42 && failed.errorMessage == "no data for test.failing")

        let encoding = await (call(kind(failing, 0), .placeholder))
        #expect(encoding.errorCode == TimelineProviderError.encodingFailed)
        #expect(encoding.errorMessage?.contains("entry 0 (ScoreEntry") == true, "\(encoding.errorMessage ?? "")")

        let badConfig = await (call(kind(failing, 0), .timeline, configuration: "[1, 2]"))
        #expect(badConfig.errorCode == TimelineProviderError.badConfiguration)

        let lazy = await (call(kind(failing, 1), .timeline))
        #expect(lazy.errorCode == TimelineProviderError.notImplemented)
        #expect(lazy.errorMessage?.contains("LazyProvider implements neither") == true)
        let lazySnapshot = await (call(kind(failing, 1), .snapshot))
        #expect(lazySnapshot.errorCode == TimelineProviderError.notImplemented)
    }

    @Test func unknownKindContext() async throws {
        var bogus = kind(d, 0)
        bogus.context = UnsafeMutableRawPointer(bitPattern: 100_000)
        let result = await (call(bogus, .timeline))
        #expect(result.errorCode == TimelineProviderError.unknownKind)
    }
}

@Suite struct BridgeTests {
    @Test func asyncFormOfACompletionProvider() async throws {
        let context = TimelineProviderContext(date: Date(timeIntervalSince1970: 0))
        let timeline = try await SyncProvider().timeline(in: context)
        #expect(timeline.entries.count == 2)
        #expect(timeline.policy == .after(Date(timeIntervalSince1970: 3600)))
        await #expect(throws: TimelineProviderError.self) { try await FailingProvider().snapshot(in: context) }
    }

    @Test func completionFormOfAnAsyncProvider() async throws {
        let context = TimelineProviderContext(date: Date(timeIntervalSince1970: 0))
        let entry = await withCheckedContinuation { continuation in
            SlowAsyncProvider().getSnapshot(in: context) { continuation.resume(returning: $0) }
        }
        #expect(entry.label == "late")
    }

    @Test func configurationAccessors() async throws {
        struct Settings: Decodable {
            var city: String
            var days: Int
        }
        let configuration = try InstanceConfiguration(json: #"{"city": "Oslo", "days": 3, "ratio": 0.5, "on": true}"#)
        #expect(configuration.string("city") == "Oslo")
        #expect(configuration.integer("days") == 3 && configuration.number("days") == 3)
        #expect(configuration.number("ratio") == 0.5 && configuration.integer("ratio") == nil)
        #expect(configuration.bool("on") == true && configuration["missing"] == nil)
        #expect(try configuration.decode(Settings.self).days == 3)
        #expect(throws: TimelineProviderError.self) { try InstanceConfiguration(json: "nope") }
    }
}
