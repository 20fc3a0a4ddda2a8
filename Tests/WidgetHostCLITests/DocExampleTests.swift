import Foundation
import Testing

/// Runs every shell example in README.md and docs/*.md marked runnable and
/// compares what it prints with what the document shows.
///
/// The marker is the fence's info string `sh runnable`. In such a block a
/// line starting with `$ ` is a command (run with bash in the block's
/// directory, stdout and stderr together, `widgethost` on PATH); the lines
/// after it, up to the next command, are its expected output. When comparing:
/// durations (`4.9ms`, `785µs`, `3h`) and ISO 8601 dates are ignored; `...`
/// inside a line matches any text; a line that is only `...` matches any
/// number of lines. Each block runs in a fresh directory holding links to
/// the repository's top-level folders (`.build`, `samples`, `SDK` ...), so
/// paths like `.build/debug/libCharacterPlugin.so` work, and whatever the
/// example writes stays there. Keep marked examples to ones that run in
/// seconds.
@Suite("Documentation examples")
struct DocExampleTests {
    struct Example: CustomStringConvertible {
        var file: String
        var line: Int
        var steps: [(command: String, expected: [String])]
        var description: String { "\(file):\(line)" }
    }

    /// Every runnable block of `file`.
    static func examples(in file: String) -> [Example] {
        guard let text = try? String(contentsOfFile: CLI.repositoryRoot + "/" + file, encoding: .utf8) else {
            return []
        }
        var examples: [Example] = []
        var current: Example?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if current == nil {
                if line.trimmingCharacters(in: .whitespaces) == "```sh runnable" {
                    current = Example(file: file, line: index + 1, steps: [])
                }
                continue
            }
            if line.hasPrefix("```") {
                examples.append(current!)
                current = nil
            } else if line.hasPrefix("$ ") {
                current!.steps.append((String(line.dropFirst(2)), []))
            } else if !current!.steps.isEmpty {
                current!.steps[current!.steps.count - 1].expected.append(String(line))
            }
        }
        return examples
    }

    static let documents: [String] = {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: CLI.repositoryRoot + "/docs")) ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }()

    /// Durations and dates replaced, trailing blanks dropped.
    static func normalized(_ line: String) -> String {
        var text = line
        let patterns = [
            #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?"#: "<date>",
            #"\d+(\.\d+)?(ns|µs|us|ms|s|m|h|d)\b"#: "<duration>",
        ]
        for (pattern, replacement) in patterns {
            text = text.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
        }
        while text.last == " " { text.removeLast() }
        return text
    }

    /// `line` matches `pattern`, where `...` stands for any text.
    static func lineMatches(_ line: String, _ pattern: String) -> Bool {
        let pieces = pattern.components(separatedBy: "...")
        if pieces.count == 1 { return line == pattern }
        guard line.hasPrefix(pieces[0]) else { return false }
        var rest = line.dropFirst(pieces[0].count)
        for piece in pieces.dropFirst().dropLast() where !piece.isEmpty {
            guard let range = rest.range(of: piece) else { return false }
            rest = rest[range.upperBound...]
        }
        return rest.hasSuffix(pieces.last!)
    }

    /// `lines` match `patterns`, a pattern line `...` matching any number of lines.
    static func matches(_ lines: ArraySlice<String>, _ patterns: ArraySlice<String>) -> Bool {
        guard let pattern = patterns.first else { return lines.isEmpty }
        if pattern.trimmingCharacters(in: .whitespaces) == "..." {
            let rest = patterns.dropFirst()
            return lines.indices.contains { matches(lines[$0...], rest) } || matches(lines[lines.endIndex...], rest)
        }
        guard let line = lines.first, lineMatches(line, pattern) else { return false }
        return matches(lines.dropFirst(), patterns.dropFirst())
    }

    /// A directory with links to the repository's top-level folders.
    static func sandbox(for example: Example) throws -> String {
        let directory = CLI.temporaryDirectory(
            "doc-\(example.file.replacingOccurrences(of: "/", with: "-"))-\(example.line)")
        let manager = FileManager.default
        for entry in try manager.contentsOfDirectory(atPath: directory) {
            try manager.removeItem(atPath: directory + "/" + entry)
        }
        for name in [".build", "samples", "SDK", "Plugins", "docs", "scripts", "Tests"] {
            try manager.createSymbolicLink(
                atPath: directory + "/" + name, withDestinationPath: CLI.repositoryRoot + "/" + name)
        }
        return directory
    }

    static func run(_ example: Example) throws -> [String] {
        var problems: [String] = []
        let directory = try sandbox(for: example)
        for step in example.steps {
            let result = CLI.shell(
                "cd '\(directory)' && export PATH='\(CLI.buildDirectory)':\"$HOME/.cargo/bin:$PATH\" XDG_DATA_HOME='\(directory)/.data' && \(step.command) 2>&1"
            )
            var actual = result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if actual.last == "" { actual.removeLast() }
            var expected = step.expected
            while expected.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { expected.removeLast() }
            let ok = matches(
                ArraySlice(actual.map(normalized)), ArraySlice(expected.map(normalized)))
            if !ok {
                problems.append(
                    """
                    \(example): `\(step.command)` (exit \(result.status)) printed:
                    \(actual.joined(separator: "\n"))
                    --- the document expects:
                    \(expected.joined(separator: "\n"))
                    """)
            }
        }
        return problems
    }

    @Test func theMatcherIgnoresTimesAndHonoursWildcards() {
        #expect(
            Self.normalized("Loaded   in 4.9ms (x), 621µs, at 2026-11-23T08:00:00Z")
                == "Loaded   in <duration> (x), <duration>, at <date>")
        #expect(Self.lineMatches("File     /a/b/libX.so", "File     .../libX.so"))
        #expect(!Self.lineMatches("File     /a/b/libY.so", "File     .../libX.so"))
        #expect(Self.matches(["a", "b", "c", "d"], ["a", "...", "d"]))
        #expect(Self.matches(["a", "d"], ["a", "  ...", "d"]))
        #expect(!Self.matches(["a", "b"], ["a"]))
        #expect(!Self.matches(["a", "b", "c"], ["a", "...", "d"]))
    }

    @Test func everyRunnableExampleInTheDocsPrintsWhatTheyShow() throws {
        let examples = Self.documents.flatMap(Self.examples(in:))
        #expect(examples.count >= 3, "runnable examples found: \(examples)")
        var problems: [String] = []
        for example in examples {
            problems += try Self.run(example)
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n\n"))")
    }
}
