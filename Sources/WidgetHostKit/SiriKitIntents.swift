// SiriKit's intent types, as Xcode-generated intent code uses them with an
// IntentTimelineProvider.

// MARK: - SiriKit intents

/// A SiriKit intent, as Xcode generates from an `.intentdefinition` file
/// for an ``IntentTimelineProvider`` (SiriKit's `INIntent`).
///
/// widgethost has no intent definition files: write the intent class Xcode
/// would generate as a subclass, with a `@Parameter` per parameter:
///
/// ```swift
/// final class ConfigurationIntent: INIntent {
///     @Parameter(title: "City", default: "Paris") var city: String
///     @Parameter(title: "Show feels-like") var showFeelsLike: Bool?
/// }
/// ```
///
/// Like SiriKit's, the class is not `Sendable`; the SDK hands each call its
/// own instance.
open class INIntent {
    /// The intent with every parameter at its default.
    public required init() {}

    /// Declares a parameter of the intent.
    public typealias Parameter<Value: _IntentValue> = IntentParameter<Value>
}

/// An object of a custom type in a SiriKit intent (SiriKit's `INObject`).
open class INObject: Hashable, CustomStringConvertible {
    /// The object's id, or `nil`.
    public let identifier: String?
    /// How it is shown to people.
    public let displayString: String

    /// An object with an id and a display string.
    public init(identifier: String?, display displayString: String) {
        self.identifier = identifier
        self.displayString = displayString
    }

    public static func == (lhs: INObject, rhs: INObject) -> Bool {
        lhs.identifier == rhs.identifier && lhs.displayString == rhs.displayString
    }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(identifier)
        hasher.combine(displayString)
    }
    public var description: String { displayString }
}

/// A configuration suggested for an ``IntentTimelineProvider``'s widget
/// (WidgetKit's `IntentRecommendation`).
public struct IntentRecommendation<Intent: INIntent> {
    /// The configuration.
    public let intent: Intent
    /// Its name, for people.
    public let description: String

    /// A recommendation of `intent`, described for people.
    public init<S: StringProtocol>(intent: Intent, description: S) {
        self.intent = intent
        self.description = String(description)
    }
}
