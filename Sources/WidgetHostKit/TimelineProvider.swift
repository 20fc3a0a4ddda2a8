import Synchronization

/// A type that tells the host what a widget shows and when to update it
/// (WidgetKit's `TimelineProvider`).
///
/// Write it as for WidgetKit, with completion handlers:
///
/// ```swift
/// import WidgetHostKit
///
/// struct CharacterDetailEntry: TimelineEntry {
///     var date: Date
///     var healthLevel: Double
/// }
///
/// struct CharacterDetailProvider: TimelineProvider {
///     func placeholder(in context: Context) -> CharacterDetailEntry {
///         CharacterDetailEntry(date: context.date, healthLevel: 0.75)
///     }
///     func getSnapshot(in context: Context, completion: @escaping @Sendable (CharacterDetailEntry) -> Void) {
///         completion(CharacterDetailEntry(date: context.date, healthLevel: 0.75))
///     }
///     func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<CharacterDetailEntry>) -> Void) {
///         let entries = [0.25, 0.5, 0.75, 1.0].enumerated().map { hour, level in
///             CharacterDetailEntry(date: context.date.addingTimeInterval(Double(hour) * 3600), healthLevel: level)
///         }
///         completion(Timeline(entries: entries, policy: .atEnd))
///     }
/// }
/// ```
///
/// or with `async` functions, which may also throw to report an error:
///
/// ```swift
/// struct WeatherProvider: TimelineProvider {
///     func placeholder(in context: Context) -> WeatherEntry { .sample }
///     func snapshot(in context: Context) async throws -> WeatherEntry { .sample }
///     func timeline(in context: Context) async throws -> Timeline<WeatherEntry> {
///         let forecast = try await Forecast.load(from: context.dataDirectory)
///         return Timeline(entries: forecast.entries, policy: .after(forecast.expiry))
///     }
/// }
/// ```
///
/// Implement one form of each: the other has a default that bridges to it.
/// (Implementing neither form is reported as an error at run time.)
///
/// Threads: the host calls one entry point at a time and waits for the
/// completion, which may be called from any thread, now or later (before the
/// call's deadline, ``TimelineProviderContext/timeout``). The `async` forms
/// run in a `Task`. Providers need not be `Sendable` (nor are WidgetKit's): a
/// provider may keep a service object or a cache. The host calls a plugin
/// process one entry point at a time, so such state is not shared between
/// concurrent calls unless the provider starts work that outlives its call.
///
/// Errors: `async` forms throw; completion forms call
/// ``TimelineProviderContext/fail(_:)`` instead of the completion. The host
/// reports the call as failed with ``TimelineProviderError/code`` and
/// ``TimelineProviderError/message``.
public protocol TimelineProvider: SendableMetatype {
    /// The type of the provider's entries.
    associatedtype Entry: TimelineEntry
    /// The context passed to every entry point.
    typealias Context = TimelineProviderContext

    /// An entry for a placeholder view: generic, returned at once, with no
    /// user data. Called synchronously.
    func placeholder(in context: Context) -> Entry

    /// The entry for the widget's current state, e.g. in the gallery (check
    /// `context.isPreview` and use sample data when real data takes time).
    /// Call `completion` exactly once, from any thread.
    func getSnapshot(in context: Context, completion: @escaping @Sendable (Entry) -> Void)

    /// The entries for now and the future, and when to ask again. Call
    /// `completion` exactly once, from any thread.
    func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<Entry>) -> Void)

    /// The `async` form of ``getSnapshot(in:completion:)``.
    func snapshot(in context: Context) async throws -> Entry

    /// The `async` form of ``getTimeline(in:completion:)``.
    func timeline(in context: Context) async throws -> Timeline<Entry>

    /// Warms what your entry points use, once, before any call
    /// (not part of WidgetKit; the default does nothing).
    ///
    /// The host's fork server loads the plugin once and runs each call in a
    /// fresh child process forked from it, so whatever a call initializes
    /// lazily is built again by every call. The SDK therefore runs, once in
    /// the server before it forks (the plugin's `warm_up`, docs/abi.md), each
    /// kind's ``placeholder(in:)`` with its encoding, and then this method;
    /// every call starts from the state they leave. Do here what your
    /// snapshot and timeline do on first use, on sample values:
    ///
    /// ```swift
    /// func warmUp(in context: Context) {
    ///     _ = Calendar(identifier: .gregorian).component(.year, from: context.date)
    ///     _ = try? Date("2027-01-01T00:00:00Z", strategy: .iso8601)
    /// }
    /// ```
    ///
    /// `context` is a preview context for the kind's first family, with
    /// the parameters' defaults. Synchronous only: start no `Task` or thread
    /// (the host checks, and runs the plugin without its warm-up if one is
    /// left running), write nothing, use no network. It runs only in a fork
    /// server, never in `--isolation spawn`: calls must not depend on it.
    func warmUp(in context: Context)
}

extension TimelineProvider {
    /// Does nothing: the SDK already warms the placeholder and its encoding.
    public func warmUp(in context: Context) {}
}

extension TimelineProvider {
    /// Runs ``snapshot(in:)`` in a `Task`, cancelled at the call's deadline
    /// (see ``AppIntentTimelineProvider``), and passes its entry to
    /// `completion`; if it throws, passes the error to
    /// ``TimelineProviderContext/fail(_:)`` instead.
    public func getSnapshot(in context: Context, completion: @escaping @Sendable (Entry) -> Void) {
        let marker = ObjectIdentifier(Self.self)
        let provider = CallLocal(self)
        CallTask.run(context: context) {
            try await AsyncBridge.$bridging.withValue(marker) { try await provider.value.snapshot(in: context) }
        } completion: { result in
            switch result {
            case .success(let entry): completion(entry)
            case .failure(let error): context.fail(error)
            }
        }
    }

