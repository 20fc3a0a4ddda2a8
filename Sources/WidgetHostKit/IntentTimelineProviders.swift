/// A provider of a widget people configure with a SiriKit intent
/// (WidgetKit's `IntentTimelineProvider`).
///
/// Each call gets the instance's configuration as an `Intent` value whose
/// `@Parameter`s are filled in; the intent's parameters are the kind's
/// parameters (see ``INIntent``).
///
/// ```swift
/// struct Provider: IntentTimelineProvider {
///     func placeholder(in context: Context) -> WeatherEntry { .sample }
///     func getSnapshot(for configuration: ConfigurationIntent, in context: Context,
///                      completion: @escaping (WeatherEntry) -> ()) {
///         completion(.sample)
///     }
///     func getTimeline(for configuration: ConfigurationIntent, in context: Context,
///                      completion: @escaping (Timeline<WeatherEntry>) -> ()) {
///         let entry = WeatherEntry(date: context.date, city: configuration.city)
///         completion(Timeline(entries: [entry], policy: .atEnd))
///     }
/// }
/// ```
///
/// Implement the completion or the `async` form of snapshot and timeline;
/// the other bridges to it. `async` forms run in a task that is cancelled at
/// the call's deadline (see ``AppIntentTimelineProvider``).
public protocol IntentTimelineProvider: SendableMetatype {
    /// The type of the provider's entries.
    associatedtype Entry: TimelineEntry
    /// The configuration intent.
    associatedtype Intent: INIntent
    /// The context passed to every entry point.
    typealias Context = TimelineProviderContext

    /// An entry for a placeholder view, returned at once. Called
    /// synchronously.
    func placeholder(in context: Context) -> Entry

    /// The entry for the widget's current state. Call `completion` exactly
    /// once, from any thread.
    func getSnapshot(for configuration: Intent, in context: Context, completion: @escaping @Sendable (Entry) -> Void)

    /// The entries for now and the future. Call `completion` exactly once,
    /// from any thread.
    func getTimeline(
        for configuration: Intent, in context: Context, completion: @escaping @Sendable (Timeline<Entry>) -> Void)

    /// The `async` form of ``getSnapshot(for:in:completion:)``.
    func snapshot(for configuration: Intent, in context: Context) async throws -> Entry

    /// The `async` form of ``getTimeline(for:in:completion:)``.
    func timeline(for configuration: Intent, in context: Context) async throws -> Timeline<Entry>

    /// Configurations to suggest where people cannot configure (none by
    /// default).
    func recommendations() -> [IntentRecommendation<Intent>]
}

extension IntentTimelineProvider {
    public func recommendations() -> [IntentRecommendation<Intent>] { [] }

    /// Runs ``snapshot(for:in:)`` in a task with the call's deadline.
    public func getSnapshot(
        for configuration: Intent, in context: Context, completion: @escaping @Sendable (Entry) -> Void
    ) {
        let marker = ObjectIdentifier(Self.self)
        let configuration = CallLocal(configuration)
        let provider = CallLocal(self)
        CallTask.run(context: context) {
            try await AsyncBridge.$bridging.withValue(marker) {
                try await provider.value.snapshot(for: configuration.value, in: context)
            }
        } completion: { result in
            switch result {
            case .success(let entry): completion(entry)
            case .failure(let error): context.fail(error)
            }
        }
    }

    /// Runs ``timeline(for:in:)`` in a task with the call's deadline.
    public func getTimeline(
        for configuration: Intent, in context: Context, completion: @escaping @Sendable (Timeline<Entry>) -> Void
    ) {
        let marker = ObjectIdentifier(Self.self)
        let configuration = CallLocal(configuration)
        let provider = CallLocal(self)
        CallTask.run(context: context) {
            try await AsyncBridge.$bridging.withValue(marker) {
                try await provider.value.timeline(for: configuration.value, in: context)
            }
        } completion: { result in
            switch result {
            case .success(let timeline): completion(timeline)
            case .failure(let error): context.fail(error)
            }
        }
    }

    /// Calls ``getSnapshot(for:in:completion:)`` and returns its entry.
    public func snapshot(for configuration: Intent, in context: Context) async throws -> Entry {
        guard AsyncBridge.bridging != ObjectIdentifier(Self.self) else {
            throw TimelineProviderError.missing(
                "getSnapshot(for:in:completion:) or snapshot(for:in:)", in: Self.self)
        }
        return try await AsyncBridge.$bridging.withValue(nil) {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<CallLocal<Entry>, any Error>) in
                let once = ResumeOnce(continuation)
                var inner = context
                inner.failureHandler = { error in once.resume(with: .failure(error)) }
                getSnapshot(for: configuration, in: inner) { once.resume(with: .success($0)) }
            }.value
        }
    }

    /// Calls ``getTimeline(for:in:completion:)`` and returns its timeline.
    public func timeline(for configuration: Intent, in context: Context) async throws -> Timeline<Entry> {
        guard AsyncBridge.bridging != ObjectIdentifier(Self.self) else {
            throw TimelineProviderError.missing(
                "getTimeline(for:in:completion:) or timeline(for:in:)", in: Self.self)
        }
        return try await AsyncBridge.$bridging.withValue(nil) {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<CallLocal<Timeline<Entry>>, any Error>) in
                let once = ResumeOnce(continuation)
                var inner = context
                inner.failureHandler = { error in once.resume(with: .failure(error)) }
                getTimeline(for: configuration, in: inner) { once.resume(with: .success($0)) }
            }.value
        }
    }
}

