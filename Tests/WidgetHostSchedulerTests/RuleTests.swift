import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

@Suite("Scheduler rules, in virtual time")
struct RuleTests {
    @Test("1. Policies: atEnd, after(date), never; first timeline at once, free")
    func policies() {
        var s = ReloadScheduler(configuration: testConfig())
        s.add(instance("end"), at: t0)
        s.add(instance("after"), at: t0)
        s.add(instance("never"), at: t0)
        #expect(s.nextWakeup() == t0)
        let decisions = drive(&s, until: t0 + 5 * hour) { d in
            switch d.instanceID {
            case "end": .success(timeline([d.time, d.time + hour, d.time + 2 * hour], .atEnd))
            case "after": .success(timeline([d.time], .after(d.time + 1800)))
            default: .success(timeline([d.time], .never))
            }
        }
        let first = decisions.filter { $0.trigger == .added }
        #expect(first.count == 3)
        #expect(first.allSatisfy { $0.time == t0 && $0.charge == .free(.instanceAdded) })
        #expect(decisions.filter { $0.instanceID == "end" }.map(\.time) == [t0, t0 + 2 * hour, t0 + 4 * hour])
        #expect(decisions.filter { $0.instanceID == "after" }.map(\.time) == (0...10).map { t0 + Double($0) * 1800 })
        #expect(decisions.filter { $0.instanceID == "never" }.map(\.time) == [t0])
        #expect(decisions.filter { $0.trigger == .policy }.allSatisfy { $0.charge == .counted })
        // `never` reloads through an explicit request only.
        s.handle(.reloadTimelines(ofKind: "k", app: "app"), at: t0 + 5 * hour + 10)
        let more = drive(&s, until: t0 + 5 * hour + 20) { d in .success(timeline([d.time], .never)) }
        #expect(more.contains { $0.instanceID == "never" && $0.time == t0 + 5 * hour + 10 })
    }

    @Test("2. Entries: the displayed entry changes at each entry's date")
    func entries() {
        var s = ReloadScheduler(configuration: testConfig())
        s.add(instance("a"), at: t0)
        _ = drive(&s, until: t0) { d in .success(timeline([t0, t0 + 600, t0 + 1200], .never)) }
        #expect(s.displayedEntry(of: "a", at: t0)?.contentJSON == "{\"i\":0}")
        #expect(s.displayedEntry(of: "a", at: t0 + 599.9)?.contentJSON == "{\"i\":0}")
        #expect(s.displayedEntry(of: "a", at: t0 + 600)?.contentJSON == "{\"i\":1}")
        #expect(s.displayedEntry(of: "a", at: t0 + 5000)?.contentJSON == "{\"i\":2}")
        #expect(s.nextWakeup() == t0 + 600)
        #expect(s.nextEntryChange(of: "a", after: t0 + 600) == t0 + 1200)
        _ = s.dueReloads(at: t0 + 600)
        #expect(s.nextWakeup() == t0 + 1200)
    }

    @Test("3. Budget: rolling 24 h allowance by tier; spent budget defers to oldest + 24 h")
    func budget() {
        var c = testConfig()
        c.learningAllowance = 5
        var s = ReloadScheduler(configuration: c)
        s.add(instance("a"), at: t0)
        let decisions = drive(&s, until: t0 + day + 1000) { d in .success(timeline([d.time], .after(d.time + 300))) }
        let counted = decisions.filter { $0.charge == .counted }
        let expected = [300.0, 600, 900, 1200, 1500, day + 300, day + 600, day + 900].map { t0 + $0 }
        #expect(counted.map(\.time) == expected)
        let deferred = counted[5]
        #expect(deferred.deferral == Deferral(from: t0 + 1800, until: t0 + day + 300, cause: .budget))
        #expect(counted.allSatisfy { ($0.countedInWindow ?? 99) <= 5 })
        // explain shows the exact time budget returns.
        var probe = ReloadScheduler(configuration: c)
        probe.add(instance("a"), at: t0)
        _ = drive(&probe, until: t0 + 2000) { d in .success(timeline([d.time], .after(d.time + 300))) }
        let why = probe.explain("a", at: t0 + 2000)
        #expect(why?.budgetAvailableAt == t0 + day + 300)
        #expect(why?.next?.deferral?.cause == .budget)
        #expect(why?.description.contains("budget spent") == true)
    }

