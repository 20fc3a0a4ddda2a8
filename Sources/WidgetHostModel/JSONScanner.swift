/// A strict JSON (RFC 8259) parser for `JSONValue.parse`'s fast path: the
/// host checks every entry of every result, and going through `JSONDecoder`
/// and `Decodable` costs a type lookup by mangled name per value. Returns
/// nil for anything it is not sure about (invalid JSON, duplicate member
/// names, numbers out of `Double`'s range, lone surrogates); the caller then
/// takes the `JSONDecoder` path, which explains the problem.
///
/// It reads the text's UTF-8 in place. `check` runs the same rules without
/// building anything: no value, no string, no array is allocated (member
/// names are compared where they lie in the text), which is what the host
/// needs for a plugin's entries: are they JSON objects.
///
/// `refusal` reads a text the others returned nil for once more, to say
/// whether it was refused for a duplicate member name or a number beyond
/// `Double` (where, and under which path), which `JSONDecoder` does not say
/// (it takes the last of duplicate names, and calls `1e400` a type mismatch).
struct JSONScanner {
    private let bytes: UnsafeBufferPointer<UInt8>
    /// false: validate only; every value is returned as `.null`.
    private let building: Bool
    /// true (`refusal`): each object's names are kept as they come, the path
    /// of the current value is kept, and the first refusal is recorded.
    private var diagnosing = false
    private var index = 0
    private var depth = 0
    /// Diagnosing: the path to the current value, one component a level.
    private var path: [PathComponent] = []
    /// Diagnosing: why the text was refused, when it is for a duplicate
    /// name or a number out of range.
    private var refused: Refusal?

    /// A text refused for something `JSONDecoder` would accept or misname.
    enum Refusal: Equatable {
        /// `name` appears twice in one object: `offset` is the byte offset of
        /// its second occurrence (its opening quote), `firstOffset` of the first.
        case duplicateKey(name: String, path: String, offset: Int, firstOffset: Int)
        /// A number whose value is beyond `Double`'s range (`1e400`): its
        /// literal text and byte offset.
        case numberOutOfRange(literal: String, path: String, offset: Int)
    }

    private enum PathComponent {
        case member(String)
        case element(Int)
    }

    static func parse(_ text: String) -> JSONValue? {
        var text = text
        return text.withUTF8 { buffer in
            var scanner = JSONScanner(bytes: buffer, building: true)
            return scanner.document()
        }
    }

    /// The first byte of the top-level value of a text this scanner accepts
    /// (`{` for an object), or nil when `parse` would return nil.
    static func check(_ text: String) -> UInt8? {
        var text = text
        return text.withUTF8 { buffer in
            var scanner = JSONScanner(bytes: buffer, building: false)
            guard scanner.document() != nil else { return nil }
            var first = 0
            while first < buffer.count, Self.isSpace(buffer[first]) { first += 1 }
            return buffer[first]
        }
    }

    /// The byte offset where the scanner stopped in a text it does not
    /// accept (about where the text stops being JSON), or nil when it accepts it.
    static func stopOffset(_ text: String) -> Int? {
        var text = text
        return text.withUTF8 { buffer in
            var scanner = JSONScanner(bytes: buffer, building: false)
            return scanner.document() == nil ? min(scanner.index, buffer.count) : nil
        }
    }

    /// Why the building parse refuses `text`, when it is for a duplicate
    /// member name or a number beyond `Double`'s range (the first in the
    /// text); nil when it accepts it or refuses it for anything else. Costs
    /// a set of names per object: for texts already refused, not for every
    /// text read.
    static func refusal(_ text: String) -> Refusal? {
        var text = text
        return text.withUTF8 { refusal(in: $0) }
    }

    /// ``refusal(_:)`` of UTF-8 bytes.
    static func refusal(in buffer: UnsafeBufferPointer<UInt8>) -> Refusal? {
        var scanner = JSONScanner(bytes: buffer, building: true)
        scanner.diagnosing = true
        _ = scanner.document()
        return scanner.refused
    }

