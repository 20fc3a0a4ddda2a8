import Testing
import WidgetHostModel

@testable import WidgetHostScheduler

/// What the daemon reads of the scheduler's instances, asked of it rather
/// than read from `state` (positions, an instance, its flags, the
/// host-wide values), and `reconfigure`, which changes one instance in place.
@Suite("Reading the instances")
struct InstanceReadingTests {
    @Test func positionsAndInstancesFollowTheState() {
        var s = ReloadScheduler(configuration: testConfig())
        for id in ["a", "b", "c"] { _ = s.add(instance(id, visible: id != "b"), at: t0) }
        for batch in s.dueReloads(at: t0) {
            for d in batch.decisions where d.instanceID != "c" {
                s.complete(
                    d.instanceID, with: d.instanceID == "a" ? .failure(reason: "no") : .success(timeline([], .never)),
                    at: t0)
            }
        }
        #expect(s.instanceCount == 3)
        #expect(s.instancePosition(of: "nope") == nil)
        for id in ["a", "b", "c"] {
            let p = try! #require(s.instancePosition(of: id))
            #expect(s.instance(at: p) == s.state.instances[p].instance)
            #expect(s.instanceState(at: p) == s.state.instances[p])
            #expect(s.isInFlight(at: p) == s.state.instances[p].isInFlight)
            #expect(s.isVisible(at: p) == s.state.instances[p].instance.isVisible)
            #expect(s.consecutiveFailures(at: p) == s.state.instances[p].consecutiveFailures)
        }
        #expect(s.isInFlight(at: s.instancePosition(of: "c")!))
        #expect(s.consecutiveFailures(at: s.instancePosition(of: "a")!) == 1)
        #expect(s.freeLedger == s.state.freeLedger)
        #expect(s.apps == s.state.apps)
        #expect(s.latestTime == t0)
        // Removing one moves the later positions down.
        let removed = s.remove("a")
        #expect(removed)
        #expect(s.instancePosition(of: "b") == 0)
        #expect(s.instancePosition(of: "c") == 1)
    }

    @Test func reconfigureKeepsTheHistoryAndAsksForAFreeReload() {
        var s = ReloadScheduler(configuration: testConfig())
        _ = s.add(instance("a", kind: "k1"), at: t0)
        _ = s.add(instance("b", kind: "k1"), at: t0)
        _ = drive(&s, until: t0 + 2 * hour) { _ in .success(timeline([], .after(t0 + hour))) }
        let before = s.instanceState("a")!
        #expect(before.ledger.count > 0)
        let later = t0 + 2 * hour + 10
        // The same instance: nothing to do.
        let same = s.reconfigure("a", as: instance("a", kind: "k1"), at: later)
        #expect(!same)
        // Another id, or an unknown one: refused.
        let otherID = s.reconfigure("a", as: instance("z", kind: "k2"), at: later)
        let unknown = s.reconfigure("z", as: instance("z", kind: "k2"), at: later)
        #expect(!otherID && !unknown)
        // The visibility stays the instance's own.
        let changed = s.reconfigure("a", as: instance("a", kind: "k2", visible: false), at: later)
        #expect(changed)
        let after = s.instanceState("a")!
        #expect(after.instance.kind == "k2")
        #expect(after.instance.isVisible)
        #expect(after.ledger == before.ledger)
        #expect(after.timeline == before.timeline)
        #expect(after.request == PendingRequest(trigger: .added, charge: .free(.instanceAdded), requestedAt: later))
        // The free reload comes out under the new kind; WidgetCenter's kind index follows.
        let decisions = s.dueReloads(at: later).flatMap(\.decisions)
        #expect(decisions.map(\.instanceID) == ["a"])
        #expect(decisions.first?.kind == "k2")
        #expect(decisions.first?.charge == .free(.instanceAdded))
        #expect(s.getCurrentConfigurations().map(\.kind) == ["k2", "k1"])
    }

    /// A new configuration changes the instance in place (no new lists):
    /// the same result as the rebuild, and the undo journal takes it back.
    @Test func aNewConfigurationChangesTheInstanceInPlace() {
        var s = ReloadScheduler(configuration: testConfig())
        _ = s.add(instance("a", kind: "k1"), at: t0)
        _ = s.add(instance("b", kind: "k1", visible: false), at: t0)
        _ = drive(&s, until: t0 + 2 * hour) { _ in .success(timeline([t0 + 3 * hour], .atEnd)) }
        let later = t0 + 2 * hour + 10
        let before = s.state
        var edited = instance("b", kind: "k1")
        edited.configuration = "{\"city\":\"Oslo\"}"
        edited.family = .systemLarge
        s.beginJournal()
        let changed = s.reconfigure("b", as: edited, at: later)
        #expect(changed)
        let after = s.instanceState("b")!
        #expect(after.instance.configuration == edited.configuration && after.instance.family == .systemLarge)
        #expect(!after.instance.isVisible, "the visibility stays the instance's own")
        #expect(after.ledger == before.instances[1].ledger && after.timeline == before.instances[1].timeline)
        #expect(after.request == PendingRequest(trigger: .added, charge: .free(.instanceAdded), requestedAt: later))
        #expect(s.recordsAreInStep)
        // As the rebuild would have it: the same plans from here on.
        var rebuilt = ReloadScheduler(configuration: testConfig(), state: s.state)
        #expect(s.dueReloads(at: later) == rebuilt.dueReloads(at: later))
        #expect(s.nextWakeup() == rebuilt.nextWakeup())
        // Rolled back (with the reloads issued above): every instance as it was.
        s.rollBackJournal()
        #expect(s.state.instances == before.instances)
        #expect(s.recordsAreInStep)
    }
}