/// A provider of a widget people configure with an App Intent (WidgetKit's
/// `AppIntentTimelineProvider`, Xcode's widget template).
///
/// ```swift
/// struct Provider: AppIntentTimelineProvider {
///     func placeholder(in context: Context) -> SimpleEntry {
///         SimpleEntry(date: context.date, configuration: ConfigurationAppIntent())
///     }
///     func snapshot(for configuration: ConfigurationAppIntent, in context: Context) async -> SimpleEntry {
///         SimpleEntry(date: context.date, configuration: configuration)
///     }
///     func timeline(for configuration: ConfigurationAppIntent, in context: Context) async -> Timeline<SimpleEntry> {
///         let entries = (0..<5).map { hour in
///             SimpleEntry(date: context.date.addingTimeInterval(Double(hour) * 3600), configuration: configuration)
///         }
///         return Timeline(entries: entries, policy: .atEnd)
///     }
/// }
/// ```
///
/// The intent's `@Parameter`s are the kind's parameters; each call gets the
/// instance's values in `configuration`.
///
/// Deadline: snapshot and timeline run in a `Task` that is cancelled shortly
/// before the call's deadline (``TimelineProviderContext/timeout``, less a
/// tenth of it, at most 0.5 s, so that an answer still reaches the host).
/// `Task.sleep` and `URLSession` then throw `CancellationError`; a provider
/// that checks `Task.isCancelled` may answer with what it has. A provider
/// that throws, or lets the cancellation error escape, fails the call.
/// `snapshot` and `timeline` may be `async` without `throws`, as in
/// WidgetKit.
public protocol AppIntentTimelineProvider: SendableMetatype {
    /// The type of the provider's entries.
    associatedtype Entry: TimelineEntry
    /// The configuration intent.
    associatedtype Intent: WidgetConfigurationIntent
    /// The context passed to every entry point.
    typealias Context = TimelineProviderContext

    /// An entry for a placeholder view, returned at once. Called
    /// synchronously.
    func placeholder(in context: Context) -> Entry

    /// The entry for the widget's current state.
    func snapshot(for configuration: Intent, in context: Context) async throws -> Entry

    /// The entries for now and the future, and when to ask again.
    func timeline(for configuration: Intent, in context: Context) async throws -> Timeline<Entry>

    /// Configurations to suggest where people cannot configure, e.g. on a
    /// watch (none by default).
    func recommendations() -> [AppIntentRecommendation<Intent>]
}

extension AppIntentTimelineProvider {
    public func recommendations() -> [AppIntentRecommendation<Intent>] { [] }
}

/// Runs a provider's `async` entry point in a task with the call's deadline.
enum CallTask {
    /// Seconds before the deadline at which the task is cancelled: a tenth
    /// of the timeout, at most 0.5 s.
    static func cancellationDelay(timeout: TimeInterval) -> TimeInterval? {
        guard timeout > 0, timeout.isFinite else { return nil }
        return timeout - min(timeout / 10, 0.5)
    }

    /// Runs `operation` in a `Task`, cancels it at the deadline of
    /// `context` (see ``cancellationDelay(timeout:)``) and passes its
    /// result to `completion`. A `CancellationError` after the deadline is
    /// reported as ``TimelineProviderError/cancelled``.
    static func run<Value>(
        context: TimelineProviderContext, _ operation: @escaping @Sendable () async throws -> Value,
        completion: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) {
        let delay = cancellationDelay(timeout: context.timeout)
        // The value goes from this task to `completion` only (CallLocal).
        let work = Task { CallLocal(try await operation()) }
        Task {
            let watchdog: Task<Void, Never>? = delay.map { delay in
                Task {
                    do { try await Task.sleep(for: .seconds(delay)) } catch { return }
                    work.cancel()
                }
            }
            let result = await work.result.map(\.value)
            watchdog?.cancel()
            if case .failure(let error) = result, error is CancellationError, let delay {
                completion(
                    .failure(
                        TimelineProviderError(
                            code: TimelineProviderError.cancelled,
                            message:
                                "cancelled at the call's deadline (\(delay) s of \(context.timeout) s) and answered with CancellationError: check Task.isCancelled and return what you have"
                        )))
            } else {
                completion(result)
            }
        }
    }
}

/// A value of one call handed to that call's task: an ``INIntent``, an entry
/// or a provider need not be `Sendable`, but only the call's task uses them
/// (the host calls a plugin process one entry point at a time).
struct CallLocal<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
