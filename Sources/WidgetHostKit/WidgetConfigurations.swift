// WidgetKit's widget declarations: `Widget`, `WidgetBundle` and the three
// configurations, with their modifiers, so that a widget's declaration
// compiles unchanged; `WidgetKind(widget)` or
// `WidgetHostExport.descriptor(offer:plugin:bundle:)` exports them.
//
//     struct WeatherWidget: Widget {
//         let kind = "com.example.weather"
//         var body: some WidgetConfiguration {
//             AppIntentConfiguration(kind: kind, intent: ConfigurationAppIntent.self, provider: Provider()) { entry in
//                 WeatherEntryView(entry: entry)
//             }
//             .configurationDisplayName("Weather")
//             .description("Today's weather.")
//             .supportedFamilies([.systemSmall, .systemMedium])
//         }
//     }
//
// The content closure is kept, never called: widgethost sends entries, not
// views (a SwiftUI view does not build on Linux; give the closure any value).

/// A widget's configuration: its kind, provider, gallery texts and families
/// (WidgetKit's `WidgetConfiguration`). ``StaticConfiguration``,
/// ``IntentConfiguration`` and ``AppIntentConfiguration`` are the three;
/// the modifiers below set the rest.
public protocol WidgetConfiguration {
    /// What the SDK exports for this configuration; set by the modifiers.
    var _kind: WidgetKind { get set }
}

extension WidgetConfiguration {
    private func with(_ change: (inout WidgetKind) -> Void) -> Self {
        var copy = self
        change(&copy._kind)
        return copy
    }

    /// The name shown in the gallery.
    public func configurationDisplayName(_ displayName: LocalizedStringResource) -> Self {
        with { $0.displayName = displayName.defaultValue }
    }

    /// The name shown in the gallery.
    public func configurationDisplayName<S: StringProtocol>(_ displayName: S) -> Self {
        with { $0.displayName = String(displayName) }
    }

    /// The sentence shown in the gallery.
    public func description(_ description: LocalizedStringResource) -> Self {
        with { $0.description = description.defaultValue }
    }

    /// The sentence shown in the gallery.
    public func description<S: StringProtocol>(_ description: S) -> Self {
        with { $0.description = String(description) }
    }

    /// The families the widget supports (all by default).
    public func supportedFamilies(_ families: [WidgetFamily]) -> Self {
        with { $0.families = families }
    }

    /// Accepts push updates: the host hands `handler` the push token and
    /// reloads the kind's widgets when a push arrives (`WH_KIND_PUSH`).
    public func pushHandler(_ handler: any WidgetPushHandler.Type) -> Self {
        with { $0.pushHandler = handler }
    }

    /// Whether calls need the network (widgethost: `WH_KIND_NEEDS_NETWORK`;
    /// without it the sandbox gives a call none).
    public func needsNetwork(_ needsNetwork: Bool = true) -> Self {
        with { $0.needsNetwork = needsNetwork }
    }

    /// Whether identical calls get identical answers (widgethost:
    /// ``WidgetKind/isDeterministic``).
    public func deterministic(_ deterministic: Bool = true) -> Self {
        with { $0.isDeterministic = deterministic }
    }

    /// WidgetKit: the widget draws to its edges. No effect on entries.
    public func contentMarginsDisabled() -> Self { self }

    /// WidgetKit: whether the system may remove the background. No effect
    /// on entries.
    public func containerBackgroundRemovable(_ isRemovable: Bool = true) -> Self { self }

    /// WidgetKit: asks people to configure the widget when they add it. No
    /// effect here: the daemon's configuration gives every value.
    public func promptsForUserConfiguration() -> Self { self }

    /// WidgetKit: the widget is not shown in a Smart Stack's suggestions.
    /// No effect on entries.
    public func disfavoredLocations<Location>(_ locations: [Location], for families: [WidgetFamily]) -> Self {
        self
    }
}

/// A widget with no configuration people set (WidgetKit's
/// `StaticConfiguration`).
public struct StaticConfiguration<Content>: WidgetConfiguration {
    public var _kind: WidgetKind
    /// The view builder, kept for source compatibility (never called).
    let content: Any

    /// A configuration of `kind`, answered by `provider`.
    public init<Provider: TimelineProvider>(
        kind: String, provider: Provider, content: @escaping (Provider.Entry) -> Content
    ) {
        _kind = WidgetKind(kind, displayName: kind, provider: provider)
        self.content = content
    }
}

/// A widget people configure with a SiriKit intent (WidgetKit's
/// `IntentConfiguration`): the intent's parameters are the kind's.
public struct IntentConfiguration<Intent: INIntent, Content>: WidgetConfiguration {
    public var _kind: WidgetKind
    let content: Any

    /// A configuration of `kind` with `intent`'s parameters, answered by
    /// `provider`.
    public init<Provider: IntentTimelineProvider>(
        kind: String, intent: Intent.Type, provider: Provider, content: @escaping (Provider.Entry) -> Content
    ) where Provider.Intent == Intent {
        _kind = WidgetKind(kind, displayName: kind, provider: provider)
        self.content = content
    }
}

/// A widget people configure with an App Intent (WidgetKit's
/// `AppIntentConfiguration`): the intent's `@Parameter`s are the kind's.
public struct AppIntentConfiguration<Intent: WidgetConfigurationIntent, Content>: WidgetConfiguration {
    public var _kind: WidgetKind
    let content: Any

    /// A configuration of `kind` with `intent`'s parameters, answered by
    /// `provider`.
    public init<Provider: AppIntentTimelineProvider>(
        kind: String, intent: Intent.Type = Intent.self, provider: Provider,
        content: @escaping (Provider.Entry) -> Content
    ) where Provider.Intent == Intent {
        _kind = WidgetKind(kind, displayName: kind, provider: provider)
        self.content = content
    }
}

