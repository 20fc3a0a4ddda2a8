import GRDB
import WidgetHostModel

/// The store's schema, as append-only named migrations.
///
/// Policy (docs/state.md): a migration that has shipped is never edited or
/// removed; a schema change is a new migration appended at the end ("v2", ...).
/// GRDB records the applied names in `grdb_migrations`, so an old database is
/// brought up to date by running only the migrations it lacks.
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            // Key/value facts about the store itself: the last wall-clock time
            // seen, the boot it was seen in and that boot's monotonic time
            // (clock-jump detection), the scheduler's `now`.
            try db.create(table: "meta") { t in
                t.primaryKey("key", .text)
                t.column("value", .text).notNull()
            }
            // One row per placed widget: its configuration and the scalar
            // parts of `InstanceState`.
            try db.create(table: "instance") { t in
                t.primaryKey("id", .text)
                t.column("position", .integer).notNull()  // insertion order
                t.column("plugin", .text).notNull()
                t.column("kind", .text).notNull()
                t.column("family", .integer).notNull()  // WidgetFamily raw value (the ABI bit)
                t.column("configuration", .text).notNull()  // JSON text
                t.column("app", .text).notNull()
                t.column("visible", .boolean).notNull()
                t.column("usesLocation", .boolean).notNull()
                t.column("addedAt", .double).notNull()
                t.column("visibleSince", .double)
                t.column("viewHour", .integer).notNull()  // ViewHistory.hour
                t.column("viewMask", .integer).notNull()  // ViewHistory.mask
                t.column("timelineReceivedAt", .double)
                t.column("policyDue", .double)
                t.column("lastReloadAt", .double)
                t.column("locationChangeAt", .double)
                t.column("requestTrigger", .text)  // JSON of ReloadTrigger
                t.column("requestCharge", .text)  // JSON of ReloadCharge
                t.column("requestedAt", .double)
                t.column("inFlight", .text)  // JSON of InFlightReload
                t.column("consecutiveFailures", .integer).notNull().defaults(to: 0)
                t.column("backoffUntil", .double)
            }
            try db.create(index: "instance_on_plugin", on: "instance", columns: ["plugin", "kind"])
            // The last good timeline of an instance.
            try db.create(table: "timeline") { t in
                t.primaryKey("instanceID", .text).references("instance", onDelete: .cascade)
                t.column("policy", .text).notNull()  // atEnd | after | never
                t.column("policyDate", .double)  // for `after`
                t.column("entries", .text).notNull()  // JSON array of EntryRecord; a blob since v5 (EntriesBlob)
            }
            // Counted reloads (the rolling 24 h budget).
            try db.create(table: "reload_ledger") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("instanceID", .text).notNull().references("instance", onDelete: .cascade)
                t.column("time", .double).notNull()
            }
            try db.create(
                index: "reload_ledger_on_instance_time", on: "reload_ledger", columns: ["instanceID", "time"])
            // The host-wide ledger of capped free reloads.
            try db.create(table: "free_ledger") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("time", .double).notNull().indexed()
            }
            // The current failure streak of an instance (gone after a success).
            try db.create(table: "failure") { t in
                t.primaryKey("instanceID", .text).references("instance", onDelete: .cascade)
                t.column("time", .double).notNull()
                t.column("reason", .text).notNull()
                t.column("consecutive", .integer).notNull()
                t.column("retryAt", .double).notNull()
            }
            try db.create(table: "app_state") { t in
                t.primaryKey("app", .text)
                t.column("foreground", .boolean).notNull()
            }
            try db.create(table: "app_session") { t in
                t.column("app", .text).notNull().references("app_state", onDelete: .cascade)
                t.column("kind", .text).notNull()  // SessionKind raw value
                t.primaryKey(["app", "kind"])
            }
            // Plugins that crashed the host side too often, keyed by the file's
            // identity: a rebuilt file (new size or mtime) is a new plugin.
            try db.create(table: "quarantine") { t in
                t.column("path", .text).notNull()
                t.column("size", .integer).notNull()
                t.column("mtime", .integer).notNull()  // nanoseconds since the epoch
                t.column("reason", .text).notNull()
                t.column("since", .double).notNull()
                t.column("crashCount", .integer).notNull()
                t.primaryKey(["path", "size", "mtime"])
            }
            // What happened, newest last; bounded (EventLogRetention).
            try db.create(table: "event_log") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("time", .double).notNull().indexed()
                t.column("instanceID", .text)  // no foreign key: the log outlives instances
                t.column("kind", .text).notNull()
                t.column("message", .text).notNull()
            }
        }
        migrator.registerMigration("v2") { db in
            // Rows that failed their checks at start (a time beyond 9999, a
            // count that is not a whole number, a value of the wrong type):
            // moved here with what was wrong, instead of crashing the daemon
            // at every start. Kept for inspection; never read back.
            try db.create(table: "rejected_row") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("time", .double).notNull()  // when it was set aside
                t.column("tableName", .text).notNull()
                t.column("key", .text).notNull()
                t.column("detail", .text).notNull()
                t.column("content", .text).notNull()  // the row (and its instance's rows), as JSON
            }
        }
        migrator.registerMigration("v3") { db in
            // Control protocol v2 (docs/control-protocol.md).
            // The watch stream's structured details of an event (JSON object
            // of `WatchEventDetails`); null for events without any.
            try db.alter(table: "event_log") { t in t.add(column: "data", .text) }
            // Instances placed at run time (`instances.add`), beside the
            // configuration file's: the spec as given, re-checked at each start.
            try db.create(table: "runtime_instance") { t in
                t.primaryKey("id", .text)
                t.column("position", .integer).notNull()  // placement order
                t.column("spec", .text).notNull()  // JSON of RuntimeInstanceRecord
                t.column("addedAt", .double).notNull()
            }
            // The per-installation push token of each kind (issue 19).
            try db.create(table: "push_token") { t in
                t.primaryKey("kind", .text)
                t.column("token", .text).notNull().unique()
                t.column("createdAt", .double).notNull()
            }
        }
        migrator.registerMigration("v4") { db in
            // Push reloads (the push budget's rolling 24 h window, issue 19),
            // kept like `reload_ledger` so a restart does not refill the budget.
            try db.create(table: "push_ledger") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("instanceID", .text).notNull().references("instance", onDelete: .cascade)
                t.column("time", .double).notNull()
            }
            try db.create(index: "push_ledger_on_instance_time", on: "push_ledger", columns: ["instanceID", "time"])
        }
        migrator.registerMigration("v5") { db in
            // The timelines' entries as blobs (EntriesBlob) instead of JSON
            // text, converted 500 rows at a time; a row that cannot be read
            // stays as it is, and is set aside at load with the reason.
            var last: Int64 = 0
            while true {
                let rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT rowid, entries FROM timeline WHERE rowid > ? AND typeof(entries) = 'text'
                        ORDER BY rowid LIMIT 500
                        """, arguments: [last])
                guard let end = rows.last else { break }
                last = end["rowid"]
                for row in rows {
                    let text: String = row["entries"]
                    guard
                        let entries = StateTransaction.entries(json: text)
                            ?? (try? StateTransaction.decode([EntryRecord].self, text, table: "timeline", key: ""))
                    else { continue }
                    try db.execute(
                        sql: "UPDATE timeline SET entries = ? WHERE rowid = ?",
                        arguments: [EntriesBlob.encode(entries), row["rowid"] as Int64])
                }
            }
        }
        return migrator
    }
}
