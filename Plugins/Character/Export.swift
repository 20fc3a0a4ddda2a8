import WidgetHostKit

/// The plugin's one exported C symbol: describes the kinds to the host.
@_cdecl("widgethost_provider_entry")
public func widgethostProviderEntry(_ offer: UnsafeRawPointer?) -> UnsafeRawPointer? {
    WidgetHostExport.descriptor(
        offer: offer,
        plugin: PluginInfo(id: "com.widgethost.game", name: "Game Widgets", version: "1.0.0", vendor: "widgethost"),
        kinds: [
            WidgetKind(
                "com.widgethost.character-detail",
                displayName: "Character",
                description: "A hero's health, recovering 25% an hour.",
                families: [.systemSmall, .systemMedium, .accessoryCircular, .accessoryRectangular],
                parameters: [
                    .string("character", default: "Power Panda", description: "The hero to show"),
                    .number("health", default: 0.25, description: "Current health, 0 to 1"),
                ],
                deterministic: true,
                provider: CharacterHealthProvider()
            )
            .template(CharacterTemplates.health)
            .template(CharacterTemplates.healthCircular, families: [.accessoryCircular])
            .pushHandler(GamePushHandler.self),
            WidgetKind(
                "com.widgethost.leaderboard",
                displayName: "Leaderboard",
                description: "The heroes, best first.",
                families: [.systemMedium, .systemLarge],
                provider: HeroLeaderboardProvider()
            )
            .template(CharacterTemplates.leaderboard)
            .pushHandler(GamePushHandler.self),
        ])
}
