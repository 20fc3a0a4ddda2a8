import Foundation
import Testing

/// The libFuzzer targets (Fuzz/, scripts/fuzz) run for a fixed time in every
/// test run, each starting from its corpus, which keeps the inputs of every
/// crash found so far as regression inputs.
@Suite("Fuzzing")
struct FuzzTests {
    static let targets = ["control-request", "configuration", "runner-answer", "state-row"]

    @Test(.timeLimit(.minutes(30)))
    func everyTargetRunsItsCorpusAndFuzzesWithoutACrash() {
        let result = CLI.shell("'\(CLI.repositoryRoot)/scripts/fuzz' 8 2>&1")
        #expect(result.status == 0, "scripts/fuzz found a crash or failed:\n\(result.output)")
        for target in Self.targets {
            #expect(result.output.contains("fuzz \(target) for 8s"), "\(target) did not run:\n\(result.output)")
        }
        // libFuzzer's summary line, one per target.
        let done = result.output.split(separator: "\n").filter { $0.contains("Done ") && $0.contains(" runs in ") }
        #expect(done.count == Self.targets.count, "\(result.output)")
    }
}
