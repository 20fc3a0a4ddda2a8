/// Why a configuration is not a JSON object: what was wrong and where.
struct ConfigurationParseError: Error, Sendable, Equatable {
    /// What was expected or found, e.g. `expected ',' or '}' after member "title"`.
    var what: String
    /// The byte offset in the configuration's UTF-8 where it went wrong.
    var offset: Int

    /// The error ``InstanceConfiguration/init(json:)`` throws for it.
    var providerError: TimelineProviderError {
        TimelineProviderError(
            code: TimelineProviderError.badConfiguration,
            message: "configuration is not a JSON object: \(what) at byte \(offset)")
    }
}

/// A strict JSON parser (RFC 8259) for a widget instance's configuration,
/// which builds ``ConfigurationValue``s directly from the UTF-8 bytes.
///
/// It replaces `JSONDecoder().decode([String: ConfigurationValue].self, ...)`
/// at the start of every plugin call, in a freshly forked child where
/// JSONDecoder cost 20-40 µs. It is deliberately plain: no generics of its
/// own, no `Codable`, one pass over an `UnsafeBufferPointer<UInt8>`, and
/// strings without escapes built straight from their bytes.
///
/// It gives the same values as JSONDecoder through ``ConfigurationValue``'s
/// `init(from:)` (checked by a differential test), namely:
///
/// - The text must be one object, with only whitespace (space, tab, LF, CR)
///   around it; a UTF-8 byte order mark before it is skipped, as JSONDecoder
///   does (RFC 8259 allows either).
/// - Strings: every escape, `\uXXXX` with surrogate pairs; a lone surrogate,
///   an unescaped control character (below U+0020) and invalid UTF-8 are
///   errors. U+007F is allowed unescaped.
/// - Duplicate keys: the **first** member wins, as in JSONDecoder (which
///   keeps the first value it sees for a key). Keys are Swift `String`s, so
///   two keys that are canonically equivalent (`"é"` and `"e\u0301"`) are
///   the same key.
/// - Numbers, whose grammar is strict (no leading zeros, `+`, `.5`, `1.`,
///   `NaN`, hexadecimal):
///   - an integer without fraction or exponent that fits `Int` is
///     `.integer`, so `-0` is `.integer(0)`;
///   - any other number is read as a `Double` with `Double(_:)` on its exact
///     text (`strtod`, correctly rounded). A number whose `Double` is
///     infinite (`1e400`, `1.7976931348623159e308`, 400 digits) is an
///     error, as in JSONDecoder. Then, as JSONDecoder's integer decoding
///     does:
///     - if the `Double` is a whole number below 2^53 in magnitude, it is
///       `.integer`: `1.0`, `1e2`, `-0.0`, `1.5e1` and `1e-400` are
///       integers (1, 100, 0, 15, 0), and so is `1.0000000000000001` (its
///       `Double` is 1);
///     - if the `Double` is a whole number from 2^53 up that `Int` holds,
///       the number's exact decimal value, truncated toward zero, is the
///       integer when `Int` holds it and Foundation's `Decimal` reading
///       (a 128-bit mantissa that drops the digits beyond it, trailing
///       zeros removed, and then at most 2^64 - 1 before the exponent is
///       applied) can express it: `9007199254740993.0` is
///       `.integer(9007199254740993)`, `9007199254740993.5` too;
///       `-9223372036854775808.0` and `9223372036854775807.0` are
///       `.number` (JSONDecoder's integer reading refuses them);
///     - otherwise it is `.number`: `0.5`, `2^63` (`9223372036854775808`)
///       and beyond, `-9223372036854775809`.
/// - Nesting: at most 512 levels of objects and arrays, the top-level object
///   included, which is JSONDecoder's limit too.
///
/// Where it deliberately differs from JSONDecoder:
///
/// - A trailing comma (`{"a": 1,}`, `[1,]`) is an error; JSONDecoder
///   accepts it.
/// - Every value is checked, also one under a duplicate key that is then
///   discarded: JSONDecoder checks only the structure of those and never
///   reads them, so it accepts `{"a": 1, "a": "\q"}` or `{"a": 1, "a": 1e999}`.
/// - Numbers that stop the process in JSONDecoder (a `Decimal` exponent
///   overflow while it reads, e.g. `0.` followed by 200 zeros and
///   `9007199254740993e216`) are read as the `Double` here.
/// - Errors name what was expected and the byte offset; JSONDecoder's say
///   only "The given data was not valid JSON" or a type mismatch.
struct ConfigurationParser {
    /// The deepest nesting of objects and arrays accepted, the top-level
    /// object counting as 1 (JSONDecoder's limit).
    static let maximumDepth = 512

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    /// Reused for strings with escapes.
    private var scratch: [UInt8] = []

