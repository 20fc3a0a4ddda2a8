/// The deepest nesting of arrays and objects the host reads from outside
/// text: a control request, a configuration file, a plugin's answer, a row of
/// the state file.
///
/// Foundation's `JSONDecoder` stops a process with a trap (not an error) on a
/// text nested deeper than 512 levels, so every text that reaches it from
/// outside is measured here first, in one pass over its bytes and without
/// allocating, and refused with a typed error when it is too deep.
///
/// ```swift
/// try JSONNesting.check(line)                  // throws JSONNesting.TooDeep
/// let request = try JSONDecoder().decode(Request.self, from: Data(line))
/// ```
public enum JSONNesting {
    /// The deepest nesting accepted: 512 arrays or objects inside one another,
    /// as `JSONScanner` and `JSONDecoder` accept.
    public static let limit = 512

    /// A text nested deeper than `limit`.
    public struct TooDeep: Error, Sendable, Equatable, CustomStringConvertible {
        /// The byte offset of the bracket that went one level too deep.
        public var offset: Int
        public var description: String {
            "arrays and objects are nested deeper than \(JSONNesting.limit) levels (at byte \(offset + 1)); "
                + "flatten the value"
        }
    }

    /// The byte offset of the first `[` or `{` (outside strings) that opens
    /// level `limit + 1`, or nil when the text stays within the limit. Not a
    /// validator: brackets that do not match are the parser's business.
    public static func firstTooDeep<Bytes: Sequence<UInt8>>(in bytes: Bytes) -> Int? {
        var depth = 0
        var inString = false
        var escaped = false
        var offset = 0
        for byte in bytes {
            defer { offset += 1 }
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > limit { return offset }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth = max(0, depth - 1)
            default: break
            }
        }
        return nil
    }

    /// Throws `TooDeep` when `bytes` nest deeper than `limit`.
    public static func check<Bytes: Sequence<UInt8>>(_ bytes: Bytes) throws(TooDeep) {
        if let offset = firstTooDeep(in: bytes) { throw TooDeep(offset: offset) }
    }

    /// Throws `TooDeep` when `text` nests deeper than `limit`.
    public static func check(_ text: String) throws(TooDeep) {
        try check(text.utf8)
    }
}
