import Foundation
import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// `InstanceState`'s compact storage (issue 17, state per instance): its
/// properties, Codable form, equality and value semantics are those of a
/// plain struct of optionals.
@Suite("InstanceState compact storage")
struct InstanceStateStorageTests {
    static func full() -> InstanceState {
        var s = InstanceState(
            instance: WidgetInstance(id: "w1", plugin: "p", kind: "k", app: "com.example"), addedAt: 100)
        s.timelineReceivedAt = 101
        s.policyDue = 102.25
        s.lastReloadAt = 103
        s.visibleSince = 104
        s.request = PendingRequest(trigger: .appIntent, charge: .free(.appIntent), requestedAt: 105)
        s.locationChangeAt = 106
        s.backoffUntil = 107
        s.lastFailure = FailureRecord(time: 108, reason: "boom", consecutiveFailures: 2, retryAt: 109)
        s.pushLedger.record(110, window: 86_400)
        s.ledger.record(111, window: 86_400)
        s.consecutiveFailures = 2
        return s
    }

    @Test func optionalsReadBackAndClear() {
        var s = Self.full()
        #expect(s.timelineReceivedAt == 101)
        #expect(s.policyDue == 102.25)
        #expect(s.lastReloadAt == 103)
        #expect(s.visibleSince == 104)
        #expect(s.request?.requestedAt == 105)
        #expect(s.locationChangeAt == 106)
        #expect(s.backoffUntil == 107)
        #expect(s.lastFailure?.reason == "boom")
        #expect(s.pushLedger.times == [110])
        s.policyDue = nil
        s.request = nil
        s.locationChangeAt = nil
        s.backoffUntil = nil
        s.lastFailure = nil
        #expect(s.policyDue == nil)
        #expect(s.request == nil && s.locationChangeAt == nil && s.backoffUntil == nil && s.lastFailure == nil)
        #expect(s.pushLedger.times == [110])
        // A fresh instance has none of them.
        let fresh = InstanceState(instance: s.instance, addedAt: 1)
        #expect(fresh.policyDue == nil && fresh.request == nil && fresh.pushLedger.times.isEmpty)
        // Visible when added: shown since then.
        #expect(fresh.visibleSince == (s.instance.isVisible ? 1 : nil))
    }

    /// The hot record's flags (visible, in flight, rare values held) follow
    /// every change made through the state, so the rules may read them
    /// instead of the cold record.
    @Test func hotFlagsFollowTheColdRecord() {
        var s = InstanceState(
            instance: WidgetInstance(id: "w1", plugin: "p", kind: "k", app: "a", isVisible: false), addedAt: 1)
        #expect(s.flagsAreInStep && !s.hot.isVisible && !s.hot.isInFlight && !s.hot.hasRare)
        s.instance.isVisible = true
        #expect(s.flagsAreInStep && s.hot.isVisible)
        s.request = PendingRequest(trigger: .appIntent, charge: .free(.appIntent), requestedAt: 2)
        #expect(s.flagsAreInStep && s.hot.hasRare)
        s.request = nil
        #expect(s.flagsAreInStep && !s.hot.hasRare)
        s.pushLedger.record(3, window: 86_400)
        #expect(s.flagsAreInStep && s.hot.hasRare)
        s.pushLedger = RollingLedger()
        #expect(s.flagsAreInStep && !s.hot.hasRare)
        s.backoffUntil = 4
        s.lastFailure = FailureRecord(time: 4, reason: "x", consecutiveFailures: 1, retryAt: 5)
        s.locationChangeAt = 6
        #expect(s.flagsAreInStep && s.hot.hasRare)
        s.backoffUntil = nil
        s.lastFailure = nil
        #expect(s.flagsAreInStep && s.hot.hasRare)
        s.locationChangeAt = nil
        #expect(s.flagsAreInStep && !s.hot.hasRare)
        s.inFlightRecord = InFlightRecord(Self.flight(s), of: s.instance)
        #expect(s.flagsAreInStep && s.hot.isInFlight && s.isInFlight)
        s.inFlightRecord = nil
        #expect(s.flagsAreInStep && !s.isInFlight)
        s.inFlight = Self.flight(s)
        #expect(s.flagsAreInStep && s.isInFlight)
        s.inFlight = nil
        #expect(s.flagsAreInStep && !s.isInFlight)
        // Decoded: the flags are made from the values.
        let decoded = try! JSONDecoder().decode(InstanceState.self, from: JSONEncoder().encode(Self.full()))
        #expect(decoded.flagsAreInStep && decoded.hot.hasRare && decoded == Self.full())
    }

