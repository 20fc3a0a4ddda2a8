import GRDB

/// Where a resumed watch can start: the events after an id, or the gap
/// that makes that impossible.
public struct EventLogWindow: Sendable, Hashable {
    /// The oldest event still kept, nil when the log is empty.
    public var oldestID: Int64?
    /// The newest event ever written (`sqlite_sequence`: ids are never
    /// reused, even after pruning empties the log), 0 before the first.
    public var newestID: Int64

    public init(oldestID: Int64?, newestID: Int64) {
        self.oldestID = oldestID
        self.newestID = newestID
    }

    /// Whether a client that saw every event up to `lastID` missed some
    /// that are no longer kept (pruned), or names an id this log never
    /// wrote (a different or reset state file).
    public func isGap(after lastID: Int64) -> Bool {
        if lastID > newestID { return true }
        guard let oldestID else { return lastID < newestID }
        return lastID + 1 < oldestID
    }
}

extension StateStore {
    /// The kept range of the event log.
    public func eventLogWindow() throws -> EventLogWindow {
        try writer.read { db in try StateTransaction.eventLogWindow(db) }
    }

    /// The events with `after < id <= through`, oldest first, at most `limit`.
    public func events(after: Int64, through: Int64 = .max, limit: Int = 1000) throws -> [LoggedEvent] {
        try writer.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM event_log WHERE id > ? AND id <= ? ORDER BY id LIMIT ?",
                arguments: [after, through, limit]
            ).map(StateTransaction.loggedEvent)
        }
    }

    /// The instances placed at run time, in placement order.
    public func runtimeInstances() throws -> [RuntimeInstanceRecord] {
        try writer.read { db in try StateTransaction.runtimeInstances(db) }
    }

    /// Every kind's push token.
    public func pushTokens() throws -> [String: String] {
        try writer.read { db in
            var tokens: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT kind, token FROM push_token") {
                tokens[row["kind"]] = row["token"]
            }
            return tokens
        }
    }
}

extension StateTransaction {
    static func eventLogWindow(_ db: Database) throws -> EventLogWindow {
        let oldest = try Int64.fetchOne(db, sql: "SELECT MIN(id) FROM event_log")
        let sequence = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'event_log'")
        let newest = try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM event_log")
        return EventLogWindow(oldestID: oldest, newestID: max(sequence ?? 0, newest ?? 0))
    }

    static func loggedEvent(_ row: Row) -> LoggedEvent {
        LoggedEvent(
            id: row["id"], time: row["time"], instanceID: row["instanceID"], kind: row["kind"],
            message: row["message"], data: row["data"])
    }

    // MARK: Runtime instances

    static func runtimeInstances(_ db: Database) throws -> [RuntimeInstanceRecord] {
        try Row.fetchAll(db, sql: "SELECT * FROM runtime_instance ORDER BY position").map { row in
            let id: String = row["id"]
            var record = try decode(RuntimeInstanceRecord.self, row["spec"], table: "runtime_instance", key: id)
            record.id = id
            return record
        }
    }

    /// Inserts or replaces a runtime instance (a new one goes last).
    public func saveRuntimeInstance(_ record: RuntimeInstanceRecord, at time: Double) throws {
        let spec = try Self.encode(record)
        if try Bool.fetchOne(db, sql: "SELECT 1 FROM runtime_instance WHERE id = ?", arguments: [record.id]) == true {
            try db.execute(sql: "UPDATE runtime_instance SET spec = ? WHERE id = ?", arguments: [spec, record.id])
        } else {
            let position = try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(position), -1) + 1 FROM runtime_instance")
            try db.execute(
                sql: "INSERT INTO runtime_instance (id, position, spec, addedAt) VALUES (?, ?, ?, ?)",
                arguments: [record.id, position ?? 0, spec, time])
        }
    }

    /// Removes a runtime instance; true if there was one.
    @discardableResult
    public func removeRuntimeInstance(_ id: String) throws -> Bool {
        try db.execute(sql: "DELETE FROM runtime_instance WHERE id = ?", arguments: [id])
        return db.changesCount > 0
    }

    // MARK: Push tokens

    /// Stores `token` as `kind`'s push token.
    public func savePushToken(_ token: String, kind: String, at time: Double) throws {
        try db.execute(
            sql: "INSERT INTO push_token (kind, token, createdAt) VALUES (?, ?, ?)",
            arguments: [kind, token, time])
    }
}

/// An instance placed at run time, as stored: what `instances.add` was given.
public struct RuntimeInstanceRecord: Sendable, Hashable, Codable {
    public var id: String
    public var plugin: String
    public var kind: String
    /// WidgetKit's family name (`systemSmall`).
    public var family: String
    public var app: String
    /// Parameter name → JSON text of its value.
    public var configuration: [String: String]
    public var visible: Bool
    public var usesLocation: Bool
    public var timeout: Double?

    public init(
        id: String, plugin: String, kind: String, family: String, app: String, configuration: [String: String],
        visible: Bool, usesLocation: Bool, timeout: Double?
    ) {
        self.id = id
        self.plugin = plugin
        self.kind = kind
        self.family = family
        self.app = app
        self.configuration = configuration
        self.visible = visible
        self.usesLocation = usesLocation
        self.timeout = timeout
    }
}