    @Test("3. Budget: allowance follows the viewing tier and the learning period")
    func tiers() {
        var s = ReloadScheduler(configuration: testConfig())
        s.add(instance("seen"), at: t0)
        s.add(instance("rare", visible: false), at: t0)
        s.add(instance("some", visible: false), at: t0)
        let later = t0 + 4 * day
        #expect(s.tier(of: "seen", at: t0 + day) == .learning)
        #expect(s.allowance(of: "seen", at: t0) == 96)
        #expect(s.tier(of: "seen", at: later) == .frequent)
        #expect(s.allowance(of: "seen", at: later) == 70)
        #expect(s.tier(of: "rare", at: later) == .rare)
        #expect(s.allowance(of: "rare", at: later) == 12)
        s.handle(.instanceShown("some"), at: later - 2 * hour)
        s.handle(.instanceHidden("some"), at: later - 2 * hour + 60)
        s.handle(.instanceShown("some"), at: later - 60)
        s.handle(.instanceHidden("some"), at: later - 30)
        #expect(s.tier(of: "some", at: later) == .occasional)
        #expect(s.allowance(of: "some", at: later) == 40)
    }

    @Test("4. Spacing: counted reloads at least 5 minutes apart")
    func spacing() {
        var s = ReloadScheduler(configuration: testConfig())
        s.add(instance("a"), at: t0)
        _ = drive(&s, until: t0) { d in .success(timeline([d.time], .never)) }
        s.reloadTimelines(ofKind: "k", app: "app", at: t0 + 1000)
        var got = drive(&s, until: t0 + 1050) { d in .success(timeline([d.time], .never)) }
        #expect(got.map(\.time) == [t0 + 1000])
        s.reloadTimelines(ofKind: "k", app: "app", at: t0 + 1100)
        got = drive(&s, until: t0 + 2000) { d in .success(timeline([d.time], .never)) }
        #expect(got.map(\.time) == [t0 + 1300])
        #expect(got.first?.deferral == Deferral(from: t0 + 1100, until: t0 + 1300, cause: .spacing))
        #expect(got.first?.charge == .counted)
    }

