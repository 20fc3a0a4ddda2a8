internal import WidgetHostABI

/// The sizes a widget can be shown at (WidgetKit's `WidgetFamily`).
///
/// Each kind lists the families it supports when it is exported (see
/// ``WidgetKind``); each call says which one to render for in
/// ``TimelineProviderContext/family``.
public enum WidgetFamily: String, Sendable, Hashable, CaseIterable, Codable {
    /// A small square home-screen widget.
    case systemSmall
    /// A medium, wide home-screen widget.
    case systemMedium
    /// A large home-screen widget.
    case systemLarge
    /// An extra-large home-screen widget.
    case systemExtraLarge
    /// A small circular accessory widget.
    case accessoryCircular
    /// A rectangular accessory widget.
    case accessoryRectangular
    /// A single line of text, as on a lock screen above the clock.
    case accessoryInline

    /// The family's bit in the C ABI (`wh_family`).
    public var abiBit: UInt32 {
        switch self {
        case .systemSmall: WH_FAMILY_SYSTEM_SMALL.rawValue
        case .systemMedium: WH_FAMILY_SYSTEM_MEDIUM.rawValue
        case .systemLarge: WH_FAMILY_SYSTEM_LARGE.rawValue
        case .systemExtraLarge: WH_FAMILY_SYSTEM_EXTRA_LARGE.rawValue
        case .accessoryCircular: WH_FAMILY_ACCESSORY_CIRCULAR.rawValue
        case .accessoryRectangular: WH_FAMILY_ACCESSORY_RECTANGULAR.rawValue
        case .accessoryInline: WH_FAMILY_ACCESSORY_INLINE.rawValue
        }
    }

    /// The family whose bit is `abiBit`, or `nil` if none (or several) match.
    public init?(abiBit: UInt32) {
        guard let family = WidgetFamily.allCases.first(where: { $0.abiBit == abiBit }) else {
            return nil
        }
        self = family
    }

    /// The display size the host passes for this family, in points
    /// (informational: a provider must not depend on it).
    public var defaultDisplaySize: CGSize {
        switch self {
        case .systemSmall: CGSize(width: 170, height: 170)
        case .systemMedium: CGSize(width: 364, height: 170)
        case .systemLarge: CGSize(width: 364, height: 382)
        case .systemExtraLarge: CGSize(width: 715, height: 330)
        case .accessoryCircular: CGSize(width: 76, height: 76)
        case .accessoryRectangular: CGSize(width: 172, height: 76)
        case .accessoryInline: CGSize(width: 257, height: 26)
        }
    }
}

/// A width and a height in points: Foundation's `CGSize`, what WidgetKit
/// passes in `TimelineProviderContext.displaySize`. (Before SDK 1.3 a type of
/// its own, with `Double` fields; `CGFloat` converts to and from `Double`
/// implicitly, so code written for it compiles.)
public typealias DisplaySize = CGSize
