/// The size classes a widget can render in, named as in WidgetKit.
///
/// The raw value is the bit the C ABI uses (`wh_family` in
/// `SDK/include/widgethost/provider.h`).
///
/// ```swift
/// let family = WidgetFamily(name: "systemSmall")   // .systemSmall
/// family?.displaySize                               // (170, 170)
/// ```
public enum WidgetFamily: UInt32, CaseIterable, Sendable, Codable, CustomStringConvertible {
    case systemSmall = 0x01
    case systemMedium = 0x02
    case systemLarge = 0x04
    case systemExtraLarge = 0x08
    case accessoryCircular = 0x10
    case accessoryRectangular = 0x20
    case accessoryInline = 0x40

    /// The WidgetKit name, e.g. `systemSmall`.
    public var name: String {
        switch self {
        case .systemSmall: "systemSmall"
        case .systemMedium: "systemMedium"
        case .systemLarge: "systemLarge"
        case .systemExtraLarge: "systemExtraLarge"
        case .accessoryCircular: "accessoryCircular"
        case .accessoryRectangular: "accessoryRectangular"
        case .accessoryInline: "accessoryInline"
        }
    }

    public var description: String { name }

    /// Looks a family up by its WidgetKit name (`systemSmall`), case-insensitively,
    /// also accepting kebab case (`system-small`).
    public init?(name: String) {
        let key = String(name.lowercased().filter { $0 != "-" })
        guard let family = Self.allCases.first(where: { $0.name.lowercased() == key }) else {
            return nil
        }
        self = family
    }

    /// The display size in points the host passes for this family
    /// (those of a 6.1-inch iPhone, as in `WH_SIZE_*`).
    public var displaySize: (width: Double, height: Double) {
        switch self {
        case .systemSmall: (170, 170)
        case .systemMedium: (364, 170)
        case .systemLarge: (364, 382)
        case .systemExtraLarge: (715, 330)
        case .accessoryCircular: (76, 76)
        case .accessoryRectangular: (172, 76)
        case .accessoryInline: (257, 26)
        }
    }

    /// The families whose bits are set in `mask`, in declaration order.
    public static func families(in mask: UInt32) -> [WidgetFamily] {
        allCases.filter { mask & $0.rawValue != 0 }
    }

    /// Every bit ABI v1 defines.
    public static let allBits: UInt32 = 0x7F
}
