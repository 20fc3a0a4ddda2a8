import Foundation
import Testing
import WidgetHostABI
import WidgetHostIsolation

/// The SDK for plugin authors: the C header's checks, the ABI layout table of
/// docs/abi.md, the limits the header states, and the Rust crate's tests.
@Suite("SDK")
struct SDKTests {
    @Test func headerCompilesCleanInEveryLanguageMode() {
        let result = CLI.shell("bash '\(CLI.repositoryRoot)/SDK/tests/header_check.sh'")
        #expect(result.status == 0, "SDK/tests/header_check.sh failed:\n\(result.output)")
        #expect(result.output.contains("header checks passed"), "\(result.output)")
    }

    @Test func abiLayoutTableMatchesTheHeader() {
        let result = CLI.shell(
            "bash '\(CLI.repositoryRoot)/SDK/tests/layout_table.sh' --check '\(CLI.repositoryRoot)/docs/abi.md'")
        #expect(result.status == 0, "\(result.output)")
    }

    @Test func layoutCheckFailsOnAStaleTable() throws {
        // The check can fail: a copy of abi.md with the 1.0 descriptor size.
        let copy = CLI.temporaryDirectory("stale-abi") + "/abi.md"
        let text = try String(contentsOfFile: CLI.repositoryRoot + "/docs/abi.md", encoding: .utf8)
        let stale = text.replacingOccurrences(
            of: "| `wh_plugin_descriptor` | 96 |", with: "| `wh_plugin_descriptor` | 88 |")
        #expect(stale != text)
        try stale.write(toFile: copy, atomically: true, encoding: .utf8)
        let result = CLI.shell("bash '\(CLI.repositoryRoot)/SDK/tests/layout_table.sh' --check '\(copy)'")
        #expect(result.status == 1)
        #expect(result.output.contains("-| `wh_plugin_descriptor` | 88 |"), "\(result.output)")
    }

    @Test func headerLimitsAreTheHostsLimits() {
        #expect(Int(WH_MAX_ENTRIES) == WidgetHostLimits.maxEntries)
        #expect(Int(WH_MAX_RESULT_BYTES) == WidgetHostLimits.maxResultBytes)
        #expect(WH_MIN_ENTRY_SPACING == WidgetHostLimits.minimumEntrySpacing)
        #expect(Int(WH_LOG_BYTES_PER_STREAM) == WidgetHostLimits.logBytesPerStream)
        #expect(WH_TIMEOUT_LOAD == DefaultTimeouts.load)
        #expect(WH_TIMEOUT_PLACEHOLDER == DefaultTimeouts.placeholder)
        #expect(WH_TIMEOUT_SNAPSHOT == DefaultTimeouts.snapshot)
        #expect(WH_TIMEOUT_SNAPSHOT_PREVIEW == DefaultTimeouts.snapshotPreview)
        #expect(WH_TIMEOUT_TIMELINE == DefaultTimeouts.timeline)
    }

    @Test func rustCrateTestsPass() {
        let target = CLI.temporaryDirectory("rust-crate-target")
        let result = CLI.shell(
            "cd '\(CLI.repositoryRoot)/SDK/rust' && PATH=\"$HOME/.cargo/bin:$PATH\" cargo test --offline --quiet --target-dir '\(target)' 2>&1"
        )
        #expect(result.status == 0, "cargo test --offline in SDK/rust failed:\n\(result.output)")
        #expect(result.output.contains("test result: ok"), "\(result.output)")
    }
}
