import Foundation
import GRDB
import Synchronization
import WidgetHostModel
import WidgetHostScheduler

/// Errors of the state store beyond GRDB's own.
public enum StateStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stored value could not be read back (a corrupt or foreign row).
    case corruptRow(table: String, key: String, detail: String)
    /// The file was written by a newer widgethost (migrations this build does not know).
    case newerSchema(path: String, unknown: [String])

    public var description: String {
        switch self {
        case .corruptRow(let table, let key, let detail): "corrupt row in \(table) (\(key)): \(detail)"
        case .newerSchema(let path, let unknown):
            "\(path) was written by a newer widgethost (schema migrations \(unknown.joined(separator: ", ")) unknown to this build, which knows \(Schema.migrator.migrations.joined(separator: ", "))); run the newer widgethost, or move the file away to start with an empty state"
        }
    }

    /// Whether `error` is the storage failing rather than the data being
    /// wrong: the disk is full, the file system is read-only, an I/O error,
    /// the file cannot be opened. Writes may succeed again later.
    public static func isStorageFault(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        switch error.resultCode {
        case .SQLITE_FULL, .SQLITE_IOERR, .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_NOMEM, .SQLITE_BUSY,
            .SQLITE_PROTOCOL, .SQLITE_NOLFS:
            return true
        default: return false
        }
    }
}

/// The daemon's durable state: SQLite through GRDB, in WAL mode, with a
/// versioned schema (docs/state.md).
///
/// The scheduler (``ReloadScheduler``) stays the in-memory source of truth;
/// after each change the daemon writes what changed here, each write one
/// transaction, so that a `kill -9` leaves either the state before it or the
/// state after it. On start, ``loadSchedulerState()`` rebuilds the
/// ``SchedulerState`` and ``RestartPlanner`` reconciles it with the clock.
///
/// Thread-safe: GRDB serializes writes; reads may run concurrently.
public final class StateStore: Sendable {
    /// The database file, or nil for an in-memory store.
    public let path: String?
    public let retention: EventLogRetention
    let writer: any DatabaseWriter
    /// The quarantine entries as last read, until a transaction of this
    /// store changes them (``quarantined()`` is asked on every `status`).
    private let quarantineCache = Mutex<[QuarantineEntry]?>(nil)
    /// What this store's transactions wrote of each instance's ledgers and failure.
    let written = WrittenParts()
    /// The JSON texts of request triggers and charges, encoded once.
    let texts = ColumnTexts()

    /// The migrations this build knows, in order.
    public static let knownMigrations: [String] = Schema.migrator.migrations

    /// Opens (creating it and its parent directories if needed) the store at
    /// `path`, in WAL mode with `synchronous=FULL`, and runs the migrations
    /// it lacks.
    ///
    /// The file is created owner-only (0600; SQLite gives its `-wal` and
    /// `-shm` files the same mode) and an existing one is made so. A file
    /// written by a newer build (a migration this one does not know) is
    /// refused with ``StateStoreError/newerSchema(path:unknown:)``, untouched.
    public init(path: String, retention: EventLogRetention = .standard) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if fd >= 0 {
            var info = stat()
            if fstat(fd, &info) == 0 && info.st_mode & 0o077 != 0 { fchmod(fd, 0o600) }
            close(fd)
        }
        for suffix in ["-wal", "-shm"] where access(path + suffix, F_OK) == 0 { chmod(path + suffix, 0o600) }
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.prepareDatabase { db in
            // WAL (DatabasePool sets it) + FULL: a committed transaction is on
            // disk when `write` returns, even across a power cut.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        configuration.busyMode = .timeout(10)
        self.path = path
        self.retention = retention
        self.writer = try DatabasePool(path: path, configuration: configuration)
        let unknown = try writer.read { db -> [String] in
            guard try db.tableExists("grdb_migrations") else { return [] }
            let applied = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
            return applied.filter { !Schema.migrator.migrations.contains($0) }
        }
        guard unknown.isEmpty else { throw StateStoreError.newerSchema(path: path, unknown: unknown) }
        try Schema.migrator.migrate(writer)
    }

    private init(writer: any DatabaseWriter, retention: EventLogRetention) throws {
        self.path = nil
        self.retention = retention
        self.writer = writer
        try Schema.migrator.migrate(writer)
    }

    /// A store in memory (no WAL: SQLite keeps an in-memory journal), for tests.
    public static func inMemory(retention: EventLogRetention = .standard) throws -> StateStore {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        return try StateStore(writer: DatabaseQueue(configuration: configuration), retention: retention)
    }

    // MARK: Schema

    /// The names of the migrations applied to this database, in order.
    public func appliedMigrations() throws -> [String] {
        try writer.read { db in try Schema.migrator.appliedMigrations(db) }
    }

