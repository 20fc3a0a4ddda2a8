import WidgetHostKit

/// The plugin's one exported C symbol: describes the kinds to the host.
@_cdecl("widgethost_provider_entry")
public func widgethostProviderEntry(_ offer: UnsafeRawPointer?) -> UnsafeRawPointer? {
    WidgetHostExport.descriptor(
        offer: offer,
        plugin: PluginInfo(id: "com.widgethost.countdown", name: "Countdown", version: "1.0.0", vendor: "widgethost"),
        kinds: [
            WidgetKind(
                "com.widgethost.countdown",
                displayName: "Countdown",
                description: "Days, hours and minutes left until a date.",
                families: [.systemSmall, .accessoryCircular, .accessoryRectangular, .accessoryInline],
                parameters: [
                    .string(
                        "target", default: "",
                        description: "ISO 8601 date-time to count down to; empty: the next New Year (UTC)"),
                    .string("title", default: "New Year", description: "What is being counted down to"),
                ],
                deterministic: true,
                provider: CountdownProvider()
            )
            .template(CountdownTemplates.small)
            .template(CountdownTemplates.circular, families: [.accessoryCircular])
            .template(CountdownTemplates.rectangular, families: [.accessoryRectangular])
            .template(CountdownTemplates.inline, families: [.accessoryInline])
        ])
}
