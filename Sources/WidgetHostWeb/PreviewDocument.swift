import WidgetHostModel

/// What `widgethost preview` shows for one plugin: every kind × family, each
/// with its placeholder, snapshot and timeline (Xcode's widget previews, for
/// plugins built against the C ABI).
public struct PreviewDocument: Sendable {
    /// The plugin as it loaded.
    public var plugin: PluginDescription
    /// The time the calls were made with (`context->now`).
    public var now: Double
    public var kinds: [Kind]

    public init(plugin: PluginDescription, now: Double, kinds: [Kind]) {
        self.plugin = plugin
        self.now = now
        self.kinds = kinds
    }

    /// One kind's families.
    public struct Kind: Sendable {
        public var kind: KindDescription
        public var families: [Family]

        public init(kind: KindDescription, families: [Family]) {
            self.kind = kind
            self.families = families
        }
    }

    /// One family of a kind: its three answers.
    public struct Family: Sendable {
        public var family: WidgetFamily
        public var placeholder: Answer
        public var snapshot: Answer
        public var timeline: Answer

        public init(family: WidgetFamily, placeholder: Answer, snapshot: Answer, timeline: Answer) {
            self.family = family
            self.placeholder = placeholder
            self.snapshot = snapshot
            self.timeline = timeline
        }
    }

    /// What one entry point answered: entries (and a policy), or why not.
    public enum Answer: Sendable {
        case entries([EntryRecord], policy: ReloadPolicy?, seconds: Double)
        case failed(String)
    }
}

/// Why a preview could not be made at all (the plugin did not load, or the
/// asked kind or family does not exist).
public struct PreviewProblem: Error, Sendable, CustomStringConvertible {
    public var description: String
    /// True when the plugin is at fault (it did not load), false for a usage error.
    public var isPluginFailure: Bool

    public init(_ description: String, isPluginFailure: Bool) {
        self.description = description
        self.isPluginFailure = isPluginFailure
    }
}
