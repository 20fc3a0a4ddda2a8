import WidgetHostJSON

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A parsed JSON value, used to check what plugins return and to show it.
///
/// ```swift
/// let value = try JSONValue.parse(#"{"health": 0.75}"#)
/// value.isObject          // true
/// value.compactText(limit: 40)
/// ```
public enum JSONValue: Sendable, Hashable, Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    /// Members, sorted by name.
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(compactText(limit: .max)) }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: Key.self) {
            var members: [(String, JSONValue)] = []
            // JSONDecoder does not keep member order; sort for stable output.
            for key in container.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                members.append((key.stringValue, try container.decode(JSONValue.self, forKey: key)))
            }
            self = .object(members)
            return
        }
        if var container = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !container.isAtEnd { items.append(try container.decode(JSONValue.self)) }
            self = .array(items)
            return
        }
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    /// Parses JSON text. Throws `JSONValue.ParseError` with the decoder's
    /// explanation when the text is not JSON.
    public static func parse(_ text: String) throws(ParseError) -> JSONValue {
        // A strict parser first; JSONDecoder for what it does not accept
        // (and to explain why a text is not JSON).
        if let value = JSONScanner.parse(text) { return value }
        if let refusal = JSONScanner.refusal(text) {
            var text = text
            throw text.withUTF8 { ParseError(refusal, in: $0) }
        }
        do {
            try JSONNesting.check(text)
            return try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        } catch {
            throw ParseError(explanation: Self.explain(error))
        }
    }

    /// Checks that `text` is JSON without building the value, and returns the
    /// name of its top-level type (`object`, `array`, ...) as
    /// `parse(text).typeName` would; throws what `parse` throws. The host
    /// checks every entry of every result this way: no allocation for a
    /// good one.
    ///
    /// ```swift
    /// try JSONValue.typeName(of: #"{"health": 0.75}"#)   // "object"
    /// try JSONValue.typeName(of: "[1, 2")               // throws ParseError
    /// ```
    public static func typeName(of text: String) throws(ParseError) -> String {
        guard let first = JSONScanner.check(text) else { return try parse(text).typeName }
        switch first {
        case UInt8(ascii: "{"): return "object"
        case UInt8(ascii: "["): return "array"
        case UInt8(ascii: "\""): return "string"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return "boolean"
        case UInt8(ascii: "n"): return "null"
        default: return "number"
        }
    }

    /// Throws the ``ParseError`` `parse` would throw for a duplicate member
    /// name or a number beyond `Double`'s range in `bytes`; returns for
    /// anything else, JSON or not (for text read by another decoder, such as
    /// a control request read by `JSONDecoder`, which takes the last of
    /// duplicate names). One pass without allocation for a good text.
    ///
    /// ```swift
    /// try JSONValue.refuseAmbiguous(Array(#"{"v":2,"v":1}"#.utf8))   // throws: duplicate key "v"
    /// ```
    public static func refuseAmbiguous(_ bytes: [UInt8]) throws(ParseError) {
        let refusal: JSONScanner.Refusal? = bytes.withUnsafeBufferPointer { buffer in
            JSONScanner.accepts(buffer) ? nil : JSONScanner.refusal(in: buffer)
        }
        guard let refusal else { return }
        throw bytes.withUnsafeBufferPointer { ParseError(refusal, in: $0) }
    }

    /// Why a text is not JSON, or is JSON the host refuses: a member name
    /// twice in one object, or a number beyond `Double`'s range.
    public struct ParseError: Error, Sendable, CustomStringConvertible {
        /// The problem in words; for a refusal with its line, column and path.
        public var explanation: String
        /// What the problem is.
        public var kind: Kind = .notJSON
        /// Where (line and column of UTF-8 bytes) for a duplicate key (its
        /// second occurrence) or a number out of range; nil otherwise.
        public var position: JSONLocator.Position?
        /// The path of the value at fault, as ``JSONLocator`` writes it
        /// (`instances[0].id`, `""` for the top level); nil when not known.
        public var path: String?
        public var description: String { explanation }

        /// The kinds of ``ParseError``.
        public enum Kind: Sendable, Hashable {
            /// Not JSON (the explanation says why).
            case notJSON
            /// A member name that appears twice in one object (`first`: where
            /// it first appears); JSON allows it, but which value counts is
            /// then up to the reader, so the host refuses it.
            case duplicateKey(name: String, first: JSONLocator.Position)
            /// A number whose value is beyond `Double`'s range (`1e400`), as written.
            case numberOutOfRange(literal: String)
        }

        /// Creates an error with only an explanation (`kind` ``Kind/notJSON``).
        public init(explanation: String) { self.explanation = explanation }

        init(_ refusal: JSONScanner.Refusal, in buffer: UnsafeBufferPointer<UInt8>) {
            switch refusal {
            case .duplicateKey(let name, let path, let offset, let firstOffset):
                let at = JSONScanner.position(of: offset, in: buffer)
                let first = JSONScanner.position(of: firstOffset, in: buffer)
                self.init(
                    explanation:
                        "duplicate key \(JSONValue.quote(name)) at line \(at.line), column \(at.column) (\(path)), first at line \(first.line), column \(first.column); \(Self.duplicateAdvice)"
                )
                kind = .duplicateKey(name: name, first: first)
                position = at
                self.path = path
            case .numberOutOfRange(let literal, let path, let offset):
                let at = JSONScanner.position(of: offset, in: buffer)
                let field = path.isEmpty ? "" : " (\(path))"
                self.init(
                    explanation:
                        "number \(literal) at line \(at.line), column \(at.column)\(field) is out of range: \(Self.numberRange)"
                )
                kind = .numberOutOfRange(literal: literal)
                position = at
                self.path = path
            }
        }

        /// What a duplicate key should become.
        public static let duplicateAdvice = "a key may appear once in an object: remove or rename one"
        /// The range of every JSON number the host reads.
        public static let numberRange =
            "expected a finite number, at most 1.7976931348623157e308 in magnitude (a 64-bit double)"
    }

    private static func explain(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            if let underlying = context.underlyingError {
                return "\(context.debugDescription) (\(underlying))"
            }
            return context.debugDescription
        }
        return "\(error)"
    }

    /// True for a JSON object.
    public var isObject: Bool {
        if case .object = self { return true }
        return false
    }

    /// The name of the value's JSON type (`object`, `array`, ...).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The members of an object, as (name, JSON text) pairs.
    public var objectMembers: [(String, JSONValue)]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// Compact JSON text, cut with `…` after `limit` characters.
    public func compactText(limit: Int = 80) -> String {
        var out = ""
        write(to: &out, limit: limit)
        if Self.beyond(limit, out) { return String(out.prefix(max(0, limit - 1))) + "…" }
        return out
    }

    private func write(to out: inout String, limit: Int) {
        if Self.beyond(limit, out) { return }
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(let value):
            if value.rounded() == value, abs(value) < 1e15 {
                out += String(Int64(value))
            } else {
                out += "\(value)"
            }
        case .string(let value): out += Self.quote(value)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(to: &out, limit: limit)
                if Self.beyond(limit, out) { return }
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { out += "," }
                out += Self.quote(member.0) + ":"
                member.1.write(to: &out, limit: limit)
                if Self.beyond(limit, out) { return }
            }
            out += "}"
        }
    }

    /// Whether `out` has more than `limit` characters; its UTF-8 length
    /// (at hand) answers first, so a text within the limit is not counted.
    private static func beyond(_ limit: Int, _ out: String) -> Bool {
        out.utf8.count > limit && out.count > limit
    }

    /// A JSON string literal for `text` (``JSONTextEncoder/appendQuoted(_:to:)``).
    public static func quote(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        JSONTextEncoder.appendQuoted(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
