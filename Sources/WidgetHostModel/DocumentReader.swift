import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// A problem in a JSON document a person wrote (a scenario, the daemon's
/// configuration): names the file, the line and column, the field, the
/// problem and where the format is documented.
///
/// ```text
/// host.json:14:17: instances[2].family: unknown family "systemHuge"; expected one of ... (see docs/daemon.md)
/// ```
public struct DocumentError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Reads typed fields out of a parsed JSON document and turns every mistake
/// into a ``DocumentError`` that points at the line of the offending value.
///
/// ```swift
/// let reader = try DocumentReader(file: "host.json", documentation: "docs/daemon.md")
/// let top = try reader.members(reader.root, "(top level)", allowed: ["instances"])
/// let id = try reader.requiredString(top["id"], "id")
/// ```
public struct DocumentReader: Sendable {
    /// The file, as the user named it.
    public var file: String
    /// The parsed document.
    public var root: JSONValue
    /// Where the format is documented, appended to every error.
    public var documentation: String
    /// Where each value starts, keyed by JSON path: worked out at the first
    /// use (an error's line and column, a big integer's literal), not for
    /// every document read (a configuration of 100,000 instances).
    public var positions: [String: JSONLocator.Position] { located.positions }
    /// The document's bytes and, once asked for, its positions.
    private let located: Located

    private final class Located: Sendable {
        let source: [UInt8]
        private let cache = Mutex<[String: JSONLocator.Position]?>(nil)

        init(source: [UInt8]) { self.source = source }

        var positions: [String: JSONLocator.Position] {
            if let known = cache.withLock({ $0 }) { return known }
            let found = JSONLocator.positions(in: String(decoding: source, as: UTF8.self))
            cache.withLock { $0 = found }
            return found
        }
    }

    /// Reads and parses `file`; a missing file or invalid JSON is a ``DocumentError``.
    /// `file` may also be a pipe (`<(...)`, a FIFO) or `-` for standard input:
    /// it is read to its end.
    public init(file: String, documentation: String) throws(DocumentError) {
        guard let bytes = Self.readAll(file) else {
            throw DocumentError(
                "\(file): cannot read the file: \(String(cString: strerror(errno))) (does it exist, and may this user read it?)"
            )
        }
        try self.init(
            file: file == "-" ? "(standard input)" : file, text: String(decoding: bytes, as: UTF8.self),
            documentation: documentation)
    }

