import Foundation
import GRDB
import WidgetHostJSON
import WidgetHostModel
import WidgetHostScheduler

/// The store's operations inside one write transaction (``StateStore/transaction(_:)``).
/// Valid only inside the closure it is passed to.
public struct StateTransaction {
    let db: Database
    let retention: EventLogRetention
    /// What the store's transactions wrote of each instance's ledgers and failure.
    let written: WrittenParts
    /// The store's JSON texts of request triggers and charges.
    let texts: ColumnTexts
    /// What the transaction learned as it went (a reference: the struct is passed by value).
    private let scratch = Scratch()

    init(db: Database, retention: EventLogRetention, written: WrittenParts, texts: ColumnTexts) {
        self.db = db
        self.retention = retention
        self.written = written
        self.texts = texts
    }

    private final class Scratch {
        /// The position of the next new instance, once counted.
        var nextPosition: Int64?
        /// The latest time of an event appended, so the log is pruned once at the end.
        var latestEvent: Double?
        /// A quarantine entry was written or deleted.
        var quarantineChanged = false
        /// What this transaction wrote of instances' ledgers and failures
        /// (joins ``WrittenParts`` when it commits).
        var parts = WrittenParts.Changes()
    }

    /// This transaction's changes to what the store knows it holds.
    var writtenChanges: WrittenParts.Changes { scratch.parts }

    /// Whether the transaction wrote or deleted a quarantine entry.
    var changedQuarantine: Bool { scratch.quarantineChanged }

    /// Ends the transaction's work: prunes the event log once if events were
    /// appended (``StateStore/transaction(_:)`` calls it before committing).
    func finish() throws {
        if let time = scratch.latestEvent {
            scratch.latestEvent = nil
            try pruneEventLog(now: time)
        }
    }

    // MARK: JSON columns

    static func encode<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// The `inFlight` column, the same JSON as ``encode(_:)`` gives, written
    /// directly (every issued reload writes one); the trigger and charge
    /// through `once` (``encodeOnce(_:)``: the same few values recur).
    static func encodeInFlight(_ flight: InFlightReload, once: (ColumnTexts.Value) throws -> String) throws
        -> String
    {
        let d = flight.decision
        let times =
            [d.time, flight.dueSince, d.deferral?.from ?? 0, d.deferral?.until ?? 0]
            + [d.wouldHaveBeenDeferred?.from ?? 0, d.wouldHaveBeenDeferred?.until ?? 0]
        guard times.allSatisfy(\.isFinite) else { return try encode(flight) }
        var out = JSONBytes(capacity: 256)
        func deferral(_ name: String, _ value: Deferral?) {
            guard let value else { return }
            out.raw(",\"\(name)\":{\"cause\":")
            out.quote(value.cause.rawValue)
            out.raw(",\"from\":\(value.from)")
            if let until = value.until { out.raw(",\"until\":\(until)") }
            out.raw("}")
        }
        out.raw("{\"decision\":{")
        if let allowance = d.allowance { out.raw("\"allowance\":\(allowance),") }
        out.raw("\"attempt\":\(d.attempt),\"charge\":")
        out.raw(try once(.charge(d.charge)))
        if let counted = d.countedInWindow { out.raw(",\"countedInWindow\":\(counted)") }
        deferral("deferral", d.deferral)
        out.raw(",\"instanceID\":")
        out.quote(d.instanceID)
        out.raw(",\"kind\":")
        out.quote(d.kind)
        out.raw(",\"plugin\":")
        out.quote(d.plugin)
        out.raw(",\"time\":\(d.time),\"trigger\":")
        out.raw(try once(.trigger(d.trigger)))
        deferral("wouldHaveBeenDeferred", d.wouldHaveBeenDeferred)
        out.raw("},\"dueSince\":\(flight.dueSince)}")
        return out.text
    }

    /// JSON text built as bytes (``encodeInFlight(_:once:)``).
    private struct JSONBytes {
        var bytes: [UInt8] = []

        init(capacity: Int) { bytes.reserveCapacity(capacity) }

        mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

        /// A JSON string literal (``JSONTextEncoder/appendQuoted(_:to:)``).
        mutating func quote(_ text: String) { JSONTextEncoder.appendQuoted(text, to: &bytes) }