    /// Whether `check` accepts these UTF-8 bytes (see ``check(_:)``).
    static func accepts(_ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        var scanner = JSONScanner(bytes: buffer, building: false)
        return scanner.document() != nil
    }

    /// A byte offset as a 1-based line and column (of UTF-8 bytes, as
    /// ``JSONLocator`` counts them).
    static func position(of offset: Int, in buffer: UnsafeBufferPointer<UInt8>) -> JSONLocator.Position {
        var line = 1
        var lineStart = 0
        for k in 0..<min(offset, buffer.count) where buffer[k] == UInt8(ascii: "\n") {
            line += 1
            lineStart = k + 1
        }
        return JSONLocator.Position(line: line, column: offset - lineStart + 1)
    }

    /// The path as ``JSONLocator`` writes it: `instances[2].family`, `""` for the top.
    private var pathText: String {
        var text = ""
        for component in path {
            switch component {
            case .member(let name): text += text.isEmpty ? name : "." + name
            case .element(let index): text += "[\(index)]"
            }
        }
        return text
    }

    private init(bytes: UnsafeBufferPointer<UInt8>, building: Bool) {
        self.bytes = bytes
        self.building = building
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    private mutating func document() -> JSONValue? {
        guard let value = value() else { return nil }
        skipSpace()
        return index == bytes.count ? value : nil
    }

    private mutating func skipSpace() {
        while index < bytes.count, Self.isSpace(bytes[index]) { index += 1 }
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) -> JSONValue? {
        var at = index
        for k in 0..<word.utf8CodeUnitCount {
            guard at < bytes.count, bytes[at] == word.utf8Start[k] else { return nil }
            at += 1
        }
        index = at
        return value
    }

    private mutating func value() -> JSONValue? {
        skipSpace()
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"): return object()
        case UInt8(ascii: "["): return array()
        case UInt8(ascii: "\""): return string().map { building ? .string($0) : .null }
        case UInt8(ascii: "t"): return literal("true", building ? .bool(true) : .null)
        case UInt8(ascii: "f"): return literal("false", building ? .bool(false) : .null)
        case UInt8(ascii: "n"): return literal("null", .null)
        default: return number()
        }
    }