    /// The whole contents of `path` (`-`: standard input), read with `read(2)`
    /// so that pipes and character devices work as well as regular files;
    /// nil with `errno` set when it cannot be opened or read.
    static func readAll(_ path: String) -> [UInt8]? {
        let fd = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { if fd != STDIN_FILENO { close(fd) } }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes.append(contentsOf: chunk[0..<count])
            } else if count == 0 {
                return bytes
            } else if errno != EINTR {
                return nil
            }
        }
    }

    /// Parses `text` as the contents of `file`.
    public init(file: String, text: String, documentation: String) throws(DocumentError) {
        self.file = file
        self.documentation = documentation
        self.located = Located(source: Array(text.utf8))
        do {
            root = try JSONValue.parse(text)
        } catch {
            if let position = error.position {
                // Valid JSON the host refuses: say where, which field and why.
                let field = error.path.map { $0.isEmpty ? "(top level)" : $0 } ?? "(top level)"
                let problem: String
                switch error.kind {
                case .duplicateKey(let name, let first):
                    problem =
                        "the key \(JSONValue.quote(name)) appears twice in this object (first at \(first)); \(JSONValue.ParseError.duplicateAdvice)"
                case .numberOutOfRange(let literal):
                    problem = "the number \(literal) is out of range: \(JSONValue.ParseError.numberRange)"
                case .notJSON: problem = error.explanation
                }
                throw DocumentError("\(file):\(position): \(field): \(problem) (see \(documentation))")
            }
            // Where the text stops being JSON, as line:column.
            var location = ""
            if let offset = JSONScanner.stopOffset(text) {
                let before = Array(text.utf8.prefix(offset))
                let line = before.count { $0 == UInt8(ascii: "\n") } + 1
                let column = offset - (before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0) + 1
                location = ":\(line):\(column)"
            }
            throw DocumentError(
                "\(file)\(location): not valid JSON: \(error.explanation); see \(documentation) for the format")
        }
    }

    /// An error naming the file, the line and column of `field` (or of the
    /// object that lacks it), the field, and the problem.
    public func fail(_ field: String, _ problem: String) -> DocumentError {
        let location =
            JSONLocator.position(of: field == "(top level)" ? "" : field, in: positions).map { ":\($0)" } ?? ""
        return DocumentError("\(file)\(location): \(field): \(problem) (see \(documentation))")
    }

    /// The members of an object, refusing any name not in `allowed`.
    public func members(_ value: JSONValue, _ field: String, allowed: [String]) throws(DocumentError) -> [String:
        JSONValue]
    {
        guard let list = value.objectMembers else {
            throw fail(field, "expected an object, found a \(value.typeName)")
        }
        var result: [String: JSONValue] = [:]
        for (name, member) in list {
            let path = field == "(top level)" ? name : "\(field).\(name)"
            guard allowed.contains(name) else {
                throw fail(path, "unknown field; known fields: \(allowed.joined(separator: ", "))")
            }
            result[name] = member
        }
        return result
    }

    /// The elements of an array (nil when absent).
    public func array(_ value: JSONValue?, _ field: String) throws(DocumentError) -> [JSONValue]? {
        guard let value else { return nil }
        guard case .array(let list) = value else {
            throw fail(field, "expected an array, found a \(value.typeName)")
        }
        return list
    }

    public func string(_ value: JSONValue?, _ field: String) throws(DocumentError) -> String? {
        guard let value else { return nil }
        guard case .string(let text) = value else {
            throw fail(field, "expected a string, found a \(value.typeName)")
        }
        return text
    }

    public func requiredString(_ value: JSONValue?, _ field: String) throws(DocumentError) -> String {
        guard let text = try string(value, field), !text.isEmpty else {
            throw fail(field, "required, a non-empty string")
        }
        return text
    }

    public func bool(_ value: JSONValue?, _ field: String) throws(DocumentError) -> Bool? {
        guard let value else { return nil }
        guard case .bool(let flag) = value else {
            throw fail(field, "expected true or false, found a \(value.typeName)")
        }
        return flag
    }

    public func number(_ value: JSONValue?, _ field: String) throws(DocumentError) -> Double? {
        guard let value else { return nil }
        guard case .number(let number) = value, number.isFinite else {
            throw fail(field, "expected a number, found a \(value.typeName)")
        }
        return number
    }

    /// A whole number in `range`, read from its literal text as an integer
    /// (never through `Double`: `9007199254740993` stays itself, and a literal
    /// beyond `Int` is refused, not rounded). `3.0` and `1e3` are accepted as
    /// the whole numbers they are (``Bounds/exactInt(_:)``); nil when absent.
    ///
    /// ```swift
    /// let crashes = try reader.integer(m["quarantineAfterCrashes"], "failures.quarantineAfterCrashes", in: 1...1000)
    /// ```
    public func integer(_ value: JSONValue?, _ field: String, in range: ClosedRange<Int>) throws(DocumentError)
        -> Int?
    {
        guard let value else { return nil }
        guard case .number(let number) = value else {
            throw fail(
                field,
                "expected a whole number from \(range.lowerBound) to \(range.upperBound), found a \(value.typeName)")
        }
        // Below 2^53 the number is exact; above it, its literal text says
        // which integer it was (positions are worked out only then, or for an error).
        let parsed: Int?
        if abs(number) < Bounds.largestExactInteger {
            parsed = Bounds.exactInt(number)
        } else if let literal = self.literal(at: field), literal.allSatisfy({ $0 == "-" || $0.isASCII && $0.isNumber })
        {
            parsed = Int(literal)  // nil when beyond Int
        } else {
            parsed = Bounds.exactInt(number)
        }
        guard let parsed, range.contains(parsed) else {
            throw fail(
                field,
                "expected a whole number from \(range.lowerBound) to \(range.upperBound), found \(self.literal(at: field) ?? "\(number)")"
            )
        }
        return parsed
    }

    /// The literal text of the scalar value at `field`, when its position is known.
    private func literal(at field: String) -> String? {
        guard let position = positions[field] else { return nil }
        let source = located.source
        var line = 1
        var index = 0
        while line < position.line, index < source.count {
            if source[index] == UInt8(ascii: "\n") { line += 1 }
            index += 1
        }
        index += position.column - 1
        guard index >= 0, index < source.count else { return nil }
        var end = index
        while end < source.count, !",]} \n\r\t".utf8.contains(source[end]) { end += 1 }
        return String(decoding: source[index..<end], as: UTF8.self)
    }

    /// `"90s"`, `"5m"`, `"2h30m"`, `"1d"` or a number of seconds, from 0 to
    /// 10 years (``Bounds/isDuration(_:)``): `1e300` or `-5` is refused
    /// with the field's line, never passed on.
    public func duration(_ value: JSONValue?, _ field: String) throws(DocumentError) -> Double? {
        guard let value else { return nil }
        let seconds: Double
        if let number = try? number(value, field) {
            seconds = number
        } else {
            guard let text = try string(value, field), let parsed = DurationText.parse(text) else {
                throw fail(field, "expected a duration such as \"90s\", \"5m\", \"2h30m\", \"1d\"")
            }
            seconds = parsed
        }
        guard Bounds.isDuration(seconds) else {
            throw fail(
                field,
                "expected a duration from 0 to 10 years (in seconds, or as \"90s\", \"5m\", \"1d\"), found \(seconds)")
        }
        return seconds
    }
}