    /// A change through the records' subscript moves the cold record out
    /// and back: its box stays uniquely referenced and is changed in place,
    /// not copied.
    @Test func aChangeInTheRecordsKeepsTheBox() {
        var records = InstanceRecords([Self.full(), Self.full()])
        let box = records[cold: 1].rareIdentity
        #expect(box != nil)
        records[1].backoffUntil = 500
        records[1].pushLedger.record(600, window: 86_400)
        #expect(records[cold: 1].rareIdentity == box)
        #expect(records[1].backoffUntil == 500 && records[1].pushLedger.times == [110, 600])
        #expect(records[0] == Self.full())
        // #expect cannot take apart a condition on a value that is not copyable: read first.
        let holds1 = records.flagsAreInStep
        #expect(holds1)
    }

    @Test func copiesAreIndependent() {
        let original = Self.full()
        var copy = original
        copy.request = nil
        copy.backoffUntil = 200
        copy.pushLedger.record(300, window: 86_400)
        #expect(original.request?.requestedAt == 105)
        #expect(original.backoffUntil == 107)
        #expect(original.pushLedger.times == [110])
        #expect(copy.pushLedger.times == [110, 300])
        #expect(copy != original)
    }

    @Test func equalityAndHashFollowTheValuesNotTheBoxes() {
        var a = Self.full()
        let b = Self.full()
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        // Emptied rare values equal never-set ones.
        a.request = nil
        a.locationChangeAt = nil
        a.backoffUntil = nil
        a.lastFailure = nil
        var c = InstanceState(instance: a.instance, addedAt: 100)
        c.timelineReceivedAt = 101
        c.policyDue = 102.25
        c.lastReloadAt = 103
        c.visibleSince = 104
        c.pushLedger.record(110, window: 86_400)
        c.ledger.record(111, window: 86_400)
        c.consecutiveFailures = 2
        #expect(a == c)
        #expect(a.hashValue == c.hashValue)
    }

