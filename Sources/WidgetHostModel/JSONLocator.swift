/// Where each value of a JSON text starts, by path, so that an error about a
/// field can name its line and column.
///
/// Paths are written as in error messages: `instances[2].family`; the
/// top-level value is `""`.
///
/// ```swift
/// let positions = JSONLocator.positions(in: #"{"instances": [{"id": "a"}]}"#)
/// positions["instances[0].id"]   // JSONLocator.Position(line: 1, column: 23)
/// ```
public enum JSONLocator {
    /// A 1-based line and column (in characters of UTF-8 bytes).
    public struct Position: Sendable, Hashable, CustomStringConvertible {
        public var line: Int
        public var column: Int
        public var description: String { "\(line):\(column)" }
        /// A position at `line` and `column`, both from 1.
        public init(line: Int, column: Int) {
            self.line = line
            self.column = column
        }
    }

    /// The position of every value, keyed by path. A text that is not valid
    /// JSON gives the positions of what was read before the error.
    public static func positions(in text: String) -> [String: Position] {
        var scanner = Scanner(bytes: Array(text.utf8))
        scanner.value(path: "")
        return scanner.positions
    }

    /// The position of `path`, or of its nearest enclosing value that has one
    /// (for a missing member, the object that lacks it).
    public static func position(of path: String, in positions: [String: Position]) -> Position? {
        var current = path
        while true {
            if let position = positions[current] { return position }
            if current.isEmpty { return nil }
            if let cut = current.lastIndex(where: { $0 == "." || $0 == "[" }) {
                current = String(current[..<cut])
            } else {
                current = ""
            }
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        var line = 1
        var lineStart = 0
        var positions: [String: Position] = [:]
        var failed = false

        init(bytes: [UInt8]) { self.bytes = bytes }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func advance() {
            if bytes[index] == UInt8(ascii: "\n") {
                line += 1
                lineStart = index + 1
            }
            index += 1
        }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { advance() }
        }

        mutating func value(path: String) {
            skipWhitespace()
            guard let byte = current, !failed else { return }
            positions[path] = Position(line: line, column: index - lineStart + 1)
            switch byte {
            case UInt8(ascii: "{"): object(path: path)
            case UInt8(ascii: "["): array(path: path)
            case UInt8(ascii: "\""): _ = string()
            default:
                while let byte = current, !",]} \n\r\t".utf8.contains(byte) { advance() }
            }
        }

        mutating func object(path: String) {
            advance()  // {
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                advance()
                return
            }
            while !failed {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else { return fail() }
                let key = string()
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { return fail() }
                advance()
                value(path: path.isEmpty ? key : path + "." + key)
                skipWhitespace()
                if current == UInt8(ascii: ",") {
                    advance()
                } else if current == UInt8(ascii: "}") {
                    advance()
                    return
                } else {
                    return fail()
                }
            }
        }

        mutating func array(path: String) {
            advance()  // [
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                advance()
                return
            }
            var element = 0
            while !failed {
                value(path: "\(path)[\(element)]")
                element += 1
                skipWhitespace()
                if current == UInt8(ascii: ",") {
                    advance()
                } else if current == UInt8(ascii: "]") {
                    advance()
                    return
                } else {
                    return fail()
                }
            }
        }

        /// Reads a string literal (the scanner is on its opening quote).
        mutating func string() -> String {
            advance()  // "
            var raw: [UInt8] = []
            while let byte = current {
                if byte == UInt8(ascii: "\\") {
                    advance()
                    if let escaped = current {
                        raw.append(escaped == UInt8(ascii: "n") ? 0x0A : escaped)
                        advance()
                    }
                    continue
                }
                advance()
                if byte == UInt8(ascii: "\"") { break }
                raw.append(byte)
            }
            return String(decoding: raw, as: UTF8.self)
        }

        mutating func fail() { failed = true }
    }
}
