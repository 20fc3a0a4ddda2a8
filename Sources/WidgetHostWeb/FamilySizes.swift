import WidgetHostModel

/// The box a widget of each family is drawn in, in CSS pixels (one CSS pixel
/// per WidgetKit point).
///
/// There is one table of sizes in widgethost: ``WidgetHostModel/WidgetFamily/displaySize``,
/// mirrored by `WH_SIZE_*` in `provider.h` and passed to plugins as
/// `context->display_size`. The figures are the widget sizes Apple's Human
/// Interface Guidelines ("Widgets", "Specifications") give for a 6.1-inch
/// iPhone (390 × 844 pt): systemSmall 170 × 170, systemMedium 364 × 170,
/// systemLarge 364 × 382, accessoryCircular 76 × 76, accessoryRectangular
/// 172 × 76, accessoryInline 257 × 26; systemExtraLarge exists on iPad only,
/// 715 × 330 (11-inch iPad Pro). Apple's pages in `/work/shared/seeds` do
/// not list sizes (they cover reloads and budgets), so docs/preview.md names
/// the HIG as the source.
///
/// ```swift
/// FamilyBox(.systemMedium).width   // 364
/// ```
public struct FamilyBox: Sendable, Hashable {
    public var family: WidgetFamily
    /// Width in CSS pixels.
    public var width: Int
    /// Height in CSS pixels.
    public var height: Int

    /// The box of `family`, from the one table.
    public init(_ family: WidgetFamily) {
        self.family = family
        self.width = Int(family.displaySize.width.rounded())
        self.height = Int(family.displaySize.height.rounded())
    }

    /// Corner radius the page draws the family with (round for circular,
    /// WidgetKit-like continuous corners for the system families).
    public var cornerRadius: Int {
        switch family {
        case .accessoryCircular: width / 2
        case .accessoryInline: 4
        case .accessoryRectangular: 12
        default: 22
        }
    }
}