    @Test("5. Free reloads: typed, not counted, bounded by the host-wide cap")
    func freeReloads() {
        var c = testConfig()
        c.freeReloadLimit = 3
        var s = ReloadScheduler(configuration: c)
        for i in 0..<5 { s.add(instance("i\(i)", app: "app\(i)", visible: i != 4, location: i == 4), at: t0) }
        let ok: (ReloadDecision) -> ReloadOutcome = { d in .success(timeline([d.time], .after(d.time + 10 * hour))) }
        _ = drive(&s, until: t0) { ok($0) }
        s.handle(.appForeground("app0"), at: t0 + hour)
        s.handle(.sessionStarted(app: "app1", kind: .audio), at: t0 + hour)
        s.handle(.sessionStarted(app: "app2", kind: .navigation), at: t0 + hour)
        s.handle(.appIntent(instance: "i3"), at: t0 + hour)
        s.handle(.significantLocationChange, at: t0 + hour)
        for i in 0..<3 { s.handle(.reloadAllTimelines(app: "app\(i)"), at: t0 + hour) }
        var got = drive(&s, until: t0 + 2 * hour) { ok($0) }
        let byID = Dictionary(got.map { ($0.instanceID, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byID["i0"]?.charge == .free(.appForeground))
        #expect(byID["i1"]?.charge == .free(.audioSession))
        #expect(byID["i2"]?.charge == .free(.navigationSession))
        #expect(byID["i3"]?.charge == .free(.appIntent))
        #expect(got.filter { $0.time == t0 + hour }.count == 3)  // cap of 3 per minute
        #expect(byID["i3"]?.time == t0 + hour + 60)
        #expect(byID["i3"]?.deferral?.cause == .freeRateCap)
        #expect(byID["i4"] == nil)  // location change waits until the instance is viewed
        s.handle(.instanceShown("i4"), at: t0 + 3 * hour)
        got = drive(&s, until: t0 + 3 * hour) { ok($0) }
        #expect(got.map(\.instanceID) == ["i4"])
        #expect(got.first?.charge == .free(.significantLocationChange))
        #expect(got.first?.time == t0 + 3 * hour)
        for change in SystemChange.allCases { s.handle(.systemChange(change), at: t0 + 4 * hour) }
        got = drive(&s, until: t0 + 4 * hour + 120) { ok($0) }
        #expect(Set(got.map(\.charge)) == [.free(.localeChange)])
        #expect(got.map(\.time) == [0, 0, 0, 60, 60].map { t0 + 4 * hour + $0 })
        for id in s.instanceIDs { #expect(s.instanceState(id)?.ledger.times.isEmpty == true) }
        // A misbehaving foreground app asking every second: bounded by the cap.
        var loops = 0
        for second in 0..<600 {
            let t = t0 + 5 * hour + Double(second)
            s.handle(.reloadAllTimelines(app: "app0"), at: t)
            loops += drive(&s, until: t) { ok($0) }.count
        }
        #expect(loops == 30)  // 3 per 60 s for 600 s
    }

    @Test("6. WidgetCenter: by kind or all; free in foreground, counted otherwise; configurations")
    func widgetCenter() {
        var s = ReloadScheduler(configuration: testConfig())
        s.add(WidgetInstance(id: "a", plugin: "p", kind: "k1", configuration: "{\"team\":1}", app: "app"), at: t0)
        s.add(instance("b", kind: "k2"), at: t0)
        s.add(instance("c", kind: "k1", app: "other"), at: t0)
        _ = drive(&s, until: t0) { d in .success(timeline([d.time], .never)) }
        s.reloadTimelines(ofKind: "k1", app: "app", at: t0 + 1000)
        var got = drive(&s, until: t0 + 1000) { d in .success(timeline([d.time], .never)) }
        #expect(got.map(\.instanceID) == ["a"])
        #expect(got.first?.charge == .counted)
        #expect(got.first?.trigger == .reloadTimelines(kind: "k1", app: "app"))
        s.handle(.appForeground("app"), at: t0 + 2000)
        s.reloadAllTimelines(app: "app", at: t0 + 2000)
        got = drive(&s, until: t0 + 2000) { d in .success(timeline([d.time], .never)) }
        #expect(got.map(\.instanceID) == ["a", "b"])
        #expect(got.allSatisfy { $0.charge == .free(.appForeground) })
        let configs = s.getCurrentConfigurations(app: "app")
        #expect(configs.map(\.id) == ["a", "b"])
        #expect(configs.first?.configuration == "{\"team\":1}")
        #expect(s.getCurrentConfigurations().count == 3)
    }

    @Test("6. A counted request still waiting for the spacing becomes free when its app comes to the foreground")
    func pendingRequestBecomesFreeInForeground() {
        var s = ReloadScheduler(configuration: testConfig())
        s.add(instance("a", kind: "k1"), at: t0)
        s.add(instance("x", kind: "k1", app: "other"), at: t0)
        _ = drive(&s, until: t0) { d in .success(timeline([d.time], .never)) }
        s.reloadTimelines(ofKind: "k1", app: "app", at: t0 + 1000)
        s.reloadTimelines(ofKind: "k1", app: "other", at: t0 + 1000)
        _ = drive(&s, until: t0 + 1000) { d in .success(timeline([d.time], .never)) }
        // A second counted request waits for the 5-minute spacing...
        s.reloadTimelines(ofKind: "k1", app: "app", at: t0 + 1060)
        s.reloadTimelines(ofKind: "k1", app: "other", at: t0 + 1060)
        #expect(s.dueReloads(at: t0 + 1060).isEmpty)
        // ...until the app comes to the foreground: then it is free and due at once.
        s.handle(.appForeground("app"), at: t0 + 1100)
        #expect(s.instanceState("a")?.request?.charge == .free(.appForeground))
        #expect(s.instanceState("x")?.request?.charge == .counted, "another app's request is unchanged")
        let got = drive(&s, until: t0 + 1100) { d in .success(timeline([d.time], .never)) }
        #expect(got.map(\.instanceID) == ["a"])
        #expect(got.first?.time == t0 + 1100)
    }

    @Test("7. Visibility: a reload due while hidden happens when shown")
    func visibility() {
        var s = ReloadScheduler(configuration: testConfig())
        s.add(instance("a"), at: t0)
        _ = drive(&s, until: t0) { d in .success(timeline([d.time], .after(t0 + hour))) }
        s.handle(.instanceHidden("a"), at: t0 + 600)
        var got = drive(&s, until: t0 + 3 * hour) { d in .success(timeline([d.time], .after(d.time + hour))) }
        #expect(got.isEmpty)
        #expect(s.explain("a", at: t0 + 2 * hour)?.waitingForVisibility == true)
        s.handle(.instanceShown("a"), at: t0 + 3 * hour)
        got = drive(&s, until: t0 + 3 * hour) { d in .success(timeline([d.time], .after(d.time + hour))) }
        #expect(got.map(\.time) == [t0 + 3 * hour])
        #expect(got.first?.deferral == Deferral(from: t0 + hour, until: t0 + 3 * hour, cause: .hidden))
    }

    @Test("8. Coalescing: nearby reloads share a wakeup; no storm from past dates")
    func coalescing() {
        var s = ReloadScheduler(configuration: testConfig())
        for id in ["a", "b", "c"] { s.add(instance(id), at: t0) }
        let due = ["a": t0 + hour, "b": t0 + hour + 30, "c": t0 + hour + 100]
        _ = drive(&s, until: t0) { d in .success(timeline([d.time], .after(due[d.instanceID]!))) }
        #expect(s.nextWakeup() == t0 + hour + 30)
        let batches = s.dueReloads(at: t0 + hour + 30)
        #expect(batches.count == 1)
        #expect(batches.first?.decisions.map(\.instanceID) == ["a", "b"])
        #expect(batches.first?.decisions.first?.deferral?.cause == .coalescing)
        for d in batches[0].decisions { s.complete(d.instanceID, with: .success(timeline([], .never)), at: d.time) }
        #expect(s.nextWakeup() == t0 + hour + 100)

        // An entry changing inside the group's slack wakes the driver, but
        // issues nothing: the group still reloads together at its time.
        var e = ReloadScheduler(configuration: testConfig())
        for id in ["a", "b"] { e.add(instance(id), at: t0) }
        let dueE = ["a": t0 + hour, "b": t0 + hour + 40]
        _ = drive(&e, until: t0) { d in
            .success(timeline([d.time, t0 + hour + 20], .after(dueE[d.instanceID]!)))
        }
        #expect(e.nextWakeup() == t0 + hour + 20)  // the entry change, inside the group's slack
        #expect(e.dueReloads(at: t0 + hour + 20).isEmpty)  // "a" is due, but waits for the group
        #expect(e.nextWakeup() == t0 + hour + 40)
        #expect(e.dueReloads(at: t0 + hour + 40).first?.decisions.map(\.instanceID) == ["a", "b"])

        // A plugin asking for the past or a zero interval: one reload per 5 minutes.
        var storm = ReloadScheduler(configuration: testConfig())
        storm.add(instance("past"), at: t0)
        storm.add(instance("zero"), at: t0)
        var wakes: [Double] = []
        var time = t0
        while let w = storm.nextWakeup(), w <= t0 + hour {
            #expect(wakes.last.map { w > $0 } ?? true)
            wakes.append(w)
            time = w
            for b in storm.dueReloads(at: w) {
                for d in b.decisions {
                    let t = d.instanceID == "past" ? timeline([d.time], .after(d.time - day)) : timeline([], .atEnd)
                    storm.complete(d.instanceID, with: .success(t), at: time)
                }
            }
        }
        #expect(wakes == (0...12).map { t0 + Double($0) * 300 })
    }

    @Test("9. Jitter: stable per-instance offset spreads after(date)")
    func jitter() {
        #expect(StableJitter.fnv1a64("") == 0xcbf2_9ce4_8422_2325)
        #expect(StableJitter.fnv1a64("a") == 0xaf63_dc4c_8601_ec8c)
        let offset = StableJitter.offset(for: "weather-1", maximum: 120)
        #expect(offset == StableJitter.offset(for: "weather-1", maximum: 120))
        #expect(offset >= 0 && offset < 120)
        var s = ReloadScheduler(configuration: testConfig(jitter: 120))
        let ids = (0..<200).map { "w\($0)" }
        for id in ids { s.add(instance(id), at: t0) }
        let target = t0 + hour
        var first: [String: Double] = [:]
        _ = drive(&s, until: t0 + 2 * hour) { d in
            if d.trigger == .policy, first[d.instanceID] == nil { first[d.instanceID] = d.time }
            return .success(timeline([d.time], .after(target)))
        }
        for id in ids {
            let expected = target + StableJitter.offset(for: id, maximum: 120)
            let actual = first[id] ?? 0
            // Never before the date; at the jittered time, or batched within the slack.
            #expect(actual >= expected && actual <= expected + 60)
        }
        let buckets = Set(ids.map { Int(StableJitter.offset(for: $0, maximum: 120) / 10) })
        #expect(buckets.count == 12)
        var off = testConfig(jitter: 0)
        off.maximumJitter = 0
        #expect(
            ReloadScheduler(configuration: off).policyDue(
                for: timeline([], .after(target)), instanceID: "x", receivedAt: t0) == target)
    }

    @Test("10. Failures: keep the last good timeline, retry with exponential backoff")
    func failures() {
        var s = ReloadScheduler(configuration: testConfig())
        s.add(instance("a"), at: t0)
        _ = drive(&s, until: t0) { d in .success(timeline([t0], .after(t0 + hour))) }
        var calls = 0
        let got = drive(&s, until: t0 + 3 * hour) { d in
            calls += 1
            if calls <= 3 { return calls == 2 ? .timedOut : .failure(reason: "HTTP 503") }
            return .success(timeline([d.time], .never))
        }
        #expect(got.map(\.time) == [t0 + hour, t0 + hour + 300, t0 + hour + 900, t0 + hour + 2100])
        #expect(got.map(\.attempt) == [0, 1, 2, 3])
        #expect(got[1].deferral == Deferral(from: t0 + hour, until: t0 + hour + 300, cause: .backoff))
        var probe = ReloadScheduler(configuration: testConfig())
        probe.add(instance("a"), at: t0)
        _ = drive(&probe, until: t0) { d in .success(timeline([t0], .after(t0 + hour))) }
        _ = drive(&probe, until: t0 + hour) { _ in .failure(reason: "HTTP 503") }
        #expect(probe.displayedEntry(of: "a", at: t0 + hour + 1)?.date == t0)
        let why = probe.explain("a", at: t0 + hour + 1)
        #expect(why?.lastFailure?.reason == "HTTP 503")
        #expect(why?.lastFailure?.retryAt == t0 + hour + 300)
        #expect(why?.next?.time == t0 + hour + 300)
    }

    @Test("10. A reload not called is given back: no charge, no failure, held until its retry or its hold ends")
    func notCalled() {
        var s = ReloadScheduler(configuration: testConfig())
        s.add(instance("a"), at: t0)
        _ = drive(&s, until: t0) { d in .success(timeline([t0], .after(t0 + hour))) }
        // The policy reload at t0 + 1 h finds the plugin unavailable: held 10 minutes.
        let held = drive(&s, until: t0 + hour) { d in
            .notCalled(reason: "plugin quarantined", retryAt: d.time + 600)
        }
        #expect(held.map(\.charge) == [.counted])
        #expect(s.instanceState("a")?.ledger.count(at: t0 + hour, window: 86_400) == 0)
        #expect(s.instanceState("a")?.consecutiveFailures == 0)
        #expect(s.explain("a", at: t0 + hour + 1)?.lastFailure == nil)
        #expect(s.plannedReload(of: "a", at: t0 + hour + 1)?.time == t0 + hour + 600)
        // Its hold ends at once when the plugin loads: due now, counted once.
        s.endHold(of: "a", at: t0 + hour + 60)
        #expect(s.nextWakeup() == t0 + hour + 60)
        let again = drive(&s, until: t0 + hour + 60) { d in .success(timeline([d.time], .never)) }
        #expect(again.map(\.time) == [t0 + hour + 60])
        #expect(s.instanceState("a")?.ledger.count(at: t0 + hour + 60, window: 86_400) == 1)
        // Not called after real failures: the failures' backoff is kept
        // when the hold ends, and their count is unchanged.
        var f = ReloadScheduler(configuration: testConfig())
        f.add(instance("b"), at: t0)
        _ = drive(&f, until: t0) { d in .success(timeline([t0], .after(t0 + hour))) }
        _ = drive(&f, until: t0 + hour) { _ in .failure(reason: "HTTP 503") }
        _ = drive(&f, until: t0 + hour + 300) { d in
            .notCalled(reason: "host out of descriptors", retryAt: d.time + 3600)
        }
        #expect(f.instanceState("b")?.consecutiveFailures == 1)
        #expect(f.plannedReload(of: "b", at: t0 + hour + 301)?.time == t0 + 2 * hour + 300)
        f.endHold(of: "b", at: t0 + hour + 400)
        // The failure's retry (t0 + 1 h + 300 s) has passed: due at once,
        // and the spacing was not spent by the reload never called.
        #expect(f.nextWakeup() == t0 + hour + 400)
        // A free request not called stays pending, with its charge.
        var r = ReloadScheduler(configuration: testConfig())
        r.add(instance("c"), at: t0)
        _ = drive(&r, until: t0) { d in .success(timeline([t0], .never)) }
        r.handle(.appForeground("app"), at: t0 + 100)
        r.handle(.reloadTimelines(ofKind: "k", app: "app"), at: t0 + 100)
        let free = drive(&r, until: t0 + 100) { d in .notCalled(reason: "kind backing off", retryAt: d.time + 60) }
        #expect(free.map(\.charge) == [.free(.appForeground)])
        let retried = drive(&r, until: t0 + 200) { d in .success(timeline([d.time], .never)) }
        #expect(retried.map(\.time) == [t0 + 160])
        #expect(retried.map(\.charge) == [.free(.appForeground)])
    }

    @Test("11. Relevance: the top of a stack from score and duration")
    func relevance() {
        var s = ReloadScheduler(configuration: testConfig())
        for id in ["a", "b", "c"] { s.add(instance(id), at: t0) }
        _ = drive(&s, until: t0) { d in
            switch d.instanceID {
            case "a":
                .success(timeline([t0, t0 + hour], .never, relevance: [Relevance(score: 1), Relevance(score: 5)]))
            case "b": .success(timeline([t0], .never, relevance: [Relevance(score: 3, duration: 2 * hour)]))
            default: .success(timeline([t0], .never))
            }
        }
        #expect(s.topOfStack(["a", "b", "c"], at: t0 + 10) == "b")
        #expect(s.topOfStack(["a", "b", "c"], at: t0 + hour) == "a")
        #expect(s.relevanceScore(of: "b", at: t0 + 2 * hour) == 0)
        #expect(s.topOfStack(["c", "b"], at: t0 + 3 * hour) == "c")
        #expect(s.topOfStack([], at: t0) == nil)
    }

    @Test("12. Developer mode: no limits, but would-be deferrals are reported")
    func developerMode() {
        var c = testConfig()
        c.learningAllowance = 2
        c.developerMode = true
        var s = ReloadScheduler(configuration: c)
        s.add(instance("a"), at: t0)
        let got = drive(&s, until: t0 + 1500) { d in .success(timeline([d.time], .after(d.time + 300))) }
        #expect(got.map(\.time) == [0.0, 300, 600, 900, 1200, 1500].map { t0 + $0 })
        #expect(got[1].wouldHaveBeenDeferred == nil)
        #expect(got[3].wouldHaveBeenDeferred == Deferral(from: t0 + 900, until: t0 + 300 + day, cause: .budget))
        #expect(got.allSatisfy { $0.deferral == nil })
    }

    @Test("12. Developer mode lifts the minimum interval and the free cap, and says what they would have done")
    func developerModeLiftsEveryLimit() {
        var c = testConfig()
        c.developerMode = true
        c.freeReloadLimit = 1
        var s = ReloadScheduler(configuration: c)
        s.add(instance("countdown"), at: t0)
        // A 60-second countdown: reloaded every 60 s, not every 300 s.
        let got = drive(&s, until: t0 + 300) { d in .success(timeline([d.time], .after(d.time + 60))) }
        #expect(got.map(\.time) == [0.0, 60, 120, 180, 240, 300].map { t0 + $0 })
        #expect(got[1].wouldHaveBeenDeferred == Deferral(from: t0 + 60, until: t0 + 300, cause: .spacing))
        #expect(got.allSatisfy { $0.deferral == nil })
        // Past dates reload once a second (the developer floor), never in a hot loop.
        var past = ReloadScheduler(configuration: c)
        past.add(instance("past"), at: t0)
        let storm = drive(&past, until: t0 + 3) { d in .success(timeline([d.time], .after(d.time - day))) }
        #expect(storm.map(\.time) == [t0, t0 + 1, t0 + 2, t0 + 3])
        // The free-reload cap is lifted too, and reported.
        var free = ReloadScheduler(configuration: c)
        for id in ["a", "b"] { free.add(instance(id), at: t0) }
        _ = drive(&free, until: t0) { d in .success(timeline([d.time], .never)) }
        free.handle(.systemChange(.locale), at: t0 + 10)
        let both = drive(&free, until: t0 + 10) { d in .success(timeline([d.time], .never)) }
        #expect(both.map(\.time) == [t0 + 10, t0 + 10])
        #expect(both[1].wouldHaveBeenDeferred?.cause == .freeRateCap)
        #expect(both[1].deferral == nil)
    }

    @Test("13. Push: reloads the kind's instances now, free for the timeline budget, within a push budget of its own")
    func push() {
        var c = testConfig()
        c.pushAllowance = 2
        c.learningAllowance = 1
        var s = ReloadScheduler(configuration: c)
        s.add(instance("a", kind: "score"), at: t0)
        s.add(instance("b", kind: "score", plugin: "other"), at: t0)
        s.add(instance("c", kind: "weather"), at: t0)
        _ = drive(&s, until: t0) { d in .success(timeline([d.time], .never)) }

        // A push reloads every instance of the kind at once, charged to the push budget.
        let first = s.push(kind: "score", at: t0 + 60)
        #expect(first.map(\.instanceID) == ["a", "b"])
        #expect(first.allSatisfy { $0.reload?.time == t0 + 60 && $0.reload?.trigger == .push })
        var reloads = drive(&s, until: t0 + 60) { d in .success(timeline([d.time], .never)) }
        #expect(Set(reloads.map(\.instanceID)) == ["a", "b"], "batched by plugin: other before p")
        #expect(reloads.allSatisfy { $0.trigger == .push && $0.charge == .free(.push) && $0.time == t0 + 60 })
        #expect(s.instanceState("a")?.ledger.times == [], "a push spends no timeline budget")
        #expect(s.instanceState("a")?.pushLedger.times == [t0 + 60])

        // A plugin narrows it; pushes within the spacing of counted reloads are not held.
        #expect(s.push(kind: "score", plugin: "other", at: t0 + 90).map(\.instanceID) == ["b"])
        reloads = drive(&s, until: t0 + 90) { d in .success(timeline([d.time], .never)) }
        #expect(reloads.map(\.instanceID) == ["b"])

        // b's budget (2) is spent: the third push waits for the oldest to leave the window.
        let third = s.push(kind: "score", at: t0 + 120)
        #expect(third.first { $0.instanceID == "a" }?.reload?.time == t0 + 120)
        let held = third.first { $0.instanceID == "b" }?.reload
        #expect(held?.time == t0 + 60 + day)
        #expect(held?.deferral == Deferral(from: t0 + 120, until: t0 + 60 + day, cause: .pushBudget))
        // Two more pushes meanwhile are served by that one reload.
        s.push(kind: "score", at: t0 + 3 * hour)
        reloads = drive(&s, until: t0 + 60 + day) { d in .success(timeline([d.time], .never)) }
        let forB = reloads.filter { $0.instanceID == "b" }
        #expect(forB.count == 1)
        #expect(forB.first?.time == t0 + 60 + day)
        #expect(forB.first?.deferral?.cause == .pushBudget)
        #expect(reloads.filter { $0.instanceID == "c" }.isEmpty, "another kind is not pushed")

        // explain shows the push budget.
        let explanation = s.explain("b", at: t0 + 60 + day)
        #expect(explanation?.pushAllowance == 2)
        #expect(explanation?.pushesInWindow == 2)
        #expect(explanation?.description.contains("push budget: 2/2 in 24h") == true)

        // Any other free reason replaces a waiting push, so it does not wait for the push budget.
        s.push(kind: "score", at: t0 + 60 + day + 10)
        s.handle(.appIntent(instance: "b"), at: t0 + 60 + day + 20)
        reloads = drive(&s, until: t0 + 60 + day + 30) { d in .success(timeline([d.time], .never)) }
        #expect(reloads.first { $0.instanceID == "b" }?.trigger == .appIntent)
        #expect(reloads.first { $0.instanceID == "b" }?.time == t0 + 60 + day + 20)
    }

    @Test("14. A counted reload held until its tier rises is, at that hour, due since it came due, and coalesces")
    func heldUntilTheTierRises() {
        var c = testConfig()
        c.learningPeriod = 0
        c.rareAllowance = 1
        c.occasionalAllowance = 1
        c.frequentAllowance = 4
        c.occasionalVisibleHours = 2
        c.frequentVisibleHours = 4  // visible from t0: frequent from the fourth hour, t0 + 3 h
        c.coalescingCap = 600
        c.coalescingFraction = 0.5
        var s = ReloadScheduler(configuration: c)
        var scan = ScanScheduler(configuration: c)
        for id in ["a", "b"] {
            s.add(instance(id), at: t0)
            scan.add(instance(id), at: t0)
        }
        // a: counted at 20 min (1 of 1), then due at 2 h 57 min, when its
        // tier (occasional) allows no more: held until the tier rises at 3 h.
        // b: due at 3 h 1 min 34 s, within a's coalescing slack at 3 h.
        func provider(_ d: ReloadDecision) -> ReloadOutcome {
            switch (d.instanceID, d.trigger) {
            case ("a", .added): .success(timeline([d.time], .after(t0 + 1200)))
            case ("a", .policy) where d.time < t0 + hour: .success(timeline([d.time], .after(t0 + 3 * hour - 180)))
            case ("b", .added): .success(timeline([d.time], .after(t0 + 3 * hour + 94)))
            default: .success(timeline([d.time], .never))
            }
        }
        let decisions = drive(&s, until: t0 + 4 * hour, provider)
        let a = decisions.filter { $0.instanceID == "a" && $0.charge == .counted }
        #expect(a.map(\.time) == [t0 + 1200, t0 + 3 * hour + 94])
        #expect(a.last?.deferral?.cause == .coalescing)
        #expect(a.last?.deferral?.from == t0 + 3 * hour - 180)
        #expect(decisions.contains { $0.instanceID == "b" && $0.time == t0 + 3 * hour + 94 })
        // The plain scan decides the same.
        var expected: [ReloadDecision] = []
        while let wake = scan.nextWakeup(), wake <= t0 + 4 * hour {
            for batch in scan.dueReloads(at: wake) {
                for d in batch.decisions {
                    expected.append(d)
                    scan.complete(d.instanceID, with: provider(d), at: wake)
                }
            }
        }
        #expect(decisions == expected)
    }
}