/// A widget: its configuration in `body` (WidgetKit's `Widget`).
public protocol Widget {
    /// The configuration's type.
    associatedtype Body: WidgetConfiguration
    /// The widget.
    init()
    /// The configuration.
    var body: Body { get }
}

/// The widgets of a plugin (WidgetKit's `WidgetBundle`).
///
/// ```swift
/// struct GameWidgets: WidgetBundle {
///     var body: some Widget {
///         CharacterWidget()
///         LeaderboardWidget()
///     }
/// }
/// // Export.swift:
/// WidgetHostExport.descriptor(offer: offer, plugin: info, bundle: GameWidgets())
/// ```
///
/// `@main` on the bundle compiles too (its `main()` does nothing: the
/// host loads the library and calls its export).
public protocol WidgetBundle {
    /// The widgets' type.
    associatedtype Body: Widget
    /// The bundle.
    init()
    /// The widgets.
    @WidgetBundleBuilder var body: Body { get }
}

extension WidgetBundle {
    /// Does nothing: a plugin is a library the host loads, not a program.
    public static func main() {}

    /// The kinds of the bundle's widgets, in order.
    public var kinds: [WidgetKind] { _WidgetList.kinds(of: body) }
}

/// The widgets a ``WidgetBundleBuilder`` collects.
public struct _WidgetList: Widget {
    let kinds: [WidgetKind]

    public init() { kinds = [] }
    init(kinds: [WidgetKind]) { self.kinds = kinds }

    public var body: _EmptyConfiguration { _EmptyConfiguration() }

    static func kinds(of widget: some Widget) -> [WidgetKind] {
        if let list = widget as? _WidgetList { return list.kinds }
        return [widget.body._kind]
    }
}

/// The configuration of a ``_WidgetList`` (never exported).
public struct _EmptyConfiguration: WidgetConfiguration {
    public var _kind = WidgetKind("", displayName: "", provider: _NoProvider())
}

/// The provider of ``_EmptyConfiguration``.
public struct _NoProvider: TimelineProvider {
    public struct Entry: TimelineEntry { public var date: Date }
    public func placeholder(in context: Context) -> Entry { Entry(date: context.date) }
    public func snapshot(in context: Context) async throws -> Entry { Entry(date: context.date) }
    public func timeline(in context: Context) async throws -> Timeline<Entry> {
        Timeline(entries: [Entry(date: context.date)], policy: .never)
    }
}

/// Collects the widgets of a ``WidgetBundle``'s `body`.
@resultBuilder
public enum WidgetBundleBuilder {
    public static func buildExpression(_ widget: some Widget) -> _WidgetList {
        _WidgetList(kinds: _WidgetList.kinds(of: widget))
    }
    public static func buildBlock(_ lists: _WidgetList...) -> _WidgetList {
        _WidgetList(kinds: lists.flatMap(\.kinds))
    }
    public static func buildOptional(_ list: _WidgetList?) -> _WidgetList { list ?? _WidgetList() }
    public static func buildEither(first list: _WidgetList) -> _WidgetList { list }
    public static func buildEither(second list: _WidgetList) -> _WidgetList { list }
    public static func buildLimitedAvailability(_ list: _WidgetList) -> _WidgetList { list }
}

// MARK: - Push updates

/// Receives the push token of a kind that accepts push updates (WidgetKit's
/// `WidgetPushHandler`), set with ``WidgetConfiguration/pushHandler(_:)``.
///
/// ```swift
/// struct ScorePushHandler: WidgetPushHandler {
///     func pushTokenDidChange(_ pushInfo: WidgetPushInfo, widgets: [WidgetInfo]) {
///         // Send pushInfo.token to your server, which pushes to the host with it.
///     }
/// }
/// ```
public protocol WidgetPushHandler: SendableMetatype {
    /// The handler.
    init()
    /// The kind's push token changed; `widgets` are its placed widgets.
    func pushTokenDidChange(_ pushInfo: WidgetPushInfo, widgets: [WidgetInfo])
}

/// A push token (WidgetKit's `WidgetPushInfo`).
public struct WidgetPushInfo: Sendable, Hashable {
    /// The token a server pushes with.
    public var token: Data

    /// A push info with `token`.
    public init(token: Data) { self.token = token }
}

/// A placed widget (WidgetKit's `WidgetInfo`), as
/// `WidgetCenter.getCurrentConfigurations` and push handlers see it.
public struct WidgetInfo: Sendable, Hashable {
    /// The instance's id.
    public var id: String
    /// The widget's kind.
    public var kind: String
    /// The family it is shown at.
    public var family: WidgetFamily
    /// The instance's configuration (its parameter values) as a JSON object.
    public var configuration: String
    /// The widget's data directory (its plugin's), or `nil`.
    public var dataDirectory: String?

    /// A widget's description.
    public init(
        id: String, kind: String, family: WidgetFamily, configuration: String = "{}", dataDirectory: String? = nil
    ) {
        self.id = id
        self.kind = kind
        self.family = family
        self.configuration = configuration
        self.dataDirectory = dataDirectory
    }

    /// The instance's configuration as `Intent`'s value (WidgetKit's
    /// `widgetConfigurationIntent(of:)`), or `nil` if it is not a JSON object.
    public func widgetConfigurationIntent<Intent: WidgetConfigurationIntent>(of type: Intent.Type = Intent.self)
        -> Intent?
    {
        guard let values = try? InstanceConfiguration(json: configuration) else { return nil }
        return configuredIntent({ Intent() }, values)
    }
}