    @Test func codableKeepsEveryValueAndTheKeys() throws {
        let s = Self.full()
        let data = try JSONEncoder().encode(s)
        let back = try JSONDecoder().decode(InstanceState.self, from: data)
        #expect(back == s)
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        for key in [
            "instance", "addedAt", "timelineReceivedAt", "policyDue", "ledger", "pushLedger", "lastReloadAt",
            "visibleSince", "views", "request", "locationChangeAt", "consecutiveFailures", "backoffUntil",
            "lastFailure",
        ] {
            #expect(object[key] != nil, "\(key)")
        }
        // Absent optionals are left out, as before.
        let fresh = InstanceState(instance: s.instance, addedAt: 1)
        let freshObject =
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(fresh)) as? [String: Any] ?? [:]
        #expect(freshObject["policyDue"] == nil && freshObject["request"] == nil)
        #expect(try JSONDecoder().decode(InstanceState.self, from: JSONEncoder().encode(fresh)) == fresh)
    }

    static func flight(
        _ s: InstanceState, id: String? = nil, attempt: Int = 1, allowance: Int? = 70, counted: Int? = 12
    ) -> InFlightReload {
        InFlightReload(
            decision: ReloadDecision(
                instanceID: id ?? s.instance.id, plugin: s.instance.plugin, kind: s.instance.kind, time: 500,
                trigger: .reloadTimelines(kind: "k", app: "com.example"), charge: .counted, attempt: attempt,
                deferral: Deferral(from: 400, until: 500, cause: .budget),
                wouldHaveBeenDeferred: Deferral(from: 450, until: nil, cause: .hidden), allowance: allowance,
                countedInWindow: counted),
            dueSince: 400)
    }

    @Test func inFlightReadsBackWhateverItHolds() {
        var s = InstanceState(
            instance: WidgetInstance(id: "w1", plugin: "p", kind: "k", app: "com.example"), addedAt: 100)
        #expect(s.inFlight == nil)
        for flight in [
            Self.flight(s),  // the compact record
            Self.flight(s, allowance: nil, counted: nil),
            Self.flight(s, id: "another"),
            Self.flight(s, attempt: Int(Int32.max) + 1),  // beyond 32 bits: boxed
            Self.flight(s, counted: Int(Int32.min)),
        ] {
            s.inFlight = flight
            #expect(s.inFlight == flight)
            let copy = s
            s.inFlight = nil
            #expect(s.inFlight == nil)
            #expect(copy.inFlight == flight)
        }
    }

    @Test func inFlightKeepsItsStringsWhenTheInstanceChanges() throws {
        var s = InstanceState(
            instance: WidgetInstance(id: "w1", plugin: "p", kind: "k", app: "com.example"), addedAt: 100)
        let flight = Self.flight(s)
        s.inFlight = flight
        s.instance.isVisible.toggle()
        #expect(s.inFlight == flight)
        s.instance.kind = "other"
        #expect(s.inFlight == flight)
        let back = try JSONDecoder().decode(InstanceState.self, from: JSONEncoder().encode(s))
        #expect(back == s)
        #expect(back.inFlight == flight)
    }

    struct Interrupted: Error {}

    /// Renames the instance in place, then fails: the access ends with the error.
    static func renameThenFail(_ instance: inout WidgetInstance) throws {
        instance.id = "renamed"
        instance.plugin = "other-plugin"
        throw Interrupted()
    }

    @Test func inFlightKeepsItsNamesWhenTheyChangeAndWhenAChangeThrows() {
        var s = InstanceState(
            instance: WidgetInstance(id: "w1", plugin: "p", kind: "k", app: "com.example"), addedAt: 100)
        let flight = Self.flight(s)
        s.inFlight = flight
        let copy = s  // shares the box
        s.instance.id = "w2"
        s.instance.plugin = "q"
        #expect(s.inFlight == flight)
        #expect(copy.inFlight == flight && copy.instance.id == "w1")
        // Changed inside an access that throws: the names are kept as well.
        var t = copy
        #expect(throws: Interrupted.self) { try Self.renameThenFail(&t.instance) }
        #expect(t.instance.id == "renamed")
        #expect(t.inFlight == flight)
        #expect(copy.inFlight == flight)
        // A whole new instance value, assigned.
        var u = copy
        u.instance = WidgetInstance(id: "w9", plugin: "z", kind: "y", app: "a")
        #expect(u.inFlight == flight)
    }

    /// The records' table of reloads in flight: a slot per reload in
    /// flight, given back when it ends (none left: the records of every
    /// instance with none say so), and a state made from the records holds
    /// its own copy of its record.
    @Test func theInFlightTableHoldsOneSlotPerReloadInFlight() {
        var records = InstanceRecords([Self.full(), Self.full(), Self.full()])
        // #expect cannot take apart a condition on a value that is not copyable: read first.
        let holds2 = records.flagsAreInStep && records.flightCapacity == 0
        #expect(holds2)
        for p in 0..<3 {
            records.setInFlight(
                p, InFlightRecord(Self.flight(records[p], attempt: p), of: records[p].instance), issuedAt: 200)
        }
        let holds3 = records.flagsAreInStep && records.flightCapacity == 3
        #expect(holds3)
        #expect((0..<3).allSatisfy { records[$0].lastReloadAt == 200 })
        #expect((0..<3).map { records[$0].inFlight?.decision.attempt } == [0, 1, 2])
        // Set again in place: the same slot.
        records.setInFlight(
            1, InFlightRecord(Self.flight(records[1], attempt: 7), of: records[1].instance), issuedAt: 300)
        let holds4 = records.flightCapacity == 3 && records[1].inFlight?.decision.attempt == 7
        #expect(holds4)
        #expect(records[1].lastReloadAt == 300)
        let copy = records.clone()
        records[1].inFlight = nil
        let holds5 = records.flagsAreInStep && records[1].inFlight == nil && records.flight(at: 1) == nil
        #expect(holds5)
        // The copy keeps its own records.
        let copyHolds = copy[1].inFlight?.decision.attempt == 7 && copy.flagsAreInStep
        #expect(copyHolds)
        // A slot given back is taken again; through the state's subscript too.
        records[1].inFlight = Self.flight(records[1], attempt: 9)
        let holds6 = records.flightCapacity == 3 && records[1].inFlight?.decision.attempt == 9
        #expect(holds6)
        #expect(records[0].inFlight?.decision.attempt == 0 && records[2].inFlight?.decision.attempt == 2)
        // Removed with its instance.
        let removed = records.remove(at: 0)
        let holdsRemoved = removed.inFlight?.decision.attempt == 0 && records.flagsAreInStep
        #expect(holdsRemoved)
        #expect(records[0].inFlight?.decision.attempt == 9 && records[1].inFlight?.decision.attempt == 2)
        records[0].inFlight = nil
        records[1].inFlight = nil
        let holds7 = records.flagsAreInStep && records.flight(at: 0) == nil
        #expect(holds7)
        // None in flight: the table may go, and the next slot is the first.
        records.letGoOfFlights(keeping: 1)
        let holds8 = records.flightCapacity == 0
        #expect(holds8)
        records.setInFlight(
            1, InFlightRecord(Self.flight(records[1], attempt: 4), of: records[1].instance), issuedAt: 400)
        let holds9 = records.flightCapacity == 1 && records[1].inFlight?.decision.attempt == 4 && records.flagsAreInStep
        #expect(holds9)
    }

    /// A reload is kept in the table as plain numbers unless its trigger
    /// holds strings, it has names of its own or a would-be deferral (then
    /// whole); each reads back as given, in the same slot, one kind
    /// replacing the other, and a slot given back keeps nothing whole.
    @Test func theInFlightTableGivesBackPlainAndWholeRecordsAsGiven() {
        func policy(_ serial: UInt64, deferral: Deferral? = nil, allowance: Int? = 70) -> InFlightRecord {
            var record = InFlightRecord(
                time: 500, dueSince: 400, trigger: .policy, charge: .counted, attempt: 3, deferral: deferral,
                wouldHaveBeenDeferred: nil, allowance: allowance, countedInWindow: 12)
            record.serial = serial
            return record
        }
        let plain = [
            policy(1),
            policy(2, deferral: Deferral(from: 400, until: 500, cause: .coalescing), allowance: nil),
            policy(3, deferral: Deferral(from: 390, until: nil, cause: .hidden), allowance: 0),
        ]
        var requested = policy(4)
        requested.trigger = .reloadAllTimelines(app: "com.example")
        var added = policy(5)
        (added.trigger, added.charge) = (.added, .free(.instanceAdded))
        var renamed = policy(6)
        renamed.names = .init(instanceID: "w9", plugin: "p", kind: "k")
        var wouldHaveBeen = policy(7)
        wouldHaveBeen.wouldHaveBeenDeferred = Deferral(from: 450, until: 460, cause: .budget)
        let all = plain + [requested, added, renamed, wouldHaveBeen]
        #expect(all.map { InFlightTable.Stored($0) != nil } == [true, true, true, false, true, false, false])
        // Every trigger without strings and every charge, as numbers and back.
        let triggers: [ReloadTrigger] =
            [.policy, .added, .appIntent, .significantLocationChange, .push]
            + SystemChange.allCases.map { .systemChange($0) }
        for trigger in triggers {
            for charge in [ReloadCharge.counted] + FreeReason.allCases.map({ .free($0) }) {
                var record = policy(9)
                (record.trigger, record.charge) = (trigger, charge)
                #expect(InFlightTable.Stored(record)?.record(serial: 9) == record, "\(trigger), \(charge)")
            }
        }
        for cause in DeferralCause.allCases {
            let record = policy(10, deferral: Deferral(from: 1, until: 2, cause: cause))
            #expect(InFlightTable.Stored(record)?.record(serial: 10) == record, "\(cause)")
        }

        // The table keeps no serial (each is in its instance's line): a
        // record reads back with the serial it is asked with.
        #expect(MemoryLayout<InFlightTable.Stored>.stride == ReadAhead.lineSize)
        var table = InFlightTable()
        let slots = all.map { table.insert($0) }
        #expect(zip(slots, all).allSatisfy { table.record(at: $0, serial: $1.serial) == $1 })
        #expect(
            table.record(at: slots[0], serial: 99).serial == 99 && table.record(at: slots[3], serial: 98).serial == 98)
        // #expect cannot take apart a condition on a value that is not copyable: read first.
        let holds10 = table.recordsKeptWhole == 3
        #expect(holds10)
        // One kind replaces the other in place.
        table.set(slots[0], requested)
        table.set(slots[3], plain[0])
        #expect(table.record(at: slots[0], serial: 4) == requested && table.record(at: slots[3], serial: 1) == plain[0])
        let holds10b = table.recordsKeptWhole == 3
        #expect(holds10b)
        table.set(slots[0], plain: InFlightTable.Stored(plain[1])!)
        #expect(table.record(at: slots[0], serial: 2) == plain[1] && table.recordsKeptWhole == 2)
        // Given back: nothing kept whole, and the first slot is taken again.
        for slot in slots { table.remove(slot) }
        let holds11 = table.live == 0 && table.recordsKeptWhole == 0
        #expect(holds11)
        let again = table.insert(plain[2])
        #expect(again == 0 && table.record(at: again, serial: 3) == plain[2])
        // A slot given back while no record is kept whole, then taken by a
        // whole one and given back again: the mark goes with it.
        let whole = table.insert(requested)
        let holds13 = table.recordsKeptWhole == 1
        #expect(holds13)
        table.remove(whole)
        table.remove(again)
        let holds14 = table.live == 0 && table.recordsKeptWhole == 0
        #expect(holds14)
    }

    /// The serial number of a reload in flight is in its instance's line:
    /// written at the issue, read back with its record, and 0 once the
    /// reload ends (a ticket that names it then finds nothing).
    @Test func theSerialIsKeptInTheInstancesLine() {
        var records = InstanceRecords([Self.full(), Self.full()])
        // A policy reload due since other than its policy's due time: in the table.
        var plain = InFlightRecord(
            time: 200, dueSince: 190, trigger: .policy, charge: .counted, attempt: 2, deferral: nil,
            wouldHaveBeenDeferred: nil, allowance: 70, countedInWindow: nil)
        plain.serial = 41
        records.setInFlight(0, plain, issuedAt: 200)
        var record = InFlightRecord(Self.flight(records[1], attempt: 2), of: records[1].instance)
        record.serial = 42
        records.setInFlight(1, record, issuedAt: 210)
        let holds15 =
            records.inFlightSerial(at: 0) == 41 && records.inFlightSerial(at: 1) == 42 && records.flagsAreInStep
            && records.flightsInTable == 2
        #expect(holds15)
        #expect(records.flight(at: 0)?.serial == 41 && records.flight(at: 0)?.allowance == 70)
        #expect(records.flight(at: 1) == record)
        // A state changed in place keeps its serial; a new record its own.
        records[1].consecutiveFailures = 3
        let holds16 = records.inFlightSerial(at: 1) == 42
        #expect(holds16)
        records.recordSuccess(0, timeline: TimelineRecord(entries: [], policy: .never), at: 300, policyDue: nil)
        records[1].inFlight = nil
        let holds17 = records.inFlightSerial(at: 0) == 0 && records.inFlightSerial(at: 1) == 0 && records.flagsAreInStep
        #expect(holds17)
    }

    /// A counted policy reload that the line can rebuild (its times, its
    /// attempt and counts under 256) is kept there and takes no slot of the
    /// table; any other goes to the table. A change of the line that would
    /// rebuild it otherwise (a new policy due time, more failures) moves it
    /// to the table, as it was: what is kept where never changes a record.
    @Test func aPlainPolicyReloadIsKeptInTheLine() {
        var s = Self.full()
        s.policyDue = 1_000
        s.consecutiveFailures = 2
        var records = InstanceRecords([s, s])
        func policy(time: Double, deferral: Deferral?, counted: Int = 12, allowance: Int = 70) -> InFlightRecord {
            var record = InFlightRecord(
                time: time, dueSince: 1_000, trigger: .policy, charge: .counted, attempt: 2, deferral: deferral,
                wouldHaveBeenDeferred: nil, allowance: allowance, countedInWindow: counted)
            record.serial = 7
            return record
        }
        let held = policy(time: 1_300, deferral: Deferral(from: 1_000, until: 1_300, cause: .budget))
        records.setInFlight(0, held, issuedAt: 1_300)
        records.setInFlight(1, policy(time: 1_000, deferral: nil), issuedAt: 1_000)
        let holds18 = records.flightCapacity == 0 && records.flagsAreInStep && records.inFlightSerial(at: 0) == 7
        #expect(holds18)
        #expect(records.flight(at: 0) == held && records[0].inFlightRecord == held)
        #expect(records.flight(at: 1) == policy(time: 1_000, deferral: nil))
        // A state read and written back unchanged: still in the line.
        records[0].views = records[0].views
        let holds19 = records.flightCapacity == 0 && records.flight(at: 0) == held
        #expect(holds19)
        // The line changed under it: the record moves to the table, unchanged.
        records[0].policyDue = 2_000
        records[1].consecutiveFailures = 5
        let holds20 = records.flightCapacity == 2 && records.flagsAreInStep
        #expect(holds20)
        #expect(records.flight(at: 0) == held && records.flight(at: 1) == policy(time: 1_000, deferral: nil))
        // Set again when the line can rebuild it: back in the line, its slot given back.
        records[0].policyDue = 1_000
        let holds21 =
            records.flight(at: 0) == held && records.flagsAreInStep
            && records[cold: 0].flightSlot == ColdRecord.keptInLine && records[cold: 1].flightSlot >= 0
        #expect(holds21)
        // A copy keeps its own; a record kept in the line is read back with
        // its state when the instance is removed, and through `set`.
        let copy = records.clone()
        var whole = records[0]
        whole.lastReloadAt = 1_350  // the line's time no longer the record's: to the table
        records[0] = whole
        let holds23 =
            records.flight(at: 0) == held && records[cold: 0].flightSlot >= 0 && records.flagsAreInStep
            && copy.flight(at: 0) == held && copy[cold: 0].flightSlot == ColdRecord.keptInLine
        #expect(holds23)
        var copied = copy.clone()
        let removed = copied.remove(at: 0)
        #expect(removed.inFlightRecord == held)
        records.recordSuccess(0, timeline: TimelineRecord(entries: [], policy: .never), at: 1_400, policyDue: nil)
        let holds22 = records.flight(at: 0) == nil && records.inFlightSerial(at: 0) == 0 && records.flagsAreInStep
        #expect(holds22)
        // What the line cannot rebuild: another deferral's times, a count
        // over 255, a would-be deferral, another trigger or charge.
        let hot = s.hot
        func keptInLine(_ record: InFlightRecord) -> Bool {
            LineFlight(record, hot: hot, lastReloadAt: record.time) != nil
        }
        #expect(keptInLine(policy(time: 1_000, deferral: Deferral(from: 1_000, until: 1_000, cause: .late))))
        #expect(!keptInLine(policy(time: 1_300, deferral: Deferral(from: 1_000, until: 1_200, cause: .budget))))
        #expect(!keptInLine(policy(time: 1_300, deferral: Deferral(from: 900, until: 1_300, cause: .spacing))))
        #expect(!keptInLine(policy(time: 1_300, deferral: Deferral(from: 1_000, until: nil, cause: .hidden))))
        #expect(!keptInLine(policy(time: 1_000, deferral: nil, counted: 256)))
        #expect(!keptInLine(policy(time: 1_000, deferral: nil, allowance: 1_000)))
        var other = policy(time: 1_000, deferral: nil)
        other.wouldHaveBeenDeferred = Deferral(from: 1_000, until: 1_100, cause: .budget)
        #expect(!keptInLine(other))
        other = policy(time: 1_000, deferral: nil)
        other.trigger = .appIntent
        #expect(!keptInLine(other))
        other = policy(time: 1_000, deferral: nil)
        other.charge = .free(.appIntent)
        #expect(!keptInLine(other))
        other = policy(time: 1_000, deferral: nil)
        other.attempt = 3
        #expect(!keptInLine(other))
        other = policy(time: 1_000, deferral: nil)
        other.names = .init(instanceID: "w9", plugin: "p", kind: "k")
        #expect(!keptInLine(other))
        // Times compared bit for bit: a record equal by `==` but not by its
        // bits (-0.0 against 0.0) is not rebuilt from the line.
        #expect(LineFlight(policy(time: 1_000, deferral: nil), hot: hot, lastReloadAt: 1_001) == nil)
        var zero = s
        zero.policyDue = -0.0
        var atZero = policy(time: 1_000, deferral: nil)
        atZero.dueSince = 0.0
        #expect(LineFlight(atZero, hot: zero.hot, lastReloadAt: 1_000) == nil)
        atZero.dueSince = -0.0
        #expect(LineFlight(atZero, hot: zero.hot, lastReloadAt: 1_000) != nil)
        // No policy due time (NaN in the hot record): never rebuilt.
        zero.policyDue = nil
        #expect(LineFlight(atZero, hot: zero.hot, lastReloadAt: 1_000) == nil)
        // Failures beyond what the hot record holds (Int32.max).
        var many = s
        many.consecutiveFailures = Int(Int32.max) + 1
        var manyAttempts = policy(time: 1_000, deferral: nil)
        manyAttempts.attempt = Int(Int32.max) + 1
        #expect(LineFlight(manyAttempts, hot: many.hot, lastReloadAt: 1_000) == nil)
        // Every cause that can be kept reads back as given.
        for cause in DeferralCause.allCases {
            let record = policy(time: 1_300, deferral: Deferral(from: 1_000, until: 1_300, cause: cause))
            let line = LineFlight(record, hot: hot, lastReloadAt: 1_300)
            #expect(line?.record(hot: hot, lastReloadAt: 1_300, serial: 7) == record, "\(cause)")
        }
    }

    /// A state taken in (the records of stored states) keeps its reloads
    /// in flight, with serial 0: no ticket names them.
    @Test func recordsOfStatesForgetTheSerials() {
        var s = Self.full()
        var record = InFlightRecord(Self.flight(s, attempt: 3), of: s.instance)
        record.serial = 42
        s.inFlightRecord = record
        let records = InstanceRecords([s])
        let holds12 = records.inFlightSerial(at: 0) == 0 && records[0].inFlight == s.inFlight
        #expect(holds12)
    }

    @Test func copiesOfTheSchedulerKeepTheirOwnInFlightRecords() {
        var a = ReloadScheduler()
        for n in 0..<20 { a.add(WidgetInstance(id: "w\(n)", plugin: "p", kind: "k", app: "app"), at: 0) }
        // Every first reload issued and completed (the table of reloads in flight emptied).
        for d in a.dueReloads(at: 0).flatMap(\.decisions) {
            a.complete(d.instanceID, with: .success(TimelineRecord(entries: [], policy: .after(600))), at: 0)
        }
        var b = a  // shares the records and the table
        let wake = a.nextWakeup()!
        let fromA = a.dueReloads(at: wake).flatMap(\.decisions)
        // Issued a second later in the copy: records that differ from a's.
        let fromB = b.dueReloads(at: wake + 1).flatMap(\.decisions)
        #expect(!fromA.isEmpty && fromA.map(\.instanceID) == fromB.map(\.instanceID))
        for (da, db) in zip(fromA, fromB) {
            #expect(da.time == wake && db.time == wake + 1)
            #expect(a.instanceState(da.instanceID)?.inFlight?.decision == da)
            #expect(b.instanceState(db.instanceID)?.inFlight?.decision == db)
        }
        // Completing in one leaves the other's reloads in flight, as issued.
        for d in fromA { a.complete(d.instanceID, with: .failure(reason: "no"), at: wake) }
        for d in fromB {
            #expect(b.instanceState(d.instanceID)?.inFlight?.decision == d)
            #expect(a.instanceState(d.instanceID)?.inFlight == nil)
        }
    }

    /// The start's burst fills each plugin-and-kind batch with a sixth of
    /// every instance; later wakeups issue a twelfth of them, in six small
    /// batches. The batch arrays the scheduler keeps for reuse follow the
    /// batches' size, not the wakeup's: the burst's arrays (1,024 reloads
    /// each) are let go. Kept by the wakeup's total (300, so arrays up to
    /// 1,200), they stayed for good.
    @Test func batchArraysFromTheStartBurstAreLetGo() {
        var configuration = SchedulerConfiguration()
        configuration.maximumJitter = 0
        configuration.coalescingCap = 0
        var s = ReloadScheduler(configuration: configuration)
        let count = 3_600
        for n in 0..<count {
            s.add(WidgetInstance(id: "w\(n)", plugin: "p\(n % 3)", kind: "k\(n % 2)", app: "app"), at: t0)
        }
        var largest: [Int] = []
        for call in 0..<700 {
            guard let wake = s.nextWakeup() else { break }
            let batches = s.dueReloads(at: wake)
            if call == 0 { #expect(batches.allSatisfy { $0.decisions.count == count / 6 }) }
            if call >= 650 { largest.append(batches.map(\.decisions.capacity).max() ?? 0) }
            for decision in batches.flatMap(\.decisions) {
                // Twelve waves of 300 reloads (50 of each plugin and kind), every 900 s.
                let n = Int(decision.instanceID.dropFirst())!
                let next = call == 0 ? wake + 900 + Double(75 * (n / 6 % 12)) : wake + 900
                s.complete(decision.instanceID, with: .success(timeline([], .after(next))), at: wake)
            }
        }
        #expect(largest.count == 50)
        #expect(largest.allSatisfy { $0 <= 256 }, "batch arrays kept: \(Set(largest).sorted())")
    }

    @Test func positionsAreFoundByIdAfterAddsAndRemoves() {
        var scheduler = ReloadScheduler()
        var ids: [String] = []
        var random = SplitMix64(seed: 17)
        for step in 0..<400 {
            if ids.isEmpty || Int.random(in: 0..<3, using: &random) > 0 {
                let id = "instance-\(step)"
                let added = scheduler.add(WidgetInstance(id: id, plugin: "p", kind: "k", app: "a"), at: 0)
                #expect(added)
                ids.append(id)
            } else {
                let id = ids.remove(at: Int.random(in: 0..<ids.count, using: &random))
                let removed = scheduler.remove(id)
                let again = scheduler.remove(id)
                #expect(removed && !again)
                // Every other id is still found at its (renumbered) position.
                for (position, other) in ids.enumerated() {
                    #expect(scheduler.instanceIDs[position] == other)
                    #expect(scheduler.instanceState(other)?.instance.id == other)
                }
            }
        }
        #expect(scheduler.instanceIDs == ids)
        for id in ids { #expect(scheduler.instanceState(id)?.instance.id == id) }
        #expect(scheduler.instanceState("instance-none") == nil)
        let duplicate = scheduler.add(WidgetInstance(id: ids[0], plugin: "p", kind: "k", app: "a"), at: 0)
        #expect(!duplicate)
    }
}
