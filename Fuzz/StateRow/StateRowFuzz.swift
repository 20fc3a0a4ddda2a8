// libFuzzer target: the state file's row decoder (what the daemon reads at
// start: RowCheck over every table the scheduler state comes from). The
// bytes become one row per table, each column a value of any SQLite type
// (integer, real, text, blob, NULL) with edge cases (1e25, -0, 2^63, text
// in a number column), written under the current schema; then the state is
// loaded as the daemon loads it. Built and run by scripts/fuzz.
// Property: the load succeeds, setting bad rows aside, or throws a typed
// error; nothing traps.
import Foundation
import GRDB
import WidgetHostModel

@testable import WidgetHostStore

private let tables = ["instance", "timeline", "reload_ledger", "free_ledger", "failure", "app_state", "app_session"]

private struct Bytes {
    var bytes: [UInt8]
    var offset = 0
    mutating func next() -> UInt8 {
        defer { offset += 1 }
        return offset < bytes.count ? bytes[offset] : 0
    }
    var isDone: Bool { offset >= bytes.count }
}

private func value(_ input: inout Bytes) -> DatabaseValue {
    let tag = input.next()
    let small = Double(input.next()) - 128
    switch tag % 12 {
    case 0: return .null
    case 1: return (Int64(small) * 1_000_000_000).databaseValue
    case 2: return (1.8e9 + small * 3600).databaseValue
    case 3: return (small * 1e23).databaseValue
    case 4: return Int64.max.databaseValue
    case 5: return (-0.0).databaseValue
    case 6: return (small + 0.5).databaseValue
    case 7:
        return ["", "x", "{}", "[]", "{\"a\":1e999}", "null", "[1,2", "1.8e9", "atEnd", "{\"after\":1e25}"][
            Int(input.next()) % 10
        ].databaseValue
    case 8:
        // An entries blob (v5), one byte of it changed.
        var blob = [UInt8](
            EntriesBlob.encode([
                EntryRecord(date: 1.8e9, contentJSON: "{\"a\":1}"),
                EntryRecord(date: 1.8e9 + small, relevance: Relevance(score: small), contentJSON: "{}"),
            ]))
        blob[Int(input.next()) % blob.count] = input.next()
        return Data(blob).databaseValue
    case 9: return Int64(small).databaseValue
    case 10: return "k\(Int(small))".databaseValue
    default: return (small / 0.0).databaseValue  // ±inf (NaN is stored as NULL)
    }
}

/// One store for the whole run (migrations once, foreign keys off so that a
/// row may name what no other row holds); each input starts from empty
/// tables.
private let store: StateStore = {
    do {
        let store = try StateStore.inMemory()
        try store.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA foreign_keys = OFF") }
        return store
    } catch {
        fatalError("the in-memory store could not be set up: \(error)")
    }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStateRow(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = Bytes(bytes: Array(UnsafeBufferPointer(start: data, count: size)))
    do {
        try store.writer.write { db in
            for table in tables + ["rejected_row"] { try db.execute(sql: "DELETE FROM \(table)") }
        }
        for table in tables where !input.isDone {
            let columns = try store.writer.read { db in
                try Row.fetchAll(db, sql: "PRAGMA table_info(\(table))").map { $0["name"] as String }
            }
            guard !columns.isEmpty else { continue }
            let values = columns.map { _ in value(&input) }
            let names = columns.map { "\"\($0)\"" }.joined(separator: ", ")
            let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
            // Each row in its own transaction: a constraint (NOT NULL, a key,
            // ON CONFLICT ROLLBACK) may refuse it, which is the schema's
            // check, not a crash.
            try? store.writer.write { db in
                try db.execute(
                    sql: "INSERT INTO \(table) (\(names)) VALUES (\(marks))", arguments: StatementArguments(values))
            }
        }
    } catch {
        fatalError("the in-memory store could not be used: \(error)")
    }
    _ = try? store.loadSchedulerStateSettingAsideBadRows(at: 1.8e9)
    return 0
}
