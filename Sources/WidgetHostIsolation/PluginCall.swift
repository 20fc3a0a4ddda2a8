import WidgetHostModel

/// One entry-point call to make in an isolated child.
///
/// ```swift
/// let call = PluginCall(.timeline, kind: "com.widgethost.countdown", family: .systemSmall,
///                       now: 1_790_000_000, dataDirectory: "/tmp/countdown")
/// ```
public struct PluginCall: Sendable, Hashable {
    public var entryPoint: EntryPoint
    public var kind: String
    public var family: WidgetFamily
    /// WidgetKit's `context.isPreview`: shown in the gallery, answer fast.
    public var isPreview: Bool
    /// The host's clock (seconds since the epoch), passed as `context->now`.
    public var now: Double
    /// Seconds the plugin has to complete; nil for the entry point's default.
    public var timeout: Double?
    /// A JSON object with the instance's configuration (defaults are filled
    /// in from the kind's parameters before the call).
    public var configuration: [String: String]
    /// BCP 47 locale tag, e.g. `en-US`.
    public var locale: String
    /// The plugin's own writable data directory (created if missing).
    public var dataDirectory: String
    /// Whether the sandbox lets the call use the network (internet sockets,
    /// the host's network namespace). Pass true only for a kind whose
    /// descriptor declares `WH_KIND_NEEDS_NETWORK` (`KindDescription.needsNetwork`).
    public var allowNetwork: Bool
    /// The kind's push token, passed as `context->push_token` (SDK 1.4), for
    /// a kind that declares `WH_KIND_PUSH` (`KindDescription.acceptsPush`)
    /// when the daemon runs it; nil otherwise.
    public var pushToken: String?

    public init(
        _ entryPoint: EntryPoint, kind: String, family: WidgetFamily, isPreview: Bool = false,
        now: Double, timeout: Double? = nil, configuration: [String: String] = [:],
        locale: String = "en-US", dataDirectory: String, allowNetwork: Bool = false, pushToken: String? = nil
    ) {
        self.allowNetwork = allowNetwork
        self.pushToken = pushToken
        self.entryPoint = entryPoint
        self.kind = kind
        self.family = family
        self.isPreview = isPreview
        self.now = now
        self.timeout = timeout
        self.configuration = configuration
        self.locale = locale
        self.dataDirectory = dataDirectory
    }

    /// The timeout this call runs with.
    public var effectiveTimeout: Double {
        timeout ?? DefaultTimeouts.timeout(for: entryPoint, isPreview: isPreview)
    }
}

/// Default deadlines per entry point, fitted to their roles (WidgetKit:
/// placeholder is synchronous and must be instant; snapshot must be quick,
/// quicker in the gallery; timeline may do I/O). Counted from the moment the
/// plugin is loaded, so they do not include process start-up.
public enum DefaultTimeouts {
    /// `dlopen`, constructors and `widgethost_provider_entry`.
    public static let load: Double = 5
    public static let placeholder: Double = 0.5
    public static let snapshotPreview: Double = 1
    public static let snapshot: Double = 2
    public static let timeline: Double = 15

    /// The default for one entry point.
    public static func timeout(for entryPoint: EntryPoint, isPreview: Bool) -> Double {
        switch entryPoint {
        case .placeholder: placeholder
        case .snapshot: isPreview ? snapshotPreview : snapshot
        case .timeline: timeline
        }
    }
}

/// What a provider answered: entries and, for a timeline, its policy.
public struct ProviderResult: Sendable, Hashable {
    public var entries: [EntryRecord]
    /// The reload policy (timeline calls only).
    public var policy: ReloadPolicy?
    /// Things the plugin author should fix that do not fail the call.
    public var warnings: [String]

    /// The result as a timeline (placeholder and snapshot results get `.never`).
    public var timeline: TimelineRecord { TimelineRecord(entries: entries, policy: policy ?? .never) }
}

/// Where the time of one call went.
public struct CallTiming: Sendable, Hashable {
    /// From spawning the child to having the answer (or the failure).
    public var totalSeconds: Double
    /// `dlopen` plus `widgethost_provider_entry`, measured in the child.
    public var loadSeconds: Double?
    /// From calling the entry point to its completion, measured in the child.
    public var providerSeconds: Double?
    /// CPU time (user + system) of the spawned runner process, from its
    /// whole life: exec, `dlopen`, the call and its exit (`wait4`). Only
    /// with `--isolation spawn`: a fork server's children are reaped by the
    /// server after the call returns (see `ForkServer.cpuUsage`).
    public var childCPUSeconds: Double?

    public init(
        totalSeconds: Double, loadSeconds: Double? = nil, providerSeconds: Double? = nil,
        childCPUSeconds: Double? = nil
    ) {
        self.totalSeconds = totalSeconds
        self.loadSeconds = loadSeconds
        self.providerSeconds = providerSeconds
        self.childCPUSeconds = childCPUSeconds
    }
}

/// What the plugin printed during the call (kept apart from the protocol).
public struct CapturedLog: Sendable, Hashable {
    public var stdout: String
    public var stderr: String
    /// Bytes printed beyond `WidgetHostLimits.logBytesPerStream`, not kept.
    public var droppedBytes: Int

    public static let empty = CapturedLog(stdout: "", stderr: "", droppedBytes: 0)
    public var isEmpty: Bool { stdout.isEmpty && stderr.isEmpty }
}

/// Everything one isolated load or call produced.
public struct CallOutput: Sendable {
    /// The plugin's descriptor, when loading got that far.
    public var plugin: PluginDescription?
    /// The answer of the call (nil for a load without a call, or on failure).
    public var result: ProviderResult?
    /// What went wrong, if anything did.
    public var failure: PluginFailure?
    public var timing: CallTiming
    public var log: CapturedLog
    /// How the child ended, e.g. "exited 0", "killed by SIGKILL (timeout)".
    public var childExit: String
    /// The child's pid, which was also its process group id (0 if it never started).
    public var processGroup: Int32
}