    private mutating func object() -> JSONValue? {
        depth += 1
        defer { depth -= 1 }
        guard depth <= 512 else { return nil }
        index += 1
        var members: [(String, JSONValue)] = []
        /// Check mode: where each member name lies in the text (without its quotes).
        var names: [Range<Int>] = []
        /// Diagnosing: each name seen in this object, and the offset of its quote.
        var seen: [String: Int] = [:]
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return building ? .object([]) : .null
        }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            let nameStart = index + 1
            guard let name = string() else { return nil }
            if !building {
                // Names are compared as Strings (decoded, canonically
                // equivalent ones equal) by the building parse: leave names
                // with an escape or a non-ASCII byte (rare) to it; the others
                // are equal exactly when their bytes are.
                let range = nameStart..<(index - 1)
                if bytes[range].contains(where: { $0 == UInt8(ascii: "\\") || $0 >= 0x80 }) { return nil }
                names.append(range)
            }
            if diagnosing {
                if let first = seen[name] {
                    refused = .duplicateKey(
                        name: name, path: pathText.isEmpty ? name : pathText + "." + name, offset: nameStart - 1,
                        firstOffset: first)
                    return nil
                }
                seen[name] = nameStart - 1
                path.append(.member(name))
            }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            guard let member = value() else { return nil }
            if diagnosing { path.removeLast() }
            if building { members.append((name, member)) }
            guard let closed = closes(UInt8(ascii: "}")) else { return nil }
            if closed { break }
        }
        guard building else { return hasDuplicate(&names) ? nil : .null }
        members.sort { $0.0 < $1.0 }
        for k in members.indices.dropFirst() where members[k].0 == members[k - 1].0 { return nil }
        return .object(members)
    }

    /// Whether two of these name ranges hold the same bytes (sorts them).
    private func hasDuplicate(_ names: inout [Range<Int>]) -> Bool {
        names.sort { bytes[$0].lexicographicallyPrecedes(bytes[$1]) }
        return names.indices.dropFirst().contains { bytes[names[$0]].elementsEqual(bytes[names[$0 - 1]]) }
    }

    /// After a member or an element: consumes the `,` that continues the
    /// container (false) or `close`, which ends it (true); nil for anything else.
    private mutating func closes(_ close: UInt8) -> Bool? {
        skipSpace()
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: ","):
            index += 1
            return false
        case close:
            index += 1
            return true
        default: return nil
        }
    }

    private mutating func array() -> JSONValue? {
        depth += 1
        defer { depth -= 1 }
        guard depth <= 512 else { return nil }
        index += 1
        var items: [JSONValue] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return building ? .array([]) : .null
        }
        while true {
            if diagnosing { path.append(.element(items.count)) }
            guard let item = value() else { return nil }
            if diagnosing { path.removeLast() }
            if building { items.append(item) }
            guard let closed = closes(UInt8(ascii: "]")) else { return nil }
            if closed { return building ? .array(items) : .null }
        }
    }

    private mutating func hex4() -> UInt32? {
        guard index + 4 <= bytes.count else { return nil }
        var code: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[index]
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            code = code << 4 | UInt32(digit)
            index += 1
        }
        return code
    }

    /// A string literal at `index` (its opening quote); in check mode the
    /// text is validated and "" returned.
    private mutating func string() -> String? {
        index += 1
        let start = index
        // The common case: no escapes.
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
            guard bytes[index] >= 0x20 else { return nil }
            index += 1
        }
        guard index < bytes.count else { return nil }
        var utf8: [UInt8] = building ? Array(bytes[start..<index]) : []
        while index < bytes.count {
            let c = bytes[index]
            index += 1
            switch c {
            case UInt8(ascii: "\""): return building ? String(decoding: utf8, as: UTF8.self) : ""
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return nil }
                let e = bytes[index]
                index += 1
                var decoded: UInt8?
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded = e
                case UInt8(ascii: "b"): decoded = 0x08
                case UInt8(ascii: "f"): decoded = 0x0C
                case UInt8(ascii: "n"): decoded = 0x0A
                case UInt8(ascii: "r"): decoded = 0x0D
                case UInt8(ascii: "t"): decoded = 0x09
                case UInt8(ascii: "u"):
                    guard var code = hex4() else { return nil }
                    if (0xD800..<0xDC00).contains(code) {
                        guard index + 2 <= bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { return nil }
                        index += 2
                        guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(code) {
                        return nil
                    }
                    guard let scalar = Unicode.Scalar(code) else { return nil }
                    if building { utf8.append(contentsOf: String(Character(scalar)).utf8) }
                default: return nil
                }
                if building, let decoded { utf8.append(decoded) }
            default:
                guard c >= 0x20 else { return nil }
                if building { utf8.append(c) }
            }
        }
        return nil
    }

    private mutating func number() -> JSONValue? {
        let start = index
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        func digits(_ scanner: inout JSONScanner) -> Int {
            let from = scanner.index
            while scanner.index < scanner.bytes.count,
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(scanner.bytes[scanner.index])
            {
                scanner.index += 1
            }
            return scanner.index - from
        }
        let integerStart = index
        let integerDigits = digits(&self)
        guard integerDigits > 0 else { return nil }
        if integerDigits > 1 && bytes[integerStart] == UInt8(ascii: "0") { return nil }  // no leading zeros
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { return nil }
        }
        var exponent = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            exponent = true
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits(&self) > 0 else { return nil }
        }
        // Without an exponent and with at most 300 integer digits the value is
        // finite: check mode need not convert it.
        if !building && !exponent && integerDigits <= 300 { return .null }
        let literal = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let number = Double(literal), number.isFinite else {
            if diagnosing { refused = .numberOutOfRange(literal: literal, path: pathText, offset: start) }
            return nil
        }
        return building ? .number(number) : .null
    }
}