extension DocumentReader {
    /// A ``duration(_:_:)`` within `range`; nil when absent. `purpose` says
    /// what the setting is for and how to write it: the message's fix.
    public func duration(_ value: JSONValue?, _ field: String, in range: ClosedRange<Double>, purpose: String)
        throws(DocumentError) -> Double?
    {
        guard let seconds = try duration(value, field) else { return nil }
        guard range.contains(seconds) else {
            throw fail(
                field,
                "expected a duration from \(Timestamp.duration(range.lowerBound)) to \(Timestamp.duration(range.upperBound)), found \(Timestamp.duration(seconds)); \(purpose)"
            )
        }
        return seconds
    }

    /// A plugin call's timeout, as a ``duration(_:_:)`` (`"2s"`, `"1m"` or
    /// seconds) within ``Bounds/isCallTimeout(_:)``: more than 0 and at most
    /// 10 minutes; nil when absent. The scenario's and the daemon's
    /// `timeout` are read here, so they take the same values.
    public func callTimeout(_ value: JSONValue?, _ field: String) throws(DocumentError) -> Double? {
        guard let seconds = try duration(value, field) else { return nil }
        guard Bounds.isCallTimeout(seconds) else {
            throw fail(
                field,
                "expected a timeout of \(Bounds.callTimeoutRange) (in seconds, or as \"500ms\", \"2s\", \"1m\"), found \(seconds) s"
            )
        }
        return seconds
    }
}

/// Durations written as text: `90s`, `5m`, `2h30m`, `1d12h`, `250ms`.
public enum DurationText {
    /// Seconds, or nil when `text` is not a duration.
    public static func parse(_ text: String) -> Double? {
        var total = 0.0
        var number = ""
        var matched = false
        let characters = Array(text)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character.isNumber || character == "." {
                number.append(character)
                index += 1
                continue
            }
            guard let value = Double(number) else { return nil }
            var unit = String(character)
            if character == "m", index + 1 < characters.count, characters[index + 1] == "s" {
                unit = "ms"
                index += 1
            }
            switch unit {
            case "ms": total += value / 1000
            case "s": total += value
            case "m": total += value * 60
            case "h": total += value * 3600
            case "d": total += value * 86_400
            default: return nil
            }
            matched = true
            number = ""
            index += 1
        }
        if !number.isEmpty {
            guard let value = Double(number) else { return nil }
            total += value
            matched = true
        }
        return matched && total.isFinite ? total : nil
    }
}