    /// Runs ``timeline(in:)`` in a `Task`, cancelled at the call's deadline,
    /// and passes its timeline to
    /// `completion`; if it throws, passes the error to
    /// ``TimelineProviderContext/fail(_:)`` instead.
    public func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<Entry>) -> Void) {
        let marker = ObjectIdentifier(Self.self)
        let provider = CallLocal(self)
        CallTask.run(context: context) {
            try await AsyncBridge.$bridging.withValue(marker) { try await provider.value.timeline(in: context) }
        } completion: { result in
            switch result {
            case .success(let timeline): completion(timeline)
            case .failure(let error): context.fail(error)
            }
        }
    }

    /// Calls ``getSnapshot(in:completion:)`` and returns the entry it passes
    /// to its completion.
    ///
    /// - Throws: ``TimelineProviderError/notImplemented`` when neither form
    ///   is implemented, or what the completion form reports with
    ///   ``TimelineProviderContext/fail(_:)``.
    public func snapshot(in context: Context) async throws -> Entry {
        guard AsyncBridge.bridging != ObjectIdentifier(Self.self) else {
            throw TimelineProviderError.missing("getSnapshot(in:completion:) or snapshot(in:)", in: Self.self)
        }
        return try await AsyncBridge.$bridging.withValue(nil) {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<CallLocal<Entry>, any Error>) in
                let once = ResumeOnce(continuation)
                var inner = context
                inner.failureHandler = { error in
                    once.resume(with: .failure(error))
                }
                getSnapshot(in: inner) { once.resume(with: .success($0)) }
            }.value
        }
    }

    /// Calls ``getTimeline(in:completion:)`` and returns the timeline it
    /// passes to its completion.
    ///
    /// - Throws: ``TimelineProviderError/notImplemented`` when neither form
    ///   is implemented, or what the completion form reports with
    ///   ``TimelineProviderContext/fail(_:)``.
    public func timeline(in context: Context) async throws -> Timeline<Entry> {
        guard AsyncBridge.bridging != ObjectIdentifier(Self.self) else {
            throw TimelineProviderError.missing("getTimeline(in:completion:) or timeline(in:)", in: Self.self)
        }
        return try await AsyncBridge.$bridging.withValue(nil) {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<CallLocal<Timeline<Entry>>, any Error>) in
                let once = ResumeOnce(continuation)
                var inner = context
                inner.failureHandler = { error in
                    once.resume(with: .failure(error))
                }
                getTimeline(in: inner) { once.resume(with: .success($0)) }
            }.value
        }
    }
}

/// An error a provider reports to the host: a code and a message.
///
/// ```swift
/// func timeline(in context: Context) async throws -> Timeline<MarketEntry> {
///     guard let market = try? load() else {
///         throw TimelineProviderError(code: 10, message: "market.json: no \"open\" time")
///     }
///     ...
/// }
/// ```
///
/// The host shows the message to the plugin's author and user, so name the
/// file, the value and what to do. Errors of other types are reported with
/// code ``failed`` (1) and their description. Codes below 100 are reserved
/// for the SDK; use your own from 100 up, or any of the SDK's that fits.
public struct TimelineProviderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The code the host reports (`wh_result.error_code`); never zero.
    public var code: Int32
    /// What went wrong, for people.
    public var message: String

    /// Creates an error. A `code` of zero is replaced by ``failed``.
    public init(code: Int32 = TimelineProviderError.failed, message: String) {
        self.code = code == 0 ? TimelineProviderError.failed : code
        self.message = message
    }

    public var description: String { "error \(code): \(message)" }

    /// The provider failed (the code for errors of other types).
    public static let failed: Int32 = 1
    /// An entry could not be encoded as JSON.
    public static let encodingFailed: Int32 = 2
    /// The instance's configuration is not a JSON object.
    public static let badConfiguration: Int32 = 3
    /// A timeline has no entries.
    public static let emptyTimeline: Int32 = 4
    /// The host called a kind the plugin does not have.
    public static let unknownKind: Int32 = 5
    /// The provider implements neither form of an entry point.
    public static let notImplemented: Int32 = 6
    /// An `async` entry point was cancelled at the call's deadline and threw
    /// `CancellationError`.
    public static let cancelled: Int32 = 7

    static func missing(_ what: String, in type: Any.Type) -> TimelineProviderError {
        TimelineProviderError(
            code: notImplemented, message: "\(type) implements neither \(what)")
    }
}

/// Which provider type's default completion form is running its `async`
/// form, so that the `async` default can tell that neither is implemented
/// instead of recursing forever.
enum AsyncBridge {
    @TaskLocal static var bridging: ObjectIdentifier?
}

/// Resumes a continuation at most once, whichever of the completion and
/// `fail` comes first.
final class ResumeOnce<Value>: Sendable {
    // The value travels in a CallLocal: entries need not be Sendable, and
    // only the one awaiting task receives it.
    private let state: Mutex<CheckedContinuation<CallLocal<Value>, any Error>?>

    init(_ continuation: CheckedContinuation<CallLocal<Value>, any Error>) {
        state = Mutex(continuation)
    }

    func resume(with result: Result<Value, any Error>) {
        let continuation = state.withLock { value -> CheckedContinuation<CallLocal<Value>, any Error>? in
            defer { value = nil }
            return value
        }
        continuation?.resume(with: result.map { CallLocal($0) })
    }
}
