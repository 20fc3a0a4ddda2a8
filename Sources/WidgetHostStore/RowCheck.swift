import GRDB
import WidgetHostModel

/// A row of the state file that failed its checks at start and was set
/// aside (moved to the `rejected_row` table) instead of loaded.
public struct RejectedRow: Sendable, Hashable, CustomStringConvertible {
    /// The table the row was in (`instance`, `timeline`, `free_ledger`, ...).
    public var table: String
    /// Its key: the instance id, the app, the row id.
    public var key: String
    /// What was wrong: `policyDate is 1e+25, expected a time between 1970-01-01 and 9999-12-31 (seconds since 1970)`.
    public var detail: String

    public init(table: String, key: String, detail: String) {
        self.table = table
        self.key = key
        self.detail = detail
    }

    public var description: String { "\(table) row \(key): \(detail)" }
}

/// Reads the columns of one stored row, checking every number against
/// ``Bounds`` (times 1970-9999, durations 0-10 years, counts as exact
/// integers) and every value's type, so that no value read back from the
/// state file can trap later. A problem is a ``StateStoreError/corruptRow(table:key:detail:)``.
///
/// ```swift
/// let check = RowCheck(table: "instance", key: id)
/// let added = try check.time(row, "addedAt")
/// let due = try check.optionalTime(row, "policyDue")
/// ```
struct RowCheck {
    let table: String
    let key: String
    /// Each column's index in the rows checked, when the caller knows them
    /// (a restart checks 23 columns of 100,000 instance rows: GRDB finds a
    /// column by name with a case-insensitive search).
    var columns: [String: Int]?
    /// The statement the rows are stepped from, when the caller iterates one
    /// with `columns`: its values are read straight from SQLite (GRDB's
    /// generic decoding, not specialized across modules, looked types up at
    /// run time: a tenth of a 100,000-instance restart).
    var statement: Statement?

    init(table: String, key: String, columns: [String: Int]? = nil, statement: Statement? = nil) {
        self.table = table
        self.key = key
        self.columns = columns
        self.statement = statement
    }

    /// The raw value of `column`.
    private func raw(_ row: Row, _ column: String) -> DatabaseValue {
        if let index = columns?[column] {
            if let statement { return DatabaseValue(sqliteStatement: statement.sqliteStatement, index: CInt(index)) }
            return row[index]
        }
        return row[column] ?? .null
    }

    func corrupt(_ detail: String) -> StateStoreError { .corruptRow(table: table, key: key, detail: detail) }

    /// The column decoded as `T` (NULL in a non-optional, or another type, is a problem).
    func value<T: DatabaseValueConvertible>(_ row: Row, _ column: String, as type: T.Type = T.self) throws -> T {
        let value = raw(row, column)
        guard let decoded = T.fromDatabaseValue(value) else {
            throw corrupt("\(column) is \(value), expected a \(T.self)")
        }
        return decoded
    }

    /// An optional column decoded as `T`.
    func optional<T: DatabaseValueConvertible>(_ type: T.Type, _ row: Row, _ column: String) throws -> T? {
        let value = raw(row, column)
        if value.isNull { return nil }
        guard let decoded = T.fromDatabaseValue(value) else {
            throw corrupt("\(column) is \(value), expected a \(T.self) or NULL")
        }
        return decoded
    }

    /// A time column: a number between 1970 and 9999.
    func time(_ row: Row, _ column: String) throws -> Double {
        try time(try value(row, column, as: Double.self), column)
    }

    /// An optional time column.
    func optionalTime(_ row: Row, _ column: String) throws -> Double? {
        guard let seconds = try optional(Double.self, row, column) else { return nil }
        return try time(seconds, column)
    }

    /// An integer column holding an integer (SQLite keeps `1.5` written to
    /// an INTEGER column as a REAL: refused, not truncated).
    func integer(_ row: Row, _ column: String) throws -> Int64 {
        let value = raw(row, column)
        switch value.storage {
        case .int64(let number): return number
        case .double(let number):
            guard let exact = Bounds.exactInt(number) else {
                throw corrupt("\(column) is \(number), expected a whole number")
            }
            return Int64(exact)
        default: throw corrupt("\(column) is \(value), expected a whole number")
        }
    }

    /// A count column: a whole number from 0 to 10^9.
    func count(_ row: Row, _ column: String) throws -> Int {
        let number = try integer(row, column)
        guard (0...1_000_000_000).contains(number) else {
            throw corrupt("\(column) is \(number), expected a whole number from 0 to 1000000000")
        }
        return Int(number)
    }

    /// A time value; `field` is only made when the value is refused (a
    /// restart checks millions of entry dates).
    @discardableResult
    func time(_ seconds: Double, _ field: @autoclosure () -> String) throws -> Double {
        guard Bounds.isTime(seconds) else {
            do { return try Bounds.time(seconds, field: field()) } catch { throw corrupt(error.description) }
        }
        return seconds
    }

    @discardableResult
    func duration(_ seconds: Double, _ field: @autoclosure () -> String) throws -> Double {
        guard Bounds.isDuration(seconds) else {
            do { return try Bounds.duration(seconds, field: field()) } catch { throw corrupt(error.description) }
        }
        return seconds
    }

    func finite(_ value: Double, _ field: @autoclosure () -> String) throws {
        guard value.isFinite else { throw corrupt("\(field()) is \(value), expected a finite number") }
    }
}
