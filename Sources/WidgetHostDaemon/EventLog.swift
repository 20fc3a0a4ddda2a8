import Synchronization
import WidgetHostControl
import WidgetHostJSON
import WidgetHostModel
import WidgetHostStore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The daemon's event stream: one log (the state database's `event_log`,
/// where every change the daemon commits writes its event in the same
/// transaction), one event type (``WatchEvent``), and subscriptions to it.
/// The control socket's `watch` is one consumer; the web dashboard, in the
/// same process, is another:
///
/// ```swift
/// let subscription = try daemon.events.subscribe(after: lastEventID)
/// if let gap = subscription.start.gap { resync(gap) }   // take a fresh status
/// while let batch = try await subscription.next() { for event in batch { send(event) } }
/// ```
///
/// Ids are the log's row ids: they only grow and are never reused. The loop
/// publishes what was committed (``publishCommitted()``) once per turn, so a
/// subscriber never sees an event whose change is not on disk. Each
/// subscription buffers at most ``maximumQueued`` events that its consumer
/// has not taken; past that it ends (``EventSubscription/Ended/overflow``)
/// instead of holding the daemon's memory: a slow consumer never slows the
/// loop, it loses its stream and resumes with its last id.
public final class EventLog: Sendable {
    /// Events a subscription may hold untaken before it is ended (20,000 by default).
    public let maximumQueued: Int
    let store: StateStore
    private let state: Mutex<State>

    private struct State {
        /// The newest event handed to subscribers.
        var published: Int64
        var subscribers: [ObjectIdentifier: EventSubscription] = [:]
    }

    /// A log over `store`'s events; what is stored now counts as published.
    init(store: StateStore, maximumQueued: Int = 20_000) {
        self.store = store
        self.maximumQueued = maximumQueued
        self.state = Mutex(State(published: (try? store.eventLogWindow().newestID) ?? 0))
    }

    /// How much of the log is kept, in words.
    var retention: String {
        let age = store.retention.maximumAge
        return
            "the newest \(store.retention.maximumRows) events\(age.isFinite ? ", none older than \(Timestamp.duration(age))" : "")"
    }

    /// Starts a subscription: the events after `lastEventID` that are still
    /// kept (replayed from the database), then every new one. Without
    /// `lastEventID`, new events only. `instances`: only their events.
    public func subscribe(after lastEventID: Int64? = nil, instances: Set<String>? = nil) throws
        -> EventSubscription
    {
        // Registered under the lock with the newest published id: what is
        // published later arrives live, what was published before is replayed.
        let window = try store.eventLogWindow()
        return state.withLock { state in
            let through = state.published
            var gap: WatchGap?
            var from = lastEventID ?? through
            if let last = lastEventID, window.isGap(after: last) {
                if last > window.newestID {
                    gap = WatchGap(
                        after: last, reason: "unknown",
                        message:
                            "event \(last) was never written by this daemon (its newest is \(window.newestID)): the state was reset or is another; take a fresh status"
                    )
                    from = through
                } else {
                    let oldest = window.oldestID ?? (window.newestID + 1)
                    gap = WatchGap(
                        after: last, reason: "pruned",
                        message:
                            "events \(last + 1)-\(oldest - 1) are no longer kept (\(retention)); take a fresh status, the stream goes on from \(oldest)"
                    )
                    from = oldest - 1
                }
            }
            let subscription = EventSubscription(
                log: self, replayAfter: min(from, through), replayThrough: through, floor: from, instances: instances,
                start: WatchStart(lastEventId: through, oldestEventId: window.oldestID, gap: gap, retention: retention))
            state.subscribers[ObjectIdentifier(subscription)] = subscription
            return subscription
        }
    }

    /// Hands the events committed since the last call to every subscriber;
    /// returns them. Called by the daemon's loop after its commits.
    @discardableResult
    func publishCommitted() -> [WatchEvent] {
        let after = state.withLock { $0.published }
        var rows: [LoggedEvent] = []
        while true {
            guard let more = try? store.events(after: rows.last?.id ?? after, limit: 1000), !more.isEmpty else {
                break
            }
            rows += more
            if more.count < 1000 { break }
        }
        guard let newest = rows.last?.id else { return [] }
        let subscribers = state.withLock { state in
            state.published = newest
            return Array(state.subscribers.values)
        }
        // The details are decoded for subscribers only: the loop itself
        // reads the types and instances (with 1,000 reloads a second and no
        // one watching, decoding them was 5 % of the loop).
        let events = rows.map { Self.watchEvent($0, details: !subscribers.isEmpty) }
        for subscriber in subscribers { subscriber.receive(events) }
        return events
    }

