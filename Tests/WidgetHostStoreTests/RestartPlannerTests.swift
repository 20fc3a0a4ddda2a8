import Testing
import WidgetHostModel
import WidgetHostScheduler

@testable import WidgetHostStore

/// A state with one instance that reloaded `count` times (counted), once
/// every 20 minutes up to `end`, with its policy due 15 minutes after `end`.
func busyState(end: Double, count: Int = 40) -> (SchedulerState, SchedulerConfiguration) {
    var config = SchedulerConfiguration()
    config.maximumJitter = 0
    var s = ReloadScheduler(configuration: config)
    s.add(WidgetInstance(id: "a", plugin: "p", kind: "k", app: "app"), at: end - 5 * day)
    s.add(WidgetInstance(id: "b", plugin: "p", kind: "k", app: "app"), at: end - 5 * day)
    var state = s.state
    for p in state.instances.indices {
        for n in 0..<count { state.instances[p].ledger.record(end - Double(n) * 1200, window: day) }
        state.instances[p].request = nil
        state.instances[p].lastReloadAt = end
        state.instances[p].timeline = TimelineRecord(
            entries: [EntryRecord(date: end, contentJSON: "{}")], policy: .atEnd)
        state.instances[p].timelineReceivedAt = end
        state.instances[p].policyDue = end + 900
    }
    state.now = end
    return (state, config)
}

func counted(_ state: SchedulerState, _ id: String, at time: Double) -> Int {
    state.instances.first { $0.instance.id == id }!.ledger.count(at: time, window: day)
}

/// Reloads issued (each answered with a `never` timeline) by driving a restored scheduler from `now` for `span`.
func reloads(_ state: SchedulerState, _ config: SchedulerConfiguration, from now: Double, for span: Double)
    -> [ReloadDecision]
{
    var s = ReloadScheduler(configuration: config, state: state)
    return s.run(until: now + span, clock: VirtualClock(start: now)) { d in
        .success(TimelineRecord(entries: [EntryRecord(date: d.time, contentJSON: "{}")], policy: .never))
    }
}

@Suite struct RestartPlannerTests {
    /// A restart may concern 100,000 instances: a log line names ten.
    @Test func listsNameTenIdsAtMost() {
        #expect(RestartPlanner.list([]) == "")
        #expect(RestartPlanner.list(["a", "b"]) == "a, b")
        let many = (0..<25).map { "w\($0)" }
        #expect(RestartPlanner.list(many) == "w0, w1, w2, w3, w4, w5, w6, w7, w8, w9 and 15 more")
        #expect(RestartPlanner.list(Array(many.prefix(10))) == many.prefix(10).joined(separator: ", "))
    }

    @Test func downtimeGivesOneCatchUpPerInstance() {
        let end = t0
        let (state, config) = busyState(end: end)
        let now = end + 3 * hour
        let r = RestartPlanner.reconcile(state: state, lastSeen: end, now: now)
        #expect(r.shift == 0)
        #expect(r.catchUp == ["a", "b"])
        #expect(r.state.now == now)
        let issued = reloads(r.state, config, from: now, for: 1)
        #expect(issued.map(\.instanceID).sorted() == ["a", "b"])
    }

    @Test func backwardsJumpKeepsTheBudgetSpent() {
        let end = t0
        let (state, config) = busyState(end: end)
        let now = end - 2 * day  // the clock went back two days
        let before = counted(state, "a", at: end)
        let r = RestartPlanner.reconcile(state: state, lastSeen: end, now: now)
        #expect(r.shift == -2 * day)
        // Same entries, same ages: the same count now as at shutdown, and
        // each still expires 24 h after it happened.
        #expect(counted(r.state, "a", at: now) == before)
        #expect(r.state.instances[0].ledger.times.count == state.instances[0].ledger.times.count)
        #expect(r.state.instances.allSatisfy { $0.ledger.times.allSatisfy { $0 <= now } })
        #expect(r.state.now == now)
        // Not due yet (15 min left), and then one reload each, no storm.
        #expect(r.catchUp.isEmpty)
        let issued = reloads(r.state, config, from: now, for: hour)
        #expect(issued.count == 2)
        #expect(issued.allSatisfy { $0.time >= now + 900 })
    }

