// Corpus: app code that talks to WidgetCenter, in the styles apps use
// (written for this corpus after reading real apps; no code copied). It
// compiles with `import WidgetKit` replaced by `import WidgetHostCenter`.
import WidgetHostCenter

/// Refreshes the home-screen widgets after the app saved new data (a
/// blogging app's stats service).
public final class StatsWidgetsService {
    public static let statsKind = "com.example.stats.today"
    public static let allTimeKind = "com.example.stats.all-time"

    public init() {}

    /// Reloads only the kinds that are placed, at the sizes they are placed at.
    public func refreshPlacedWidgets(completion: @escaping ([String]) -> Void) {
        WidgetCenter.shared.getCurrentConfigurations { result in
            switch result {
            case .success(let widgets):
                let kinds = Set(widgets.map(\.kind))
                for kind in [Self.statsKind, Self.allTimeKind] where kinds.contains(kind) {
                    WidgetCenter.shared.reloadTimelines(ofKind: kind)
                }
                let small = widgets.filter { $0.family == .systemSmall || $0.family == .accessoryCircular }
                completion(small.map(\.kind))
            case .failure(let error):
                print("widgets: \(error.localizedDescription)")
                completion([])
            }
        }
    }

    /// Everything changed (the user signed out).
    public func userDidSignOut() {
        WidgetCenter.shared.reloadAllTimelines()
        WidgetCenter.shared.invalidateConfigurationRecommendations()
    }
}

/// The same with async/await, and a widget's intent read back.
public enum WidgetSync {
    public static func placedFamilies(ofKind kind: String) async throws -> [WidgetFamily] {
        let widgets = try await WidgetCenter.shared.currentConfigurations()
        return widgets.filter { $0.kind == kind }.map(\.family)
    }

    public static func hasLargeWidget(_ widgets: [WidgetInfo]) -> Bool {
        widgets.contains { info in
            switch info.family {
            case .systemLarge, .systemExtraLarge: return true
            default: return false
            }
        }
    }

    /// The emoji each template widget shows (its configuration intent).
    public static func emojis(_ widgets: [WidgetInfo]) -> [String] {
        widgets.compactMap { $0.widgetConfigurationIntent(of: EmojiIntent.self)?.favoriteEmoji }
    }
}

/// The app shares the widget's configuration intent.
public struct EmojiIntent: WidgetConfigurationIntent {
    public static var title: LocalizedStringResource = "Emoji"
    @Parameter(title: "Favorite Emoji", default: "😃") public var favoriteEmoji: String
    public init() {}
}
