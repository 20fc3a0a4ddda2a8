import Testing
import WidgetHostModel

@testable import WidgetHostDaemon

/// The reloads not called are logged one line per cause (``HeldReloadLog``),
/// not one per instance: a plugin that cannot be called with 100,000
/// instances logged 100,000 lines at every shared retry.
@Suite("Daemon: the log of reloads held")
struct HeldReloadLogTests {
    let until = 1_800_000_300.0
    let broken = HoldCause.pluginUnusable(plugin: "broken", problem: "it crashed while loading")

    @Test func theReloadsHeldForOneCauseAreOneLineNamingAFew() {
        var log = HeldReloadLog()
        for n in 1...100_000 { log.add("i\(n)", cause: broken, until: until, at: 10) }
        let lines = log.take(all: true, at: 10).map(\.line)
        #expect(
            lines == [
                "plugin broken cannot be called (it crashed while loading): held 100000 reloads (not charged, not counted as failures) until \(Timestamp.iso8601(until)): i1, i2, i3 and 99997 more"
            ])
        #expect(log.isEmpty)
        log.add("only", cause: broken, until: until, at: 11)
        #expect(
            log.take(all: true, at: 11).map(\.line).first?.hasSuffix(
                "held 1 reload (not charged, not counted as failures) until \(Timestamp.iso8601(until)): only") == true)
    }

    @Test func eachCauseHasItsLineInTheOrderItBegan() {
        var log = HeldReloadLog()
        let kind = HoldCause.kindBackingOff(plugin: "erring", kind: "k", failures: 3, until: until)
        let fault = HoldCause.hostFault(plugin: "p", message: "out of file descriptors")
        log.add("a", cause: kind, until: until, at: 0)
        log.add("b", cause: fault, until: until + 1, at: 0)
        log.add("c", cause: broken, until: until, at: 0)
        log.add("d", cause: fault, until: until + 2, at: 0)
        let summaries = log.take(all: true, at: 0)
        #expect(summaries.map(\.cause) == [kind, fault, broken])
        #expect(
            summaries[0].line.hasPrefix(
                "kind k of plugin erring is backing off (3 failed reloads in a row): held 1 reload"))
        // A host fault's holds end a little apart: the line gives the last.
        #expect(
            summaries[1].line.hasPrefix(
                "host fault calling p (out of file descriptors; not counted against the plugin): held 2 reloads"))
        #expect(summaries[1].line.hasSuffix("until \(Timestamp.iso8601(until + 2)): b, d"))
        #expect(summaries[1].cause.isHostFault && !summaries[0].cause.isHostFault)
        // Each reload's own reason is as it was.
        #expect(broken.reason == "plugin broken cannot be called: it crashed while loading")
        #expect(fault.reason == "out of file descriptors")
        #expect(
            kind.reason == "kind k is backing off until \(Timestamp.iso8601(until)) after 3 failed reloads in a row")
    }

    /// A retry issued over several turns of the loop waits for its last
    /// turn; a line waits no longer than a second.
    @Test func aSummaryWaitsForMoreTurnsAtMostASecond() {
        var log = HeldReloadLog()
        log.add("a", cause: broken, until: until, at: 100)
        #expect(log.take(all: false, at: 100.5).isEmpty)
        log.add("b", cause: broken, until: until, at: 100.6)
        let taken = log.take(all: false, at: 101)
        #expect(taken.map(\.count) == [2])
        #expect(log.isEmpty)
    }
}