        var text: String { String(decoding: bytes, as: UTF8.self) }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String, table: String, key: String) throws -> T {
        do {
            try JSONNesting.check(text)
            let decoder = JSONDecoder()
            decoder.nonConformingFloatDecodingStrategy = .convertFromString(
                positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
            return try decoder.decode(type, from: Data(text.utf8))
        } catch {
            throw StateStoreError.corruptRow(table: table, key: key, detail: "\(error)")
        }
    }

    /// The `entries` column: a blob (``EntriesBlob``, schema v5), or JSON
    /// text (written before v5, or a row the v5 migration could not read).
    /// `load` hands the blobs of a whole table to ``TimelineDecoding``
    /// instead, read where SQLite holds them.
    static func entries(_ row: Row, check: RowCheck) throws -> [EntryRecord] {
        let value: DatabaseValue = row["entries"] ?? .null
        switch value.storage {
        case .blob(let data):
            do { return try EntriesBlob.decode(data) } catch { throw check.corrupt("entries: \(error.description)") }
        case .string(let text):
            return try entries(json: text) ?? decode([EntryRecord].self, text, table: check.table, key: check.key)
        default:
            throw check.corrupt("entries is \(value), expected an entries blob or JSON text")
        }
    }

    /// The `entries` column as schema v4 wrote it, JSON text, read with the
    /// host's strict parser (`JSONValue.parse`; `JSONDecoder` took 70 % of a
    /// 100,000-instance restart on this column): an array of objects with
    /// `date`, `contentJSON` and an optional `relevance` (`null` or `score`
    /// and `duration`). Nil for any other shape, which the caller leaves to
    /// `JSONDecoder` (it reads it or explains what is wrong).
    static func entries(json text: String) -> [EntryRecord]? {
        guard case .array(let items)? = try? JSONValue.parse(text) else { return nil }
        var entries: [EntryRecord] = []
        entries.reserveCapacity(items.count)
        for item in items {
            guard let members = item.objectMembers else { return nil }
            var date: Double?
            var content: String?
            var relevance: Relevance?
            for (name, value) in members {
                switch (name, value) {
                case ("date", .number(let number)): date = number
                case ("contentJSON", .string(let text)): content = text
                case ("relevance", .null): relevance = nil
                case ("relevance", .object(let pairs)):
                    var score: Double?
                    var duration: Double?
                    for pair in pairs {
                        switch pair {
                        case ("score", .number(let number)): score = number
                        case ("duration", .number(let number)): duration = number
                        default: return nil
                        }
                    }
                    guard let score, let duration else { return nil }
                    relevance = Relevance(score: score, duration: duration)
                default: return nil
                }
            }
            guard let date, let content else { return nil }
            entries.append(EntryRecord(date: date, relevance: relevance, contentJSON: content))
        }
        return entries
    }

    private struct FailureColumns: Codable {
        var time: Double
        var reason: String
        var consecutiveFailures: Int
        var retryAt: Double
    }

    // MARK: Instances

    /// The columns of an `instance` row, in the order ``insertRow(_:position:)`` binds them.
    private static let instanceColumns = [
        "id", "position", "plugin", "kind", "family", "configuration", "app", "visible", "usesLocation", "addedAt",
        "visibleSince", "viewHour", "viewMask", "timelineReceivedAt", "policyDue", "lastReloadAt",
        "locationChangeAt", "requestTrigger", "requestCharge", "requestedAt", "inFlight", "consecutiveFailures",
        "backoffUntil",
    ]

    /// The update of an instance row, every column but its id and position.
    private static let instanceUpdate = """
        UPDATE instance SET \(instanceColumns.dropFirst(2).map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?
        """

    /// The insert of a new instance row.
    private static let instanceInsert = """
        INSERT INTO instance (\(instanceColumns.joined(separator: ", ")))
        VALUES (\(Array(repeating: "?", count: instanceColumns.count).joined(separator: ", ")))
        """

    /// Inserts or replaces one instance with its timeline, ledger and
    /// failure. A new instance goes after every existing one. Without
    /// `timeline`, the stored timeline is left as it is (the caller knows it
    /// did not change: only a completed reload changes it).
    ///
    /// Only what differs from the stored rows is written: the ledgers and
    /// the failure are compared with what this store last wrote of them
    /// (``WrittenParts``; read back when it does not know), and every
    /// statement is prepared once per connection (GRDB's statement cache),
    /// so a transaction of many upserts (group commit) costs a few bound
    /// executions per instance.
    public func upsert(_ s: InstanceState, timeline: Bool = true) throws {
        if try updateRow(s) {
            try writeParts(s, timeline: timeline, stored: written.parts(of: s.instance.id, within: scratch.parts))
        } else {
            try insertRow(s)
            try writeParts(s, timeline: timeline, stored: .empty)
        }
    }

    /// Writes the `instance` row of `s` only (its visibility, views,
    /// pending request, location mark, in-flight reload): what a request
    /// changes. Its timeline, ledgers and failure are left as stored; an
    /// instance not stored yet is written whole.
    public func upsertRow(_ s: InstanceState) throws {
        guard try !updateRow(s) else { return }
        try insertRow(s)
        try writeParts(s, timeline: true, stored: .empty)
    }

    /// The position after every stored instance (counted once per transaction).
    private func nextPosition() throws -> Int64 {
        if let next = scratch.nextPosition {
            scratch.nextPosition = next + 1
            return next
        }
        let next = (try Int64.fetchOne(db.cachedStatement(sql: "SELECT MAX(position) FROM instance")) ?? -1) + 1
        scratch.nextPosition = next + 1
        return next
    }

    /// ``encode(_:)``, once per distinct value in the store (``ColumnTexts``).
    private func encodeOnce(_ value: ColumnTexts.Value) throws -> String {
        try texts.text(of: value) {
            switch value {
            case .trigger(let trigger): try Self.encode(trigger)
            case .charge(let charge): try Self.encode(charge)
            }
        }
    }

    /// The `instance` row's columns after its id and position, in
    /// ``instanceColumns`` order.
    private func rowValues(_ s: InstanceState) throws -> [DatabaseValue] {
        let i = s.instance
        let requestTrigger = try s.request.map { try encodeOnce(.trigger($0.trigger)) }
        let requestCharge = try s.request.map { try encodeOnce(.charge($0.charge)) }
        let inFlight = try s.inFlight.map { try Self.encodeInFlight($0, once: encodeOnce) }
        let values: [(any DatabaseValueConvertible)?] = [
            i.plugin, i.kind, Int64(i.family.rawValue), i.configuration, i.app, i.isVisible,
            i.usesLocation, s.addedAt, s.visibleSince, s.views.hour, Int64(s.views.mask), s.timelineReceivedAt,
            s.policyDue, s.lastReloadAt, s.locationChangeAt, requestTrigger, requestCharge, s.request?.requestedAt,
            inFlight, Int64(s.consecutiveFailures), s.backoffUntil,
        ]
        return values.map { $0?.databaseValue ?? .null }
    }

    /// Updates the stored row of `s`; false when there is none.
    private func updateRow(_ s: InstanceState) throws -> Bool {
        try db.cachedStatement(sql: Self.instanceUpdate).execute(
            arguments: StatementArguments(try rowValues(s) + [s.instance.id.databaseValue]))
        return db.changesCount > 0
    }

    /// Inserts the row of `s` at `position` (by default after every stored instance).
    private func insertRow(_ s: InstanceState, position given: Int64? = nil) throws {
        let position = try given ?? nextPosition()
        try db.cachedStatement(sql: Self.instanceInsert).execute(
            arguments: StatementArguments(
                [s.instance.id.databaseValue, position.databaseValue] + (try rowValues(s))))
    }

    /// The rows of `s` beside its instance row: its timeline (when
    /// `writeTimeline`), ledgers and failure. With `stored` (what the
    /// tables hold), what did not change is not written.
    private func writeParts(_ s: InstanceState, timeline writeTimeline: Bool, stored: WrittenParts.Parts?) throws {
        let id = s.instance.id
        // The last good timeline.
        if !writeTimeline {
        } else if let timeline = s.timeline {
            let (policy, date): (String, Double?) =
                switch timeline.policy {
                case .atEnd: ("atEnd", nil)
                case .after(let d): ("after", d)
                case .never: ("never", nil)
                }
            try db.cachedStatement(
                sql: """
                    INSERT INTO timeline (instanceID, policy, policyDate, entries) VALUES (?, ?, ?, ?)
                    ON CONFLICT(instanceID) DO UPDATE SET
                      policy = excluded.policy, policyDate = excluded.policyDate, entries = excluded.entries
                    """
            ).execute(arguments: [id, policy, date, EntriesBlob.encode(timeline.entries)])
        } else {
            try db.cachedStatement(sql: "DELETE FROM timeline WHERE instanceID = ?").execute(arguments: [id])
        }

        // The ledgers: only the difference is written.
        let parts = WrittenParts.Parts(s)
        if stored?.reloads != parts.reloads {
            try writeLedger(parts.reloads.times, in: .reloads, instanceID: id, stored: stored?.reloads.times)
        }
        if stored?.pushes != parts.pushes {
            try writeLedger(parts.pushes.times, in: .pushes, instanceID: id, stored: stored?.pushes.times)
        }

        // The current failure streak.
        if let stored, stored.failure == parts.failure {
        } else if let f = s.lastFailure {
            try db.cachedStatement(
                sql: """
                    INSERT INTO failure (instanceID, time, reason, consecutive, retryAt) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(instanceID) DO UPDATE SET time = excluded.time, reason = excluded.reason,
                      consecutive = excluded.consecutive, retryAt = excluded.retryAt
                    """
            ).execute(arguments: [id, f.time, f.reason, f.consecutiveFailures, f.retryAt])
        } else {
            try db.cachedStatement(sql: "DELETE FROM failure WHERE instanceID = ?").execute(arguments: [id])
        }
        scratch.parts.wrote(id, parts)
    }

    /// The per-instance ledger tables: counted reloads and push reloads.
    enum LedgerTable: String, CaseIterable {
        case reloads = "reload_ledger"
        case pushes = "push_ledger"
    }

    /// Brings an instance's rows in `table` to `times`, writing only the
    /// difference: the usual change is old times pruned from the front and
    /// one new time at the end. `stored`: the times the table holds for the
    /// instance, when the caller knows them (else they are read).
    private func writeLedger(_ times: [Double], in table: LedgerTable, instanceID id: String, stored known: [Double]?)
        throws
    {
        let name = table.rawValue
        guard let first = times.first else {
            if known?.isEmpty != true {
                try db.cachedStatement(sql: "DELETE FROM \(name) WHERE instanceID = ?").execute(arguments: [id])
            }
            return
        }
        if known?.allSatisfy({ $0 >= first }) != true {
            try db.cachedStatement(sql: "DELETE FROM \(name) WHERE instanceID = ? AND time < ?")
                .execute(arguments: [id, first])
        }
        // What is left, as the rows' order (time, then insertion) gives it.
        let stored: [Double]
        if let known, case let left = known.filter({ $0 >= first }),
            zip(left, left.dropFirst()).allSatisfy({ $0 <= $1 })
        {
            stored = left
        } else {
            stored = try Double.fetchAll(
                db.cachedStatement(sql: "SELECT time FROM \(name) WHERE instanceID = ? ORDER BY time, id"),
                arguments: [id])
        }
        var toInsert = times[...]
        if stored.count <= times.count && Array(times.prefix(stored.count)) == stored {
            toInsert = times.dropFirst(stored.count)
        } else {
            try db.cachedStatement(sql: "DELETE FROM \(name) WHERE instanceID = ?").execute(arguments: [id])
        }
        for time in toInsert {
            try db.cachedStatement(sql: "INSERT INTO \(name) (instanceID, time) VALUES (?, ?)")
                .execute(arguments: [id, time])
        }
    }

    /// Removes an instance; its timeline, ledger and failure go with it.
    @discardableResult
    public func removeInstance(_ id: String) throws -> Bool {
        scratch.parts.forget(id)
        try db.execute(sql: "DELETE FROM instance WHERE id = ?", arguments: [id])
        return db.changesCount > 0
    }

    /// Replaces the host-wide free-reload ledger.
    public func replaceFreeLedger(_ ledger: RollingLedger) throws {
        let stored = try Double.fetchAll(db, sql: "SELECT time FROM free_ledger ORDER BY time, id")
        guard stored != ledger.times else { return }
        try db.execute(sql: "DELETE FROM free_ledger")
        for time in ledger.times {
            try db.execute(sql: "INSERT INTO free_ledger (time) VALUES (?)", arguments: [time])
        }
    }

    /// Replaces the apps' foreground and session state.
    public func replaceApps(_ apps: [String: AppState]) throws {
        try db.execute(sql: "DELETE FROM app_state")
        for (app, state) in apps.sorted(by: { $0.key < $1.key }) {
            try db.execute(
                sql: "INSERT INTO app_state (app, foreground) VALUES (?, ?)", arguments: [app, state.foreground])
            for kind in state.sessions.map(\.rawValue).sorted() {
                try db.execute(sql: "INSERT INTO app_session (app, kind) VALUES (?, ?)", arguments: [app, kind])
            }
        }
    }

    /// Moves the stored scheduler `now` forward to `time` (never back).
    public func observe(_ time: Double) throws {
        let current = try Self.meta(db, "schedulerNow").flatMap(Double.init)
        if let current, current >= time { return }
        try setMeta("schedulerNow", "\(time)")
    }

    /// Replaces everything the scheduler state covers.
    public func replaceSchedulerState(_ state: SchedulerState) throws {
        try db.execute(sql: "DELETE FROM instance")
        scratch.parts.forgetEverything()
        for (position, instance) in state.instances.enumerated() {
            try insertRow(instance, position: Int64(position))
            try writeParts(instance, timeline: true, stored: .empty)
        }
        scratch.nextPosition = Int64(state.instances.count)
        try replaceFreeLedger(state.freeLedger)
        try replaceApps(state.apps)
        if let now = state.now {
            try setMeta("schedulerNow", "\(now)")
        } else {
            try db.execute(sql: "DELETE FROM meta WHERE key = 'schedulerNow'")
        }
    }

    /// Makes the stored scheduler state `state`, given that the tables hold
    /// `stored` (as ``StateStore/loadSchedulerState()`` read them): only the
    /// instances that differ are written and the ones gone removed, so a
    /// start that changed nothing writes almost nothing. New instances go
    /// after the stored ones; the order of the others is kept.
    public func replaceSchedulerState(_ state: SchedulerState, storedAs stored: SchedulerState) throws {
        // The states come in the stored order, mostly the same instances (a
        // restart changes few): walk both while the ids match, and look up
        // only the rest (hashing 100,000 ids was a tenth of a restart).
        let old = stored.instances
        let new = state.instances
        var same = 0
        while same < old.count && same < new.count && old[same].instance.id == new[same].instance.id {
            if old[same] != new[same] { try upsert(new[same], timeline: old[same].timeline != new[same].timeline) }
            same += 1
        }
        var previous: [String: Int] = Dictionary(minimumCapacity: old.count - same)
        for p in old.indices.dropFirst(same) { previous[old[p].instance.id] = p }
        for s in new.dropFirst(same) {
            let before = previous.removeValue(forKey: s.instance.id).map { old[$0] }
            if before != s { try upsert(s, timeline: before?.timeline != s.timeline) }
        }
        for id in previous.keys.sorted() { try removeInstance(id) }
        try replaceFreeLedger(state.freeLedger)
        if state.apps != stored.apps { try replaceApps(state.apps) }
        if let now = state.now {
            try setMeta("schedulerNow", "\(now)")
        } else {
            try db.execute(sql: "DELETE FROM meta WHERE key = 'schedulerNow'")
        }
    }

    /// Rebuilds the scheduler state; the first row that fails ``RowCheck``
    /// (a number out of ``Bounds``, a value that does not decode) throws.
    static func load(_ db: Database) throws -> SchedulerState {
        var rejected: [RejectedRow] = []
        return try load(db, strict: true, rejected: &rejected)
    }

    /// Rebuilds the scheduler state. Unless `strict`, a bad instance row (or
    /// one of its timeline, ledger, failure rows) leaves the instance out and
    /// is appended there instead of thrown; a bad host-wide row (a free-ledger
    /// time, an app session, the scheduler's `now`) is left out the same way.
    static func load(_ db: Database, strict: Bool, rejected: inout [RejectedRow]) throws -> SchedulerState {
        func reject(_ error: any Error, table: String, key: String) throws {
            guard !strict else { throw error }
            let detail: String
            if case StateStoreError.corruptRow(_, _, let text) = error { detail = text } else { detail = "\(error)" }
            rejected.append(RejectedRow(table: table, key: key, detail: detail))
        }
        var bad = Set<String>()
        var state = SchedulerState()
        var ledgers: [LedgerTable: [String: [Double]]] = [:]
        for table in LedgerTable.allCases {
            let sql = "SELECT id, instanceID, time FROM \(table.rawValue) ORDER BY time, id"
            let rows = try Row.fetchCursor(db, sql: sql)
            while let row = try rows.next() {
                let id: String = (try? row.decode(String.self, forColumn: "instanceID")) ?? ""
                do {
                    let check = RowCheck(table: table.rawValue, key: id)
                    ledgers[table, default: [:]][id, default: []].append(try check.time(row, "time"))
                } catch {
                    bad.insert(id)
                    try reject(error, table: table.rawValue, key: id)
                }
            }
        }
        // Cursors: a row is read where SQLite holds it, not copied (the
        // timelines of 100,000 instances are a gigabyte of text). The
        // entries blobs are read on a second thread (`TimelineDecoding`)
        // while this one reads the failure and instance rows; what comes
        // out of each table is then taken in the order the tables were
        // always read (timelines, failures, instances), so the rows set
        // aside and the messages stay the same.
        var timelineOutcomes: [TimelineDecoding.Outcome] = []
        var decoding = TimelineDecoding()
        let timelineRows = try Row.fetchCursor(db, sql: "SELECT *, typeof(entries) AS entriesType FROM timeline")
        var sequence = 0
        while let row = try timelineRows.next() {
            let id: String = (try? row.decode(String.self, forColumn: "instanceID")) ?? ""
            sequence += 1
            let check = RowCheck(table: "timeline", key: id)
            do {
                let policy: ReloadPolicy
                switch try check.value(row, "policy", as: String.self) {
                case "atEnd": policy = .atEnd
                case "never": policy = .never
                case "after": policy = .after(try check.time(row, "policyDate"))
                case let other: throw check.corrupt("policy is \(other), expected atEnd, after or never")
                }
                if (try? row.decode(String.self, forColumn: "entriesType")) == "blob" {
                    let copied = try row.withUnsafeData(named: "entries") { data -> Bool in
                        guard let data else { return false }
                        data.withUnsafeBytes { decoding.add(sequence: sequence, id: id, policy: policy, blob: $0) }
                        return true
                    }
                    if copied { continue }
                }
                let timeline = try Self.checkedTimeline(
                    try Self.entries(row, check: check), policy: policy, check: check)
                timelineOutcomes.append(.init(sequence: sequence, id: id, timeline: .success(timeline)))
            } catch {
                let problem = error as? StateStoreError ?? check.corrupt("\(error)")
                timelineOutcomes.append(.init(sequence: sequence, id: id, timeline: .failure(problem)))
            }
        }
        var failures: [String: FailureRecord] = [:]
        var failureErrors: [(id: String, error: any Error)] = []
        for row in try Row.fetchAll(db, sql: "SELECT * FROM failure") {
            let id: String = (try? row.decode(String.self, forColumn: "instanceID")) ?? ""
            do {
                // FailureRecord has no public memberwise init: through its Codable form.
                let check = RowCheck(table: "failure", key: id)
                let columns = FailureColumns(
                    time: try check.time(row, "time"), reason: try check.value(row, "reason"),
                    consecutiveFailures: try check.count(row, "consecutive"), retryAt: try check.time(row, "retryAt"))
                failures[id] = try decode(FailureRecord.self, encode(columns), table: "failure", key: id)
            } catch {
                failureErrors.append((id, error))
            }
        }
        let instanceStatement = try db.makeStatement(sql: "SELECT * FROM instance ORDER BY position")
        var columns: [String: Int] = [:]
        for (index, name) in instanceStatement.columnNames.enumerated() where columns[name] == nil {
            columns[name] = index
        }
        let instanceRows = try Row.fetchCursor(instanceStatement)
        var instanceErrors: [(id: String, error: any Error)] = []
        while let row = try instanceRows.next() {
            let id: String = (try? row.decode(String.self, forColumn: "id")) ?? ""
            guard !bad.contains(id) else { continue }
            do {
                state.instances.append(
                    try instanceState(
                        row, columns: columns, statement: instanceStatement, id: id, timeline: nil,
                        ledger: ledgers[.reloads]?[id] ?? [],
                        pushLedger: ledgers[.pushes]?[id] ?? [], failure: failures[id]))
            } catch {
                instanceErrors.append((id, error))
            }
        }
        timelineOutcomes += decoding.finish()
        timelineOutcomes.sort { $0.sequence < $1.sequence }
        var timelines: [String: TimelineRecord] = Dictionary(minimumCapacity: timelineOutcomes.count)
        for outcome in timelineOutcomes {
            switch outcome.timeline {
            case .success(let timeline): timelines[outcome.id] = timeline
            case .failure(let error):
                bad.insert(outcome.id)
                try reject(error, table: "timeline", key: outcome.id)
            }
        }
        for (id, error) in failureErrors {
            bad.insert(id)
            try reject(error, table: "failure", key: id)
        }
        for (id, error) in instanceErrors where !bad.contains(id) { try reject(error, table: "instance", key: id) }
        state.instances.removeAll { bad.contains($0.instance.id) }
        for p in state.instances.indices {
            if let timeline = timelines[state.instances[p].instance.id] { state.instances[p].timeline = timeline }
        }
        for row in try Row.fetchAll(db, sql: "SELECT app, foreground FROM app_state") {
            let app: String = (try? row.decode(String.self, forColumn: "app")) ?? ""
            do {
                var entry = AppState()
                entry.foreground = try RowCheck(table: "app_state", key: app).value(row, "foreground")
                state.apps[app] = entry
            } catch {
                try reject(error, table: "app_state", key: app)
            }
        }
        for row in try Row.fetchAll(db, sql: "SELECT app, kind FROM app_session") {
            let app: String = (try? row.decode(String.self, forColumn: "app")) ?? ""
            let check = RowCheck(table: "app_session", key: app)
            do {
                let name: String = try check.value(row, "kind")
                guard let kind = SessionKind(rawValue: name) else { throw check.corrupt("kind \(name)") }
                state.apps[app, default: AppState()].sessions.insert(kind)
            } catch {
                try reject(error, table: "app_session", key: app)
            }
        }
        var free: [Double] = []
        for row in try Row.fetchAll(db, sql: "SELECT id, time FROM free_ledger ORDER BY time, id") {
            let key = "\((try? row.decode(Int64.self, forColumn: "id")) ?? 0)"
            do {
                free.append(try RowCheck(table: "free_ledger", key: key).time(row, "time"))
            } catch {
                try reject(error, table: "free_ledger", key: key)
            }
        }
        state.freeLedger = RollingLedger(times: free)
        if let text = try meta(db, "schedulerNow") {
            let check = RowCheck(table: "meta", key: "schedulerNow")
            do {
                guard let now = Double(text) else { throw check.corrupt("\(text) is not a number") }
                state.now = try check.time(now, "value")
            } catch {
                try reject(error, table: "meta", key: "schedulerNow")
            }
        }
        return state
    }

    /// A timeline's entries with their numbers checked (times, finite
    /// scores, durations), as a timeline with `policy`.
    static func checkedTimeline(_ entries: [EntryRecord], policy: ReloadPolicy, check: RowCheck) throws(StateStoreError)
        -> TimelineRecord
    {
        do {
            for (index, entry) in entries.enumerated() {
                try check.time(entry.date, "entries[\(index)].date")
                if let relevance = entry.relevance {
                    try check.finite(relevance.score, "entries[\(index)].relevance.score")
                    try check.duration(relevance.duration, "entries[\(index)].relevance.duration")
                }
            }
        } catch {
            throw error as? StateStoreError ?? check.corrupt("\(error)")
        }
        return TimelineRecord(entries: entries, policy: policy)
    }

    /// One instance row, checked, with its timeline, ledgers and failure.
    private static func instanceState(
        _ row: Row, columns: [String: Int], statement: Statement? = nil, id: String, timeline: TimelineRecord?,
        ledger: [Double],
        pushLedger: [Double],
        failure: FailureRecord?
    ) throws -> InstanceState {
        let check = RowCheck(table: "instance", key: id, columns: columns, statement: statement)
        let familyBits = try check.integer(row, "family")
        guard let bits = UInt32(exactly: familyBits), let family = WidgetFamily(rawValue: bits) else {
            throw check.corrupt("family \(familyBits) is not a widget family")
        }
        let instance = WidgetInstance(
            id: id, plugin: try check.value(row, "plugin"), kind: try check.value(row, "kind"), family: family,
            configuration: try check.value(row, "configuration"), app: try check.value(row, "app"),
            isVisible: try check.value(row, "visible"), usesLocation: try check.value(row, "usesLocation"))
        var s = InstanceState(instance: instance, addedAt: try check.time(row, "addedAt"))
        s.visibleSince = try check.optionalTime(row, "visibleSince")
        // The view history's hour is an hour index (hours since 1970), or Int64.min for none.
        let hour = try check.integer(row, "viewHour")
        guard hour == .min || (0...Int64(Bounds.latestTime / 3600)).contains(hour) else {
            throw check.corrupt("viewHour is \(hour), expected an hour from 1970 to 9999")
        }
        let maskBits = try check.integer(row, "viewMask")
        guard let mask = UInt32(exactly: maskBits) else { throw check.corrupt("viewMask \(maskBits) is not 32 bits") }
        s.views = ViewHistory(hour: hour, mask: mask)
        s.timeline = timeline
        s.timelineReceivedAt = try check.optionalTime(row, "timelineReceivedAt")
        s.policyDue = try check.optionalTime(row, "policyDue")
        s.ledger = RollingLedger(times: ledger)
        if !pushLedger.isEmpty { s.pushLedger = RollingLedger(times: pushLedger) }
        s.lastReloadAt = try check.optionalTime(row, "lastReloadAt")
        s.locationChangeAt = try check.optionalTime(row, "locationChangeAt")
        if let trigger = try check.optional(String.self, row, "requestTrigger"),
            let charge = try check.optional(String.self, row, "requestCharge"),
            let requestedAt = try check.optionalTime(row, "requestedAt")
        {
            s.request = PendingRequest(
                trigger: try decode(ReloadTrigger.self, trigger, table: "instance", key: id),
                charge: try decode(ReloadCharge.self, charge, table: "instance", key: id),
                requestedAt: requestedAt)
        }
        if let text = try check.optional(String.self, row, "inFlight") {
            let flight = try decode(InFlightReload.self, text, table: "instance", key: id)
            try check.time(flight.dueSince, "inFlight.dueSince")
            try check.time(flight.decision.time, "inFlight.decision.time")
            s.inFlight = flight
        }
        s.consecutiveFailures = try check.count(row, "consecutiveFailures")
        s.backoffUntil = try check.optionalTime(row, "backoffUntil")
        s.lastFailure = failure
        return s
    }

    /// Moves a row that failed its checks (and, for an instance, every row
    /// about the instance) to `rejected_row`.
    func setAside(_ rejected: RejectedRow, at time: Double) throws {
        func rows(_ sql: String, _ key: String) throws -> [[String: String]] {
            try Row.fetchAll(db, sql: sql, arguments: [key]).map { row in
                var columns: [String: String] = [:]
                for (name, value) in row { columns[name] = value.description }
                return columns
            }
        }
        var content: [String: [[String: String]]] = [:]
        switch rejected.table {
        case "instance", "timeline", "reload_ledger", "push_ledger", "failure":
            scratch.parts.forget(rejected.key)
            for table in ["instance", "timeline", "reload_ledger", "push_ledger", "failure"] {
                let column = table == "instance" ? "id" : "instanceID"
                content[table] = try rows("SELECT * FROM \(table) WHERE \(column) = ?", rejected.key)
                try db.execute(sql: "DELETE FROM \(table) WHERE \(column) = ?", arguments: [rejected.key])
            }
        case "app_state", "app_session":
            content[rejected.table] = try rows("SELECT * FROM \(rejected.table) WHERE app = ?", rejected.key)
            try db.execute(sql: "DELETE FROM \(rejected.table) WHERE app = ?", arguments: [rejected.key])
        case "free_ledger":
            content["free_ledger"] = try rows("SELECT * FROM free_ledger WHERE id = ?", rejected.key)
            try db.execute(sql: "DELETE FROM free_ledger WHERE id = ?", arguments: [rejected.key])
        default:
            content["meta"] = try rows("SELECT * FROM meta WHERE key = ?", rejected.key)
            try db.execute(sql: "DELETE FROM meta WHERE key = ?", arguments: [rejected.key])
        }
        try db.execute(
            sql: "INSERT INTO rejected_row (time, tableName, key, detail, content) VALUES (?, ?, ?, ?, ?)",
            arguments: [time, rejected.table, rejected.key, rejected.detail, try Self.encode(content)])
    }

    // MARK: Quarantine

    /// Quarantines `file`, replacing entries for other identities of its path;
    /// the crash count is the larger of `crashCount` and the stored one.
    @discardableResult
    public func quarantine(_ file: PluginFileIdentity, reason: String, crashCount: Int, at time: Double) throws
        -> QuarantineEntry
    {
        scratch.quarantineChanged = true
        let previous = try Self.quarantineEntry(db, file)
        try db.execute(
            sql: "DELETE FROM quarantine WHERE path = ? AND NOT (size = ? AND mtime = ?)",
            arguments: [file.path, file.size, file.mtime])
        let entry = QuarantineEntry(
            file: file, reason: reason, since: previous?.since ?? time,
            crashCount: max(crashCount, previous?.crashCount ?? 0))
        try db.execute(
            sql: """
                INSERT INTO quarantine (path, size, mtime, reason, since, crashCount) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(path, size, mtime) DO UPDATE SET reason = excluded.reason, crashCount = excluded.crashCount
                """,
            arguments: [file.path, file.size, file.mtime, reason, entry.since, entry.crashCount])
        return entry
    }

    @discardableResult
    public func unquarantine(path: String) throws -> Bool {
        scratch.quarantineChanged = true
        try db.execute(sql: "DELETE FROM quarantine WHERE path = ?", arguments: [path])
        return db.changesCount > 0
    }

    static func entry(_ row: Row) throws -> QuarantineEntry {
        let check = RowCheck(table: "quarantine", key: (try? row.decode(String.self, forColumn: "path")) ?? "")
        return QuarantineEntry(
            file: PluginFileIdentity(
                path: try check.value(row, "path"), size: try check.integer(row, "size"),
                mtime: try check.integer(row, "mtime")),
            reason: try check.value(row, "reason"), since: try check.value(row, "since"),
            crashCount: try check.count(row, "crashCount"))
    }

    static func quarantineEntry(_ db: Database, _ file: PluginFileIdentity) throws -> QuarantineEntry? {
        try Row.fetchOne(
            db, sql: "SELECT * FROM quarantine WHERE path = ? AND size = ? AND mtime = ?",
            arguments: [file.path, file.size, file.mtime]
        ).map(entry)
    }

    static func quarantined(_ db: Database) throws -> [QuarantineEntry] {
        try Row.fetchAll(db, sql: "SELECT * FROM quarantine ORDER BY path, mtime").map(entry)
    }

    // MARK: Event log

    /// Appends an event; the log is pruned to the retention bound (age
    /// measured from the latest event's time) once, at the end of the transaction.
    /// `data`: the event's structured details for the watch stream (a JSON object), if any.
    public func appendEvent(time: Double, instanceID: String?, kind: String, message: String, data: String? = nil)
        throws
    {
        try db.cachedStatement(
            sql: "INSERT INTO event_log (time, instanceID, kind, message, data) VALUES (?, ?, ?, ?, ?)"
        )
        .execute(arguments: [time, instanceID, kind, message, data])
        scratch.latestEvent = max(scratch.latestEvent ?? time, time)
    }

    /// Deletes events beyond the newest `maximumRows` and those older than
    /// `now - maximumAge`. Returns the rows deleted.
    @discardableResult
    public func pruneEventLog(now: Double) throws -> Int {
        var deleted = 0
        // Ids only grow and only the oldest rows are deleted, so the rows are
        // one contiguous id range: the newest N are the ids > max - N.
        if let newest = try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM event_log") {
            try db.execute(
                sql: "DELETE FROM event_log WHERE id <= ?", arguments: [newest - Int64(retention.maximumRows)])
            deleted += db.changesCount
        }
        if retention.maximumAge.isFinite {
            try db.execute(sql: "DELETE FROM event_log WHERE time < ?", arguments: [now - retention.maximumAge])
            deleted += db.changesCount
        }
        return deleted
    }

    static func recentEvents(_ db: Database, limit: Int, instanceID: String?) throws -> [LoggedEvent] {
        let rows: [Row]
        if let instanceID {
            rows = try Row.fetchAll(
                db, sql: "SELECT * FROM event_log WHERE instanceID = ? ORDER BY id DESC LIMIT ?",
                arguments: [instanceID, limit])
        } else {
            rows = try Row.fetchAll(db, sql: "SELECT * FROM event_log ORDER BY id DESC LIMIT ?", arguments: [limit])
        }
        return rows.reversed().map {
            LoggedEvent(
                id: $0["id"], time: $0["time"], instanceID: $0["instanceID"], kind: $0["kind"], message: $0["message"])
        }
    }

    // MARK: Meta

    static func meta(_ db: Database, _ key: String) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key])
    }

    func setMeta(_ key: String, _ value: String) throws {
        try db.execute(
            sql: "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            arguments: [key, value])
    }

    public func recordClockSample(_ sample: ClockSample) throws {
        try setMeta("lastSeen", try Self.encode(sample))
    }

    static func clockSample(_ db: Database) throws -> ClockSample? {
        try meta(db, "lastSeen").map { try decode(ClockSample.self, $0, table: "meta", key: "lastSeen") }
    }
}
