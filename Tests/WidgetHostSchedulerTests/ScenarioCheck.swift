import Foundation
import PropertyBased
import Synchronization
import Testing
import WidgetHostModel
import WidgetHostScheduler

/// Runs `check` on `count` random scenarios of `generator` and, when one
/// fails, has swift-property-based shrink it to a small one that still
/// fails. What this adds to the library's `propertyCheck`:
///
/// - **The same scenarios at every run by default.** Scenario `i` of shard
///   `shard` of a test comes from a seed made of the test's name, the shard,
///   `i` and a base (`WIDGETHOST_PROPERTY_SEED`, 0 when unset): a test run
///   cannot fail on scenarios the last one did not try, so a red run is a
///   change, never luck. `WIDGETHOST_PROPERTY_SEED=random` draws a new base
///   (printed with any failure, to run the same scenarios again), and
///   `WIDGETHOST_PROPERTY_SCALE=N` checks N times as many (at most 1,000):
///   `WIDGETHOST_PROPERTY_SEED=random WIDGETHOST_PROPERTY_SCALE=20 swift test --filter PropertyTests`
///   searches new ground.
/// - **Shrinking is bounded in time.** The library shrinks until no smaller
///   scenario fails, running `check` once per candidate; a scenario of
///   hundreds of steps has thousands of candidates at up to a second each,
///   so an unbounded shrink can outlast the test run (a CI run was stopped
///   at its one-hour limit). `shrinkSeconds` after it starts, `check` stops
///   running (every later candidate passes), the library reports the
///   smallest failing scenario found so far, and this function adds the
///   failure that scenario gave.
///
/// `check` returns a description of the failure, or nil when the scenario
/// holds; the function returns whether every scenario held (a test then
/// asserts what the scenarios did in all, which means little after a
/// failure stopped them). It suspends once before each scenario: scenarios are synchronous
/// work of up to a second, and without a suspension the shards of a
/// parameterized test would hold the test pool's threads while the rest of
/// the suite (tests with time limits, daemons waiting for answers) waits.
@discardableResult
func checkScenarios<Value, Shrink: Sequence>(
    count: Int, of generator: Generator<Value, Shrink>, shard: Int, shrinkSeconds: Double = 300,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ check: (Value) async -> String?
) async -> Bool {
    if let problem = ScenarioSeeds.problem {
        Issue.record(Comment(rawValue: problem), sourceLocation: sourceLocation)
        return false
    }
    var seeds = ScenarioSeeds(test: Test.current?.name ?? "", shard: shard)
    for i in 0..<count * ScenarioSeeds.scale {
        let seed = seeds.next()
        var rng = Xoshiro(seed: seed)
        let value = generator.run(using: &rng)
        await Task.yield()
        guard let failure = await check(value) else { continue }
        Issue.record(
            Comment(
                rawValue: "scenario \(i) of shard \(shard) failed (\(ScenarioSeeds.baseDescription)): \(failure)\n"
                    + "Alone: `.fixedSeed(\"\(Xoshiro(seed: seed).currentSeed)\")` on the test, or this seed in "
                    + "`onceDiffered(seed:)`. Shrinking it for at most \(Int(shrinkSeconds)) s:"),
            sourceLocation: sourceLocation)
        await shrink(generator, seed: seed, seconds: shrinkSeconds, sourceLocation: sourceLocation, check)
        return false
    }
    return true
}

/// Has the library generate the scenario of `seed` again and shrink it
/// (under its fixed-seed trait, as `.fixedSeed` on a test would), with
/// `check` skipped after `seconds`.
private func shrink<Value, Shrink: Sequence>(
    _ generator: Generator<Value, Shrink>, seed: (UInt64, UInt64, UInt64, UInt64), seconds: Double,
    sourceLocation: SourceLocation, _ check: (Value) async -> String?
) async {
    guard let test = Test.current else { return }
    let failures = FailureLog(seconds: seconds)
    await FixedSeedTrait.fixedSeed(seed.0, seed.1, seed.2, seed.3, sourceLocation: sourceLocation)
        .provideScope(for: test, testCase: Test.Case.current) {
            await propertyCheck(
                count: 1, input: generator,
                perform: { value in
                    await Task.yield()
                    guard !failures.outOfTime() else { return }
                    if let failure = await check(value) {
                        failures.record(failure, in: value)
                        Issue.record(Comment(rawValue: failure), sourceLocation: sourceLocation)
                    }
                }, sourceLocation: sourceLocation)
        }
    if let (failure, scenario) = failures.cutShort() {
        Issue.record(
            Comment(
                rawValue: "shrinking stopped after \(Int(seconds)) s; the smallest failing scenario found:\n"
                    + "\(scenario)\nfailed with: \(failure)"),
            sourceLocation: sourceLocation)
    }
}

