import Synchronization
import Testing
import WidgetHostABI
import WidgetHostKit

// Intent-configured and async providers through the C ABI: the intent's
// parameters in the descriptor, the configuration as the intent value, the
// deadline's cancellation, reflected entries.

private enum Units: String, AppEnum {
    case metric, imperial
    static let typeDisplayRepresentation: TypeDisplayRepresentation = "Units"
    static let caseDisplayRepresentations: [Units: DisplayRepresentation] = [.metric: "Metric"]
}

private struct WeatherIntent: WidgetConfigurationIntent {
    static let title: LocalizedStringResource = "Weather"
    @Parameter(title: "City", description: "Where", default: "Paris") var city: String
    @Parameter(title: "Units", default: .metric) var units: Units
    @Parameter(title: "Days") var days: Int?
    @Parameter(title: "Compact", default: false) var compact: Bool
    @Parameter(title: "Ratio", default: 0.5) var ratio: Double
}

private struct WeatherEntry: TimelineEntry, Codable {
    var date: Date
    var summary: String
    var width: Double
}

private struct WeatherProvider: AppIntentTimelineProvider {
    func placeholder(in context: Context) -> WeatherEntry { WeatherEntry(date: context.date, summary: "-", width: 0) }
    func snapshot(for configuration: WeatherIntent, in context: Context) async -> WeatherEntry {
        placeholder(in: context)
    }
    func timeline(for configuration: WeatherIntent, in context: Context) async -> Timeline<WeatherEntry> {
        let summary =
            "\(configuration.city) \(configuration.units.rawValue) \(configuration.days.map(String.init) ?? "nil") \(configuration.compact) \(configuration.ratio)"
        let width: CGFloat = context.displaySize.width
        return Timeline(
            entries: [WeatherEntry(date: context.date, summary: summary, width: Double(width))], policy: .never)
    }
}

/// Awaits a sleep far past any deadline, then reports whether it was cancelled.
private struct SleepyIntent: WidgetConfigurationIntent {
    static let title: LocalizedStringResource = "Sleepy"
    @Parameter(title: "Rethrow", default: false) var rethrow: Bool
}

private struct SleepyProvider: AppIntentTimelineProvider {
    func placeholder(in context: Context) -> WeatherEntry { WeatherEntry(date: context.date, summary: "", width: 0) }
    func snapshot(for configuration: SleepyIntent, in context: Context) async throws -> WeatherEntry {
        placeholder(in: context)
    }
    func timeline(for configuration: SleepyIntent, in context: Context) async throws -> Timeline<WeatherEntry> {
        if configuration.rethrow {
            try await Task.sleep(for: .seconds(600))
        } else {
            try? await Task.sleep(for: .seconds(600))
        }
        let entry = WeatherEntry(date: context.date, summary: Task.isCancelled ? "cancelled" : "slept", width: 0)
        return Timeline(entries: [entry], policy: .atEnd)
    }
}

private final class RouteIntent: INIntent {
    @Parameter(title: "Stop") var stop: String?
}

private struct RouteEntry: TimelineEntry {
    let date: Date
    let configuration: RouteIntent
}

private struct RouteProvider: IntentTimelineProvider {
    func placeholder(in context: Context) -> RouteEntry { RouteEntry(date: context.date, configuration: RouteIntent()) }
    func getSnapshot(for configuration: RouteIntent, in context: Context, completion: @escaping (RouteEntry) -> Void) {
        completion(RouteEntry(date: context.date, configuration: configuration))
    }
    func getTimeline(
        for configuration: RouteIntent, in context: Context, completion: @escaping (Timeline<RouteEntry>) -> Void
    ) {
        completion(Timeline(entries: [RouteEntry(date: context.date, configuration: configuration)], policy: .atEnd))
    }
}

private struct PushHandler: WidgetPushHandler {
    func pushTokenDidChange(_ pushInfo: WidgetPushInfo, widgets: [WidgetInfo]) {}
}

private struct RouteWidget: Widget {
    var body: some WidgetConfiguration {
        IntentConfiguration(kind: "test.route", intent: RouteIntent.self, provider: RouteProvider()) { $0 }
            .configurationDisplayName("Route")
            .description("Next buses.")
            .supportedFamilies([.systemSmall])
            .pushHandler(PushHandler.self)
    }
}

private func parameters(_ kind: wh_kind) -> [wh_parameter] {
    (0..<Int(kind.parameter_count)).map { index in
        UnsafeRawPointer(kind.parameters!).advanced(by: index * Int(kind.parameter_size))
            .assumingMemoryBound(to: wh_parameter.self).pointee
    }
}

private func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }

