import WidgetHostKit

/// The plugin's one exported C symbol: describes the kinds to the host.
@_cdecl("widgethost_provider_entry")
public func widgethostProviderEntry(_ offer: UnsafeRawPointer?) -> UnsafeRawPointer? {
    WidgetHostExport.descriptor(
        offer: offer,
        plugin: PluginInfo(
            id: "com.widgethost.market-hours", name: "Market Hours", version: "1.0.0", vendor: "widgethost"),
        kinds: [
            WidgetKind(
                "com.widgethost.market-hours",
                displayName: "Market Hours",
                description: "Whether the exchange is open, and until when.",
                families: [.systemSmall, .systemMedium, .accessoryRectangular, .accessoryInline],
                deterministic: true,
                provider: MarketHoursProvider()
            )
            .template(MarketHoursTemplates.system)
            .template(MarketHoursTemplates.rectangular, families: [.accessoryRectangular])
            .template(MarketHoursTemplates.inline, families: [.accessoryInline])
        ])
}