    /// `PRAGMA journal_mode` (`wal` for a store opened at a path).
    public func journalMode() throws -> String {
        try writer.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "" }
    }

    /// `PRAGMA integrity_check` and `PRAGMA foreign_key_check` are both clean.
    public func checkIntegrity() throws -> Bool {
        try writer.read { db in
            let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
            let foreign = try Row.fetchAll(db, sql: "PRAGMA foreign_key_check")
            return integrity == ["ok"] && foreign.isEmpty
        }
    }

    /// Runs `body` in one write transaction: all of it is committed, or (if it
    /// throws) none of it. For a daemon change that spans several calls.
    public func transaction<T>(_ body: (StateTransaction) throws -> T) throws -> T {
        var changedQuarantine = false
        defer { if changedQuarantine { quarantineCache.withLock { $0 = nil } } }
        // As `writer.write`, with what the transaction wrote of the
        // instances' ledgers and failures recorded once it committed, before
        // another transaction can start.
        return try writer.writeWithoutTransaction { db in
            var result: T?
            var changes = WrittenParts.Changes()
            try db.inTransaction {
                let tx = StateTransaction(db: db, retention: retention, written: written, texts: texts)
                defer { changedQuarantine = tx.changedQuarantine }
                result = try body(tx)
                try tx.finish()
                changes = tx.writtenChanges
                return .commit
            }
            written.commit(changes)
            return result!
        }
    }

    // MARK: Whole state

    /// Rebuilds the whole scheduler state from the tables; a row that fails
    /// its checks throws ``StateStoreError/corruptRow(table:key:detail:)``.
    public func loadSchedulerState() throws -> SchedulerState {
        try writer.read { db in try StateTransaction.load(db) }
    }

    /// Rebuilds the scheduler state as the daemon does at start: a row that
    /// fails its checks (a time outside 1970-9999, a count that is not a
    /// whole number, a value of the wrong type) is moved, in the same
    /// transaction, to the `rejected_row` table with what was wrong, and left
    /// out (an instance with everything about it). The daemon logs each and
    /// starts; a still-configured instance set aside starts afresh.
    ///
    /// ```swift
    /// let (state, setAside) = try store.loadSchedulerStateSettingAsideBadRows(at: now)
    /// for row in setAside { logger.error("state: set aside \(row)") }
    /// ```
    public func loadSchedulerStateSettingAsideBadRows(at time: Double) throws -> (
        state: SchedulerState, setAside: [RejectedRow]
    ) {
        try writer.write { db in
            var rejected: [RejectedRow] = []
            let state = try StateTransaction.load(db, strict: false, rejected: &rejected)
            for row in rejected {
                try StateTransaction(db: db, retention: retention, written: written, texts: texts).setAside(
                    row, at: time)
            }
            written.forgetAll()
            return (state, rejected)
        }
    }

    /// The rows set aside so far, oldest first.
    public func setAsideRows() throws -> [RejectedRow] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT tableName, key, detail FROM rejected_row ORDER BY id").map {
                RejectedRow(table: $0["tableName"], key: $0["key"], detail: $0["detail"])
            }
        }
    }

    /// Checkpoints the WAL into the database and truncates it (tests use it
    /// so that the next write must grow the files).
    func checkpoint() throws {
        try writer.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
    }

    /// Runs `sql` as is, in one transaction (tests use it to damage rows).
    func execute(sql: String) throws {
        written.forgetAll()
        try writer.write { db in try db.execute(sql: sql) }
    }

    /// Replaces everything the scheduler state covers with `state`, in one
    /// transaction (instances, timelines, ledgers, failures, apps, `now`).
    /// Quarantine, the event log and the clock sample are kept.
    public func saveSchedulerState(_ state: SchedulerState) throws {
        try transaction { try $0.replaceSchedulerState(state) }
    }

    /// Makes the stored scheduler state `state`, writing only what differs
    /// from `stored` (what the tables hold now), in one transaction
    /// (``StateTransaction/replaceSchedulerState(_:storedAs:)``).
    public func saveSchedulerState(_ state: SchedulerState, storedAs stored: SchedulerState) throws {
        try transaction { try $0.replaceSchedulerState(state, storedAs: stored) }
    }

    // MARK: Granular writes (each one transaction)

    /// Inserts or replaces one instance with its timeline, ledger and failure.
    /// A new instance goes after every existing one.
    public func upsert(_ instance: InstanceState) throws {
        try transaction { try $0.upsert(instance) }
    }

    /// Removes an instance and everything about it (cascade); logs it.
    @discardableResult
    public func removeInstance(_ id: String, at time: Double) throws -> Bool {
        try transaction { tx in
            let removed = try tx.removeInstance(id)
            if removed { try tx.appendEvent(time: time, instanceID: id, kind: "removed", message: "instance removed") }
            return removed
        }
    }

    /// A reload was issued: the instance (ledger row, last reload, in flight),
    /// the host-wide free ledger and an event, in one transaction.
    public func recordReload(_ decision: ReloadDecision, instance: InstanceState, freeLedger: RollingLedger) throws {
        try transaction { tx in
            try tx.upsert(instance)
            try tx.replaceFreeLedger(freeLedger)
            try tx.observe(decision.time)
            try tx.appendEvent(
                time: decision.time, instanceID: decision.instanceID, kind: "reload", message: decision.description)
        }
    }

    /// A reload ended: the instance (new timeline, or failure and backoff) and
    /// an event, in one transaction.
    public func recordCompletion(
        instanceID: String, outcome: ReloadOutcome, instance: InstanceState, at time: Double
    ) throws {
        try transaction { tx in
            try tx.upsert(instance)
            try tx.observe(time)
            let message: String
            let kind: String
            switch outcome {
            case .success(let timeline):
                kind = "timeline"
                message = "\(timeline.entries.count) entries, policy \(timeline.policy)"
            case .failure(let reason):
                kind = "failure"
                message = "\(reason); \(instance.consecutiveFailures) in a row"
            case .timedOut:
                kind = "failure"
                message = "timed out; \(instance.consecutiveFailures) in a row"
            case .notCalled(let reason, _):
                kind = "held"
                message = "not called: \(reason); not charged"
            }
            try tx.appendEvent(time: time, instanceID: instanceID, kind: kind, message: message)
        }
    }

    /// The foreground and session state of the apps (replaced whole).
    public func saveApps(_ apps: [String: AppState]) throws {
        try transaction { try $0.replaceApps(apps) }
    }

    // MARK: Quarantine

    /// Quarantines the file (replacing any entry for another identity of the
    /// same path) and logs it. Returns the entry stored.
    @discardableResult
    public func quarantine(_ file: PluginFileIdentity, reason: String, crashCount: Int, at time: Double) throws
        -> QuarantineEntry
    {
        try transaction { tx in
            let entry = try tx.quarantine(file, reason: reason, crashCount: crashCount, at: time)
            try tx.appendEvent(
                time: time, instanceID: nil, kind: "quarantine",
                message: "\(file.path) (\(file.size) bytes): \(reason), \(entry.crashCount) crashes")
            return entry
        }
    }

    /// Whether exactly this file (path, size and mtime) is quarantined.
    public func isQuarantined(_ file: PluginFileIdentity) throws -> Bool {
        try quarantineEntry(file) != nil
    }

    public func quarantineEntry(_ file: PluginFileIdentity) throws -> QuarantineEntry? {
        try writer.read { db in try StateTransaction.quarantineEntry(db, file) }
    }

    /// Every quarantine entry, by path (from memory once read: this store's
    /// writes keep it current).
    public func quarantined() throws -> [QuarantineEntry] {
        if let cached = quarantineCache.withLock({ $0 }) { return cached }
        let entries = try writer.read { db in try StateTransaction.quarantined(db) }
        quarantineCache.withLock { $0 = entries }
        return entries
    }

    /// Lifts the quarantine of every identity of `path`; logs it.
    @discardableResult
    public func unquarantine(path: String, at time: Double) throws -> Bool {
        try transaction { tx in
            let lifted = try tx.unquarantine(path: path)
            if lifted { try tx.appendEvent(time: time, instanceID: nil, kind: "unquarantine", message: path) }
            return lifted
        }
    }

    // MARK: Event log

    /// Appends an event and prunes the log to the retention bound.
    public func appendEvent(time: Double, instanceID: String? = nil, kind: String, message: String) throws {
        try transaction { try $0.appendEvent(time: time, instanceID: instanceID, kind: kind, message: message) }
    }

    /// The newest `limit` events, oldest first.
    public func recentEvents(limit: Int = 100, instanceID: String? = nil) throws -> [LoggedEvent] {
        try writer.read { db in try StateTransaction.recentEvents(db, limit: limit, instanceID: instanceID) }
    }

    /// Rows in the event log.
    public func eventCount() throws -> Int {
        try writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM event_log") ?? 0 }
    }

    /// Prunes the log to the retention bound as of `now` (age measured from
    /// `now`). Returns the rows deleted.
    @discardableResult
    public func pruneEventLog(now: Double) throws -> Int {
        try transaction { try $0.pruneEventLog(now: now) }
    }

    // MARK: Clock

    /// The last clock sample recorded, if any.
    public func lastClockSample() throws -> ClockSample? {
        try writer.read { db in try StateTransaction.clockSample(db) }
    }

    /// Records the host's clocks (call periodically and at shutdown; the
    /// next start compares against it).
    public func recordClockSample(_ sample: ClockSample) throws {
        try transaction { try $0.recordClockSample(sample) }
    }
}