    func remove(_ subscription: EventSubscription) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: ObjectIdentifier(subscription)) }
    }

    /// Subscriptions open now.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// A stored event as the stream shows it; without `details`, its
    /// details are left out (not decoded).
    static func watchEvent(_ row: LoggedEvent, details: Bool = true) -> WatchEvent {
        var decoded: WatchEventDetails?
        if details, let text = row.data, (try? JSONNesting.check(text)) != nil {
            decoded = try? JSONDecoder().decode(WatchEventDetails.self, from: Data(text.utf8))
        }
        return WatchEvent(
            id: row.id, time: row.time, type: row.kind, instance: row.instanceID, message: row.message,
            details: decoded)
    }

    /// The JSON text of `details`, for the `data` column, as `JSONEncoder`
    /// with `.sortedKeys` writes it (by ``JSONTextEncoder``: every reload
    /// writes one, and Foundation's encoder was 5 % of the loop). A number
    /// that is not finite is left out rather than losing the details.
    static func data(_ details: WatchEventDetails) -> String? {
        var finite = details
        for number in [\WatchEventDetails.entryDate, \.nextEntryDate, \.relevance]
        where finite[keyPath: number]?.isFinite == false {
            finite[keyPath: number] = nil
        }
        return (try? JSONTextEncoder.encode(finite)).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// One consumer's view of the ``EventLog``: a replay from the database, then
/// live events, in id order, each once.
public final class EventSubscription: Sendable {
    /// Where the stream starts, and the gap before it if events were lost.
    public let start: WatchStart
    /// Only the events of these instances (nil: every event).
    public let instances: Set<String>?
    private let log: EventLog
    private let queue: Mutex<Queue>
    private let doorbell: AsyncStream<Void>
    private let ring: AsyncStream<Void>.Continuation

    /// Events it may hold untaken before it ends (``Ended/overflow``).
    public var maximumQueued: Int { log.maximumQueued }

    /// Why a subscription ended.
    public enum Ended: Error, Sendable, Hashable {
        /// The consumer left more than ``EventLog/maximumQueued`` events untaken.
        case overflow
        /// ``cancel()`` was called, or the daemon stopped.
        case cancelled
        /// The state database could not be read for the replay.
        case storage(String)
    }

    private struct Queue {
        var replayAfter: Int64
        var replayThrough: Int64
        /// Live events up to this id were seen by the client already.
        var floor: Int64
        var live: [WatchEvent] = []
        var ended: Ended?
    }

    init(
        log: EventLog, replayAfter: Int64, replayThrough: Int64, floor: Int64, instances: Set<String>?,
        start: WatchStart
    ) {
        self.log = log
        self.start = start
        self.instances = instances
        self.queue = Mutex(Queue(replayAfter: replayAfter, replayThrough: replayThrough, floor: floor))
        (doorbell, ring) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        if replayAfter < replayThrough { ring.yield() }
    }

    private func wanted(_ event: WatchEvent) -> Bool {
        guard let instances else { return true }
        return event.instance.map(instances.contains) ?? false
    }

    func receive(_ events: [WatchEvent]) {
        let overflowed = queue.withLock { queue -> Bool in
            guard queue.ended == nil else { return false }
            queue.live += events.filter { $0.id > queue.floor && wanted($0) }
            if queue.live.count > log.maximumQueued {
                queue.live = []
                queue.ended = .overflow
                return true
            }
            return false
        }
        if overflowed { log.remove(self) }
        ring.yield()
    }

    /// Why the subscription ended, once it has and every event before the end was taken.
    public var ended: Ended? {
        queue.withLock { $0.live.isEmpty && $0.replayAfter >= $0.replayThrough ? $0.ended : nil }
    }

    /// The next events, at most `limit`, without waiting: the replay first
    /// (read from the database in order), then live events. Empty when none
    /// are waiting (see ``ended``).
    public func take(limit: Int = 500) -> [WatchEvent] {
        let replay = queue.withLock { queue -> (after: Int64, through: Int64)? in
            queue.replayAfter < queue.replayThrough ? (queue.replayAfter, queue.replayThrough) : nil
        }
        if let replay {
            do {
                let rows = try log.store.events(after: replay.after, through: replay.through, limit: limit)
                queue.withLock { queue in
                    queue.replayAfter = rows.last?.id ?? replay.through
                }
                let events = rows.map { EventLog.watchEvent($0) }.filter(wanted)
                if !events.isEmpty || rows.isEmpty { return events }
                return take(limit: limit)
            } catch {
                queue.withLock { queue in
                    queue.replayAfter = queue.replayThrough
                    queue.live = []
                    queue.ended = .storage("\(error)")
                }
                log.remove(self)
                return []
            }
        }
        return queue.withLock { queue in
            let count = min(limit, queue.live.count)
            defer { queue.live.removeFirst(count) }
            return Array(queue.live.prefix(count))
        }
    }

    /// Waits for the next events (for consumers on other threads, such as
    /// the web dashboard). Returns nil once cancelled; throws ``Ended`` when
    /// the subscription ended for another reason.
    public func next(limit: Int = 500) async throws(Ended) -> [WatchEvent]? {
        while true {
            let events = take(limit: limit)
            if !events.isEmpty { return events }
            if let ended {
                if ended == .cancelled { return nil }
                throw ended
            }
            for await _ in doorbell { break }
            if Task.isCancelled { return nil }
        }
    }

    /// Ends the subscription (a consumer that leaves).
    public func cancel() {
        queue.withLock { queue in
            queue.live = []
            queue.replayAfter = queue.replayThrough
            queue.ended = .cancelled
        }
        log.remove(self)
        ring.yield()
    }
}