    /// A parser over `bytes`, which must stay valid while it runs.
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Parses a configuration: a JSON object.
    static func parse(_ json: String) throws(ConfigurationParseError) -> [String: ConfigurationValue] {
        var failure: ConfigurationParseError?
        let parsed = json.utf8.withContiguousStorageIfAvailable { bytes -> [String: ConfigurationValue]? in
            var parser = ConfigurationParser(bytes)
            do throws(ConfigurationParseError) {
                return try parser.parseDocument()
            } catch {
                failure = error
                return nil
            }
        }
        if let failure { throw failure }
        if let parsed, let values = parsed { return values }
        // Not contiguous (a bridged string): copy it into native storage.
        var copy = json
        copy.makeContiguousUTF8()
        return try parse(copy)
    }

    /// Parses the whole buffer as one JSON object with optional whitespace
    /// around it.
    mutating func parseDocument() throws(ConfigurationParseError) -> [String: ConfigurationValue] {
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF {
            index = 3
        }
        skipWhitespace()
        guard index < bytes.count else {
            throw fail("expected '{', found end of input")
        }
        guard bytes[index] == UInt8(ascii: "{") else {
            throw fail("expected '{' (the configuration must be an object), found \(describeByte(at: index))")
        }
        let values = try parseObject(depth: 1)
        skipWhitespace()
        guard index == bytes.count else {
            throw fail("unexpected \(describeByte(at: index)) after the object")
        }
        return values
    }

    // MARK: Structure