/// The seeds of one shard's scenarios: a SplitMix64 stream started from the
/// test's name, the shard and the base.
struct ScenarioSeeds {
    private var stream: SplitMix64

    init(test: String, shard: Int) {
        // FNV-1a: Swift's own hashing changes from one process to the next.
        let name = StableJitter.fnv1a64(test)
        stream = SplitMix64(seed: name ^ Self.base ^ (UInt64(shard) &* 0x9e37_79b9_7f4a_7c15))
    }

    mutating func next() -> (UInt64, UInt64, UInt64, UInt64) {
        (stream.next(), stream.next(), stream.next(), stream.next())
    }

    /// `WIDGETHOST_PROPERTY_SEED`: a number, `random`, or 0 when unset
    /// (or not understood: ``problem`` says so).
    static let base: UInt64 = {
        let text = ProcessInfo.processInfo.environment["WIDGETHOST_PROPERTY_SEED"] ?? "0"
        if text == "random" { return UInt64.random(in: 1...UInt64.max) }
        return UInt64(text) ?? 0
    }()

    /// What is wrong with `WIDGETHOST_PROPERTY_SEED` or
    /// `WIDGETHOST_PROPERTY_SCALE`, if anything: a value not understood
    /// fails the random checks instead of running the default scenarios
    /// unnoticed.
    static let problem: String? = {
        let environment = ProcessInfo.processInfo.environment
        if let text = environment["WIDGETHOST_PROPERTY_SEED"], text != "random", UInt64(text) == nil {
            return "WIDGETHOST_PROPERTY_SEED=\(text): expected a whole number from 0 to \(UInt64.max) "
                + "(the base printed with a failure) or `random`; unset it for the usual scenarios"
        }
        if let text = environment["WIDGETHOST_PROPERTY_SCALE"], !(Int(text).map { 1...1_000 ~= $0 } ?? false) {
            return "WIDGETHOST_PROPERTY_SCALE=\(text): expected a whole number from 1 to 1000 "
                + "(how many times the usual number of scenarios to check); unset it for 1"
        }
        return nil
    }()

    static var baseDescription: String { "WIDGETHOST_PROPERTY_SEED=\(base) runs these scenarios again" }

    /// `WIDGETHOST_PROPERTY_SCALE`: how many times the usual number of
    /// scenarios to check, 1 to 1,000 (1 when unset, or not understood:
    /// ``problem`` says so).
    static let scale: Int = {
        guard let text = ProcessInfo.processInfo.environment["WIDGETHOST_PROPERTY_SCALE"], let value = Int(text)
        else { return 1 }
        return min(max(value, 1), 1_000)
    }()
}

/// The failures seen while shrinking: when shrinking started, and the last
/// failure (the smallest scenario that failed so far).
private final class FailureLog: Sendable {
    private struct State {
        var start = ContinuousClock.now
        var last: (failure: String, scenario: String)?
        var stopped = false
    }
    private let state = Mutex(State())
    private let seconds: Double

    init(seconds: Double) { self.seconds = seconds }

    func record(_ failure: String, in value: some Any) {
        let scenario = String(describing: value)
        state.withLock { $0.last = (failure, scenario) }
    }

    /// Whether shrinking has run for its time; from then on, every
    /// candidate is skipped.
    func outOfTime() -> Bool {
        state.withLock {
            if $0.start.duration(to: .now) > .seconds(seconds) { $0.stopped = true }
            return $0.stopped
        }
    }

    /// The last failure, when shrinking was cut short.
    func cutShort() -> (String, String)? {
        state.withLock { $0.stopped ? $0.last : nil }
    }
}
