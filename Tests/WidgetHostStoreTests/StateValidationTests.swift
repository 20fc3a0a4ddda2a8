import Foundation
import GRDB
import Testing
import WidgetHostModel
import WidgetHostScheduler

@testable import WidgetHostStore

/// What a state file from elsewhere (damaged, edited, written by another
/// version) does to the store: bad rows are set aside, never trapped on; a
/// newer schema is refused; an older one migrates; the file is owner-only.
@Suite struct StateValidationTests {
    func savedDay() throws -> (String, StateStore) {
        let path = temporaryPath("validation")
        let store = try StateStore(path: path)
        try store.saveSchedulerState(simulatedDay().state)
        return (path, store)
    }

    @Test func rowsOutOfBoundsAreSetAsideAndTheRestLoads() throws {
        let (_, store) = try savedDay()
        let before = try store.loadSchedulerState()
        // A policy date from a plugin's after(now + 1e25), an hour index no
        // time has, a count that is not a whole number, a free-ledger time
        // before 1970: each once crashed the daemon at every start.
        try store.execute(sql: "UPDATE timeline SET policy = 'after', policyDate = 1e25 WHERE instanceID = 'w0'")
        try store.execute(sql: "UPDATE instance SET policyDue = 1e300 WHERE id = 'w1'")
        try store.execute(sql: "UPDATE instance SET consecutiveFailures = 1.5 WHERE id = 'w2'")
        try store.execute(sql: "INSERT INTO free_ledger (time) VALUES (-1e30)")
        try store.execute(sql: "UPDATE meta SET value = 'soon' WHERE key = 'schedulerNow'")
        #expect(throws: StateStoreError.self) { try store.loadSchedulerState() }

        let (state, setAside) = try store.loadSchedulerStateSettingAsideBadRows(at: t0)
        #expect(state.instances.map(\.instance.id) == ["w3"])
        #expect(state.instances.first == before.instances.first { $0.instance.id == "w3" })
        #expect(state.freeLedger == before.freeLedger)
        #expect(state.now == nil)
        let described = setAside.map(\.description)
        #expect(described.contains { $0.hasPrefix("timeline row w0: policyDate is 1e+25, expected a time") })
        #expect(described.contains { $0.hasPrefix("instance row w1: policyDue is 1e+300") })
        #expect(described.contains { $0.hasPrefix("instance row w2: consecutiveFailures") })
        #expect(described.contains { $0.hasPrefix("free_ledger row") && $0.contains("-1e+30") })
        #expect(described.contains { $0.hasPrefix("meta row schedulerNow: soon is not a number") })
        // Moved, not lost: the rows are kept with what was wrong; the file now loads strictly.
        #expect(try store.setAsideRows() == setAside)
        #expect(try store.loadSchedulerState() == state)
        #expect(try store.checkIntegrity())
    }

    /// Entries nested deeper than JSONDecoder takes without trapping: the
    /// row is set aside with the reason, the other instances load.
    @Test func entriesNestedTooDeeplyAreSetAsideNotATrap() throws {
        let (_, store) = try savedDay()
        let deep = String(repeating: "[", count: 10_000)
        try store.execute(sql: "UPDATE timeline SET entries = '\(deep)' WHERE instanceID = 'w0'")
        #expect(throws: StateStoreError.self) { try store.loadSchedulerState() }
        let (state, setAside) = try store.loadSchedulerStateSettingAsideBadRows(at: t0)
        #expect(state.instances.map(\.instance.id) == ["w1", "w2", "w3"])
        #expect(setAside.count == 1)
        #expect(setAside.first?.description.hasPrefix("timeline row w0") == true)
        #expect(setAside.first?.description.contains("nested deeper than 512 levels") == true, "\(setAside)")
    }

    @Test func aFileFromANewerVersionIsRefusedUntouched() throws {
        let (path, store) = try savedDay()
        try store.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99')")
        #expect {
            _ = try StateStore(path: path)
        } throws: { error in
            let text = "\(error)"
            return text.contains("written by a newer widgethost") && text.contains("v99")
                && text.contains("which knows v1, v2, v3, v4")
        }
        let recorded = try store.writer.read { try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations") }
        #expect(recorded == ["v1", "v2", "v3", "v4", "v5", "v99"], "the file is left as it was")
    }

    @Test func aFileFromAnOlderVersionIsMigrated() throws {
        let path = temporaryPath("older")
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        do {
            let pool = try DatabasePool(path: path)
            try Schema.migrator.migrate(pool, upTo: "v1")
            try pool.write { db in
                try db.execute(sql: "INSERT INTO meta (key, value) VALUES ('schedulerNow', '1800000000.0')")
            }
        }
        let store = try StateStore(path: path)
        #expect(try store.appliedMigrations() == ["v1", "v2", "v3", "v4", "v5"])
        #expect(try store.loadSchedulerState().now == t0)
        #expect(try store.setAsideRows().isEmpty)
    }

    @Test func theFileIsOwnerOnly() throws {
        let (path, _) = try savedDay()
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        // One left readable by an older build is made owner-only.
        chmod(path, 0o644)
        _ = try StateStore(path: path)
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        for suffix in ["-wal", "-shm"] where stat(path + suffix, &info) == 0 {
            #expect(info.st_mode & 0o077 == 0, "\(suffix) is owner-only")
        }
    }
}