    /// Parses an object; `index` is at its `{`.
    private mutating func parseObject(depth: Int) throws(ConfigurationParseError) -> [String: ConfigurationValue] {
        guard depth <= Self.maximumDepth else {
            throw fail("nesting deeper than \(Self.maximumDepth) levels")
        }
        index += 1  // {
        var values: [String: ConfigurationValue] = [:]
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return values
        }
        while true {
            guard index < bytes.count && bytes[index] == UInt8(ascii: "\"") else {
                throw fail(
                    values.isEmpty
                        ? "expected a string key or '}', found \(describeByte(at: index))"
                        : "expected a string key after ',', found \(describeByte(at: index))")
            }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count && bytes[index] == UInt8(ascii: ":") else {
                throw fail("expected ':' after key \(quoted(key)), found \(describeByte(at: index))")
            }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            // The first value of a key wins, as in JSONDecoder.
            Self.setIfAbsent(&values[key], value)
            if try closes("}", after: "member \(quoted(key))") { return values }
        }
    }

    /// After a member or an element: consumes the `,` that continues the
    /// container (false) or the `close` that ends it (true); anything else is
    /// an error naming `what` came before.
    private mutating func closes(_ close: Unicode.Scalar, after what: @autoclosure () -> String)
        throws(ConfigurationParseError) -> Bool
    {
        skipWhitespace()
        guard index < bytes.count else {
            throw fail("expected ',' or '\(close)' after \(what()), found end of input")
        }
        switch bytes[index] {
        case UInt8(ascii: ","):
            index += 1
            skipWhitespace()
            return false
        case UInt8(ascii: close):
            index += 1
            return true
        default:
            throw fail("expected ',' or '\(close)' after \(what()), found \(describeByte(at: index))")
        }
    }

    /// Sets `slot` (a dictionary's, looked up once) unless it has a value.
    private static func setIfAbsent(_ slot: inout ConfigurationValue?, _ value: ConfigurationValue) {
        if slot == nil { slot = value }
    }

    /// Parses an array; `index` is at its `[`.
    private mutating func parseArray(depth: Int) throws(ConfigurationParseError) -> [ConfigurationValue] {
        guard depth <= Self.maximumDepth else {
            throw fail("nesting deeper than \(Self.maximumDepth) levels")
        }
        index += 1  // [
        var elements: [ConfigurationValue] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            elements.append(try parseValue(depth: depth))
            if try closes("]", after: "array element") { return elements }
        }
    }

    /// Parses any value at `index`, inside a container at `depth`.
    private mutating func parseValue(depth: Int) throws(ConfigurationParseError) -> ConfigurationValue {
        guard index < bytes.count else {
            throw fail("expected a value, found end of input")
        }
        switch bytes[index] {
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "{"): return .object(try parseObject(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try parseArray(depth: depth + 1))
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        default:
            throw fail("expected a value, found \(describeByte(at: index))")
        }
    }

    /// Consumes `literal` (`true`, `false` or `null`) at `index`.
    private mutating func expectLiteral(_ literal: StaticString) throws(ConfigurationParseError) {
        let count = literal.utf8CodeUnitCount
        let expected = literal.utf8Start
        for offset in 0..<count {
            guard index + offset < bytes.count && bytes[index + offset] == expected[offset] else {
                throw fail("invalid literal, expected '\(literal)'")
            }
        }
        index += count
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): index += 1
            default: return
            }
        }
    }

    // MARK: Strings

    /// Parses a string; `index` is at its opening quote.
    private mutating func parseString() throws(ConfigurationParseError) -> String {
        let opening = index
        index += 1
        let start = index
        // Fast path: no escapes, so the string is its bytes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let string = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return string
            } else if byte == UInt8(ascii: "\\") {
                return try parseEscapedString(from: start, opening: opening)
            } else if byte < 0x20 {
                throw fail(controlCharacter: byte)
            } else if byte < 0x80 {
                index += 1
            } else {
                try skipMultibyteScalar()
            }
        }
        throw ConfigurationParseError(what: "unterminated string", offset: opening)
    }

    /// The rest of a string with escapes: its bytes from `start` up to
    /// `index` (the first backslash) have been checked.
    private mutating func parseEscapedString(from start: Int, opening: Int) throws(ConfigurationParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: scratch, as: UTF8.self)
            } else if byte == UInt8(ascii: "\\") {
                try parseEscape(opening: opening)
            } else if byte < 0x20 {
                throw fail(controlCharacter: byte)
            } else if byte < 0x80 {
                scratch.append(byte)
                index += 1
            } else {
                let scalarStart = index
                try skipMultibyteScalar()
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[scalarStart..<index]))
            }
        }
        throw ConfigurationParseError(what: "unterminated string", offset: opening)
    }

    /// Decodes the escape at `index` (a backslash) into `scratch`, in the
    /// string opened at `opening`.
    private mutating func parseEscape(opening: Int) throws(ConfigurationParseError) {
        let escape = index
        guard index + 1 < bytes.count else {
            throw ConfigurationParseError(what: "unterminated string", offset: opening)
        }
        let byte = bytes[index + 1]
        index += 2
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(byte)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try parseHex4(escape: escape)
            var scalar = UInt32(unit)
            if unit >= 0xD800 && unit < 0xDC00 {
                // A high surrogate: a low one must follow as \uXXXX.
                guard
                    index + 1 < bytes.count && bytes[index] == UInt8(ascii: "\\")
                        && bytes[index + 1] == UInt8(ascii: "u")
                else {
                    throw ConfigurationParseError(what: "lone surrogate \(escapeText(unit))", offset: escape)
                }
                let lowEscape = index
                index += 2
                let low = try parseHex4(escape: lowEscape)
                guard low >= 0xDC00 && low < 0xE000 else {
                    throw ConfigurationParseError(
                        what: "lone surrogate \(escapeText(unit)) (followed by \(escapeText(low)))", offset: escape)
                }
                scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            } else if unit >= 0xDC00 && unit < 0xE000 {
                throw ConfigurationParseError(what: "lone surrogate \(escapeText(unit))", offset: escape)
            }
            appendUTF8(scalar)
        default:
            if byte < 0x20 || byte >= 0x80 {
                throw ConfigurationParseError(what: "invalid escape \\ followed by byte \(hex(byte))", offset: escape)
            }
            throw ConfigurationParseError(
                what: "invalid escape \\\(Character(Unicode.Scalar(byte)))", offset: escape)
        }
    }

    /// Reads the four hex digits after a `\u` at `escape`; `index` is at
    /// the first digit.
    private mutating func parseHex4(escape: Int) throws(ConfigurationParseError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard index < bytes.count else {
                throw ConfigurationParseError(what: "expected 4 hex digits after \\u", offset: escape)
            }
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw ConfigurationParseError(what: "expected 4 hex digits after \\u", offset: escape)
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Checks the UTF-8 sequence of 2-4 bytes at `index` (whose first byte
    /// is not ASCII) and steps over it (Unicode's table 3-7: no overlong
    /// forms, no surrogates, nothing above U+10FFFF).
    private mutating func skipMultibyteScalar() throws(ConfigurationParseError) {
        let lead = bytes[index]
        let count: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: count = 2
        case 0xE0:
            count = 3
            low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: count = 3
        case 0xED:
            count = 3
            high = 0x9F
        case 0xF0:
            count = 4
            low = 0x90
        case 0xF1...0xF3: count = 4
        case 0xF4:
            count = 4
            high = 0x8F
        default: throw fail("invalid UTF-8 byte \(hex(lead))")
        }
        for offset in 1..<count {
            guard index + offset < bytes.count else {
                throw ConfigurationParseError(what: "truncated UTF-8 sequence", offset: index)
            }
            let byte = bytes[index + offset]
            guard byte >= low && byte <= high else {
                throw ConfigurationParseError(
                    what: "invalid UTF-8 byte \(hex(byte)) after \(hex(lead))", offset: index + offset)
            }
            low = 0x80
            high = 0xBF
        }
        index += count
    }

    // MARK: Numbers

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Parses a number at `index` (a `-` or a digit).
    private mutating func parseNumber() throws(ConfigurationParseError) -> ConfigurationValue {
        let start = index
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < bytes.count && Self.isDigit(bytes[index]) else {
            throw fail("expected a digit after '-', found \(describeByte(at: index))")
        }
        // The integer part, accumulated while it fits a UInt64.
        var magnitude: UInt64 = 0
        var overflow = false
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count && Self.isDigit(bytes[index]) {
                throw fail("invalid number: leading zero")
            }
        } else {
            while index < bytes.count && Self.isDigit(bytes[index]) {
                let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                magnitude = sum
                overflow = overflow || o1 || o2
                index += 1
            }
        }
        var integral = true
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count && Self.isDigit(bytes[index]) else {
                throw fail("expected a digit after '.', found \(describeByte(at: index))")
            }
            while index < bytes.count && Self.isDigit(bytes[index]) { index += 1 }
            integral = false
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                index += 1
            }
            guard index < bytes.count && Self.isDigit(bytes[index]) else {
                throw fail("expected a digit in the exponent, found \(describeByte(at: index))")
            }
            while index < bytes.count && Self.isDigit(bytes[index]) { index += 1 }
            integral = false
        }
        if integral && !overflow {
            if !negative && magnitude <= UInt64(Int.max) { return .integer(Int(magnitude)) }
            if negative && magnitude <= UInt64(Int.max) + 1 { return .integer(Int(truncatingIfNeeded: 0 &- magnitude)) }
        }
        return try parseNonIntegral(UnsafeBufferPointer(rebasing: bytes[start..<index]), at: start)
    }

    /// A number with a fraction or exponent, or an integer beyond `Int`:
    /// its `Double`, and then the integer JSONDecoder would read, if any.
    private func parseNonIntegral(_ lexeme: UnsafeBufferPointer<UInt8>, at start: Int) throws(ConfigurationParseError)
        -> ConfigurationValue
    {
        let text = String(decoding: lexeme, as: UTF8.self)
        guard let double = Double(text), double.isFinite else {
            throw ConfigurationParseError(what: "number \(text) is out of range for a Double", offset: start)
        }
        guard let whole = Int(exactly: double) else { return .number(double) }
        if double.magnitude < 9_007_199_254_740_992 {  // 2^53
            return .integer(whole)
        }
        return Self.truncatedInteger(lexeme).map { ConfigurationValue.integer($0) } ?? .number(double)
    }

    /// The integer JSONDecoder reads, from 2^53 up, through `Decimal`: the
    /// significant digits in a 128-bit mantissa (digits beyond it dropped),
    /// trailing zeros removed; the mantissa must then fit a `UInt64`, the
    /// exponent is applied truncating toward zero, and the magnitude must
    /// fit `Int` (for negative numbers too, so never `Int.min`). `nil`
    /// where it reads none (and then the number is a `.number`).
    static func truncatedInteger(_ lexeme: UnsafeBufferPointer<UInt8>) -> Int? {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var exponent = 0
        var inFraction = false
        var position = 0
        let negative = lexeme.first == UInt8(ascii: "-")
        if negative { position = 1 }
        while position < lexeme.count {
            let byte = lexeme[position]
            if byte == UInt8(ascii: ".") {
                inFraction = true
            } else if isDigit(byte) {
                // mantissa * 10 + digit, if that fits 128 bits.
                let lowTimes10 = low.multipliedFullWidth(by: 10)
                let highTimes10 = high.multipliedFullWidth(by: 10)
                let (newHigh, o1) = highTimes10.low.addingReportingOverflow(lowTimes10.high)
                let (newLow, carry) = lowTimes10.low.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
                let (carried, o2) = newHigh.addingReportingOverflow(carry ? 1 : 0)
                if highTimes10.high != 0 || o1 || o2 {
                    if !inFraction { exponent += 1 }
                } else {
                    high = carried
                    low = newLow
                    if inFraction { exponent -= 1 }
                }
            } else {
                break  // e or E
            }
            position += 1
        }
        if position < lexeme.count {
            position += 1
            var exponentNegative = false
            if lexeme[position] == UInt8(ascii: "+") || lexeme[position] == UInt8(ascii: "-") {
                exponentNegative = lexeme[position] == UInt8(ascii: "-")
                position += 1
            }
            var value = 0
            while position < lexeme.count {
                value = min(value * 10 + Int(lexeme[position] - UInt8(ascii: "0")), 1_000_000)
                position += 1
            }
            exponent += exponentNegative ? -value : value
        }
        guard high != 0 || low != 0 else { return nil }
        // Remove trailing zeros.
        while true {
            let highQuotient = high / 10
            let (lowQuotient, remainder) = UInt64(10).dividingFullWidth((high: high % 10, low: low))
            guard remainder == 0 else { break }
            high = highQuotient
            low = lowQuotient
            exponent += 1
        }
        guard high == 0 else { return nil }
        var value = low
        if exponent < 0 {
            for _ in 0..<min(-exponent, 20) { value /= 10 }
        } else {
            for _ in 0..<exponent {
                let (product, overflow) = value.multipliedReportingOverflow(by: 10)
                guard !overflow else { return nil }
                value = product
            }
        }
        guard value <= UInt64(Int.max) else { return nil }
        return negative ? -Int(value) : Int(value)
    }

    // MARK: Errors

    private func fail(_ what: String) -> ConfigurationParseError {
        ConfigurationParseError(what: what, offset: index)
    }

    private func fail(controlCharacter byte: UInt8) -> ConfigurationParseError {
        fail("unescaped control character \(hex(byte)) in string")
    }

    /// The byte at `position` for a message: `'x'`, `byte 0xff` or `end of
    /// input`.
    private func describeByte(at position: Int) -> String {
        guard position < bytes.count else { return "end of input" }
        let byte = bytes[position]
        if byte > 0x20 && byte < 0x7F {
            return "'\(Character(Unicode.Scalar(byte)))'"
        }
        return "byte \(hex(byte))"
    }
}

/// A byte for a message, e.g. `0x0a`.
private func hex(_ byte: UInt8) -> String {
    (byte < 0x10 ? "0x0" : "0x") + String(byte, radix: 16)
}

/// A UTF-16 code unit as its escape, e.g. `\ud83d`.
private func escapeText(_ unit: UInt16) -> String {
    let hexDigits = String(unit, radix: 16)
    return "\\u" + String(repeating: "0", count: 4 - hexDigits.count) + hexDigits
}

/// A key for a message, in double quotes, shortened if long.
private func quoted(_ key: String) -> String {
    key.utf8.count > 40 ? "\"\(key.prefix(30))...\"" : "\"\(key)\""
}