@Suite struct IntentProviderTests {
    @Test func appIntentParametersBecomeTheKindsParameters() throws {
        let d = descriptor(
            PluginInfo(id: "test.intent.parameters", name: "P", version: "1"),
            kinds: [WidgetKind("test.weather", displayName: "Weather", provider: WeatherProvider())])
        #expect(d.pointee.abi_version == 1)
        let all = parameters(kind(d, 0))
        #expect(all.map { text($0.name) } == ["city", "units", "days", "compact", "ratio"])
        #expect(all.map(\.type) == [1, 1, 2, 4, 3])
        #expect(all.map { text($0.default_json) } == [#""Paris""#, #""metric""#, nil, "false", "0.5"])
        #expect(all.map { text($0.title) } == ["City", "Units", "Days", "Compact", "Ratio"])
        #expect(text(all[0].description) == "Where")
        #expect(all.allSatisfy { Int($0.struct_size) == MemoryLayout<wh_parameter>.size })
        // The enum's cases are the choices, with their titles (none for imperial).
        #expect(all[1].choice_count == 2)
        #expect((0..<2).map { text(all[1].choices![$0]) } == ["metric", "imperial"])
        #expect((0..<2).map { text(all[1].choice_titles![$0]) } == ["Metric", nil])
        // `Int?` without a default is optional, not required.
        #expect(all.map { $0.flags & WH_PARAMETER_OPTIONAL.rawValue != 0 } == [false, false, true, false, false])
    }

    @Test func theConfigurationArrivesAsTheIntent() async throws {
        let d = descriptor(
            PluginInfo(id: "test.intent.values", name: "P", version: "1"),
            kinds: [WidgetKind("test.weather", displayName: "Weather", provider: WeatherProvider())])
        let set = await call(
            kind(d, 0), .timeline,
            configuration: #"{"city": "Oslo", "units": "imperial", "days": 3, "compact": true, "ratio": 2}"#)
        #expect(set.status == 0)
        #expect(set.entries.first?.json.contains(#""summary":"Oslo imperial 3 true 2.0""#) == true, "\(set)")
        #expect(set.entries.first?.json.contains(#""width":170"#) == true)
        // Defaults where the configuration has no member; a value of the wrong type keeps the default.
        let defaults = await call(kind(d, 0), .timeline, configuration: #"{"units": "kelvin"}"#)
        #expect(defaults.entries.first?.json.contains(#""summary":"Paris metric nil false 0.5""#) == true)
    }

    @Test func anAsyncTimelineIsCancelledAtTheDeadline() async throws {
        let d = descriptor(
            PluginInfo(id: "test.intent.deadline", name: "P", version: "1"),
            kinds: [WidgetKind("test.sleepy", displayName: "Sleepy", provider: SleepyProvider())])
        // Cancelled at 0.9 s of its 1 s: the provider sees Task.isCancelled after
        // its 600 s sleep ends early. (No wall-time assert: in this test process
        // the watchdog shares the cooperative pool with other suites' blocking
        // tests, and can start late on a busy machine.)
        let answered = await call(kind(d, 0), .timeline, timeout: 1)
        #expect(answered.status == 0, "\(answered)")
        #expect(answered.entries.first?.json.contains(#""summary":"cancelled""#) == true, "\(answered)")
        // A provider that lets the CancellationError escape fails with `cancelled`.
        let thrown = await call(kind(d, 0), .timeline, configuration: #"{"rethrow": true}"#, timeout: 1)
        #expect(thrown.status == 1)
        #expect(thrown.errorCode == TimelineProviderError.cancelled)
        #expect(thrown.errorMessage?.contains("deadline") == true)
    }

    @Test func siriIntentWidgetExportsWithPushAndEntryByReflection() async throws {
        let d = descriptor(
            PluginInfo(id: "test.intent.siri", name: "P", version: "1"), kinds: [WidgetKind(RouteWidget())])
        let route = kind(d, 0)
        #expect(text(route.id) == "test.route")
        #expect(text(route.display_name) == "Route")
        #expect(route.families == WidgetFamily.systemSmall.abiBit)
        #expect(route.flags & WH_KIND_PUSH.rawValue != 0)
        #expect(parameters(route).map { text($0.name) } == ["stop"])
        let result = await call(route, .timeline, configuration: #"{"stop": "Main St"}"#)
        // The entry holds the intent, which is not Encodable: reflected, the wrapper as its value.
        #expect(result.entries.first?.json == #"{"configuration":{"stop":"Main St"},"date":"2026-11-18T11:06:40Z"}"#)
        let unset = await call(route, .snapshot)
        #expect(unset.entries.first?.json == #"{"configuration":{"stop":null},"date":"2026-11-18T11:06:40Z"}"#)
    }

    @Test func widgetInfoGivesTheIntent() {
        let info = WidgetInfo(
            id: "w1", kind: "test.weather", family: .systemMedium, configuration: #"{"city": "Rome", "days": 2}"#)
        let intent = info.widgetConfigurationIntent(of: WeatherIntent.self)
        #expect(intent?.city == "Rome")
        #expect(intent?.days == 2)
        #expect(intent?.units == .metric)
        #expect(info.family == .systemMedium)
    }

    @Test func displaySizeIsACGSizeAtTheFamilysPointSize() {
        let context = TimelineProviderContext(family: .systemMedium)
        let size: CGSize = context.displaySize
        #expect(size == CGSize(width: 364, height: 170))
        #expect(WidgetFamily.accessoryInline.defaultDisplaySize.height == 26)
    }
}
