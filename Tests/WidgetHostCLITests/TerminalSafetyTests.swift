import Foundation
import Testing

/// A plugin's strings (name, ids, entries, error message, log) reach the
/// terminal escaped: no raw ESC, BEL or C1 control leaves `widgethost`
/// (issue 14, item 9).
@Suite("Terminal safety")
struct TerminalSafetyTests {
    @Test(arguments: [["load"], ["timeline", "--kind", "test.fixture", "--verbose"]])
    func pluginStringsAreEscaped(_ command: [String]) throws {
        var arguments = command
        arguments.insert(CLI.fixtures + "/escape_sequences.so", at: 1)
        if command.first == "load" { arguments.append("--verbose") }
        let result = try CLI.run(arguments + ["--data-dir", CLI.dataDirectory])
        let printed = result.stdout + result.stderr
        let raw = printed.unicodeScalars.filter {
            ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || ($0.value >= 0x7F && $0.value < 0xA0)
        }
        #expect(raw.isEmpty, "raw control characters: \(raw.map { String($0.value, radix: 16) })")
        #expect(printed.contains("\\u{1B}"), "the sequences are shown escaped:\n\(printed)")
        #expect(result.status != 0, "the timeline fails")
    }
}