    @Test func forwardJumpDetectedByTheMonotonicClockGrantsNothing() {
        let end = t0
        let (state, config) = busyState(end: end)
        let now = end + 5 * hour  // wall clock +5 h, but only 60 s really passed
        let r = RestartPlanner.reconcile(state: state, lastSeen: end, now: now, monotonicElapsed: 60)
        #expect(r.shift == 5 * hour - 60)
        #expect(counted(r.state, "a", at: now) == counted(state, "a", at: end + 60))
        #expect(r.catchUp.isEmpty)
        let issued = reloads(r.state, config, from: now, for: 1800)
        #expect(issued.count == 2)
    }

    @Test func forwardJumpByHoursOrDaysGivesOneReloadEach() {
        for jump in [6 * hour, 3 * day, 40 * day] {
            let end = t0
            let (state, config) = busyState(end: end)
            let now = end + jump
            let r = RestartPlanner.reconcile(state: state, lastSeen: end, now: now)
            #expect(r.catchUp == ["a", "b"])
            // Within the next minute only the catch-up reloads: one per instance.
            let issued = reloads(r.state, config, from: now, for: 60)
            #expect(issued.map(\.instanceID).sorted() == ["a", "b"])
        }
    }

    /// A reload in flight when the host stopped (killed, or queued and not
    /// started at a stop) is due again, and the charge it paid is returned
    /// so that the redo pays it: one charge per reload that runs to the end,
    /// counted, push and capped free alike; with the clock as it was and
    /// after it went back an hour.
    @Test(arguments: [0.0, -hour])
    func inFlightReloadIsDueAgainAndChargedOnce(clockMove: Double) throws {
        var config = SchedulerConfiguration()
        config.maximumJitter = 0
        var s = ReloadScheduler(configuration: config)
        let ids = ["counted", "intent", "push"]
        for id in ids { s.add(WidgetInstance(id: id, plugin: "p", kind: id, app: "app"), at: t0) }
        _ = s.dueReloads(at: t0)
        for id in ids {
            let policy: ReloadPolicy = id == "counted" ? .after(t0 + hour) : .never
            s.complete(id, with: .success(TimelineRecord(entries: [], policy: policy)), at: t0)
        }
        let stop = t0 + hour
        s.push(kind: "push", at: stop)
        s.handle(.appIntent(instance: "intent"), at: stop)
        let interrupted = s.dueReloads(at: stop).flatMap(\.decisions).sorted { $0.instanceID < $1.instanceID }
        #expect(interrupted.map(\.charge) == [.counted, .free(.appIntent), .free(.push)])
        let stopped = s.state
        func ledgers(_ state: SchedulerState) -> [Int] {
            state.instances.map { $0.ledger.times.count + $0.pushLedger.times.count } + [state.freeLedger.times.count]
        }
        #expect(ledgers(stopped) == [1, 0, 1, 1])

        let now = stop + 600 + clockMove
        let r = RestartPlanner.reconcile(state: stopped, lastSeen: stop, now: now)
        #expect(r.state.instances.allSatisfy { $0.inFlight == nil })
        #expect(r.catchUp == ids)
        #expect(ledgers(r.state) == [0, 0, 0, 0], "every charge of an unfinished reload returned")
        #expect(r.interrupted == ids)
        #expect(
            r.notes.contains(
                "reloads in flight at shutdown, due again with their charges returned: 3 (counted, intent, push)"))

        // The redo pays it, once: the same charges as before the stop.
        var restarted = ReloadScheduler(configuration: config, state: r.state)
        let redone = restarted.dueReloads(at: now).flatMap(\.decisions).sorted { $0.instanceID < $1.instanceID }
        #expect(redone.map(\.instanceID) == ids)
        #expect(redone.map(\.charge) == interrupted.map(\.charge))
        #expect(ledgers(restarted.state) == [1, 0, 1, 1])
        #expect(restarted.instanceState("counted")!.ledger.times == [now])
        #expect(restarted.instanceState("push")!.pushLedger.times == [now])
    }
}
