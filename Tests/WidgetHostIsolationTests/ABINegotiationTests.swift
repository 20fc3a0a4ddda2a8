import Foundation
import Testing
import WidgetHostIsolation
import WidgetHostModel

/// Every host range against every plugin answer: the version negotiation of
/// docs/abi.md, run for real through the runner.
@Suite("ABI negotiation")
struct ABINegotiationTests {
    func load(_ fixture: String, hostRange: ClosedRange<UInt32>) -> CallOutput {
        IsolatedRunner.run(
            plugin: TestSupport.fixture(fixture), options: IsolationOptions(abiRange: hostRange))
    }

    @Test(arguments: [1...1, 1...2, 1...5] as [ClosedRange<UInt32>])
    func aV1PluginLoadsInEveryHostWhoseRangeIncludesOne(range: ClosedRange<UInt32>) throws {
        let output = load("good", hostRange: range)
        #expect(output.failure == nil)
        #expect(try #require(output.plugin).abiVersion == 1)
    }

    @Test(arguments: [2...2, 2...3, 0...0] as [ClosedRange<UInt32>])
    func aV1PluginRefusesAHostThatCannotSpeakOne(range: ClosedRange<UInt32>) {
        let output = load("good", hostRange: range)
        guard case .pluginRefused(_, let offered) = output.failure?.reason else {
            Issue.record("expected pluginRefused, got \(String(describing: output.failure))")
            return
        }
        #expect(offered == "\(range.lowerBound)..\(range.upperBound)")
    }

    @Test func theHostRefusesAVersionItDidNotOffer() {
        // wrong_abi answers 2 whatever the offer.
        #expect(load("wrong_abi", hostRange: 1...1).failure?.code == "abiMismatch")
        #expect(load("wrong_abi", hostRange: 3...4).failure?.code == "abiMismatch")
        #expect(load("wrong_abi", hostRange: 1...2).failure == nil)
    }
}
