import Testing

import struct WidgetHostModel.SplitMix64

@testable import WidgetHostKit

/// Parses UTF-8 bytes with the new parser, throwing what
/// `InstanceConfiguration(json:)` would throw.
private func parseNew(_ bytes: [UInt8]) throws(TimelineProviderError) -> [String: ConfigurationValue] {
    var result: Result<[String: ConfigurationValue], ConfigurationParseError> = .success([:])
    bytes.withUnsafeBufferPointer { buffer in
        var parser = ConfigurationParser(buffer)
        do throws(ConfigurationParseError) {
            result = .success(try parser.parseDocument())
        } catch {
            result = .failure(error)
        }
    }
    switch result {
    case .success(let values): return values
    case .failure(let error): throw error.providerError
    }
}

/// Parses UTF-8 bytes as WidgetConfiguration did before, with JSONDecoder.
private func parseOld(_ bytes: [UInt8]) -> [String: ConfigurationValue]? {
    try? JSONDecoder().decode([String: ConfigurationValue].self, from: Data(bytes))
}

/// Random configurations, as values (for JSONEncoder) and as hand-written
/// text (whitespace, escapes, numbers of every shape).
private struct Generator {
    var random: SplitMix64
    /// Whether hand-written text since the last reset has an object with a
    /// key twice. JSONDecoder never reads the values it discards, so it
    /// accepts bad strings and numbers there, which the new parser refuses.
    var wroteDuplicateKey = false

    static let scalars: [Unicode.Scalar] = [
        "a", "Z", "0", " ", "\"", "\\", "/", "\u{0}", "\u{1}", "\n", "\t", "\u{1F}", "\u{7F}", "\u{80}", "é", "e",
        "\u{301}",
        "ß", "\u{7FF}", "\u{800}", "€", "中", "\u{2028}", "\u{FEFF}", "\u{FFFD}", "\u{FFFF}", "\u{10000}", "😀", "👍", "🏽",
        "\u{1F1EB}", "\u{10FFFF}",
    ]

    mutating func scalar() -> Unicode.Scalar {
        if random.chance(50) {
            return Unicode.Scalar(UInt8(random.below(26)) + UInt8(ascii: "a"))
        }
        return Self.scalars[random.below(Self.scalars.count)]
    }

    mutating func string(maxLength: Int = 12) -> String {
        var string = String.UnicodeScalarView()
        for _ in 0..<random.below(maxLength + 1) { string.append(scalar()) }
        return String(string)
    }

    // MARK: Values for JSONEncoder

    mutating func value(depth: Int) -> ConfigurationValue {
        switch random.below(depth > 3 ? 7 : 9) {
        case 0, 1: return .string(string())
        case 2:
            return .integer(
                random.chance(50) ? random.below(2000) - 1000 : Int.random(in: .min ... .max, using: &random))
        case 3:
            if random.chance(50) { return .number(Double(random.below(100_000)) / 64 - 500) }
            var double: Double
            repeat {
                double = Double(bitPattern: random.next())
            } while !double.isFinite
            return .number(double)
        case 4: return .bool(random.chance(50))
        case 5: return .null
        case 6:
            return .number(
                [0.1, 1e300, -Double.leastNormalMagnitude / 4, 9_007_199_254_740_994, 1e19, -0.0, 0.5][random.below(7)])
        case 7: return .array((0..<random.below(5)).map { _ in value(depth: depth + 1) })
        default: return .object(object(depth: depth + 1))
        }
    }

    mutating func object(depth: Int) -> [String: ConfigurationValue] {
        var members: [String: ConfigurationValue] = [:]
        for _ in 0..<random.below(6) { members[string(maxLength: 6)] = value(depth: depth) }
        return members
    }

    // MARK: Hand-written text

    mutating func whitespace() -> String {
        guard random.chance(30) else { return "" }
        return (0..<random.below(3) + 1).map { _ in [" ", "\t", "\n", "\r", "  "][random.below(5)] }.joined()
    }

    mutating func hex4(_ unit: UInt32) -> String {
        let digits = String(unit, radix: 16, uppercase: random.chance(50))
        return "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// A JSON string literal for `string`, escaped in random ways.
    mutating func literal(_ string: String) -> String {
        var text = "\""
        for scalar in string.unicodeScalars {
            let short: String? =
                switch scalar {
                case "\"": "\\\""
                case "\\": "\\\\"
                case "/": random.chance(50) ? "\\/" : nil
                case "\u{8}": "\\b"
                case "\u{C}": "\\f"
                case "\n": "\\n"
                case "\r": "\\r"
                case "\t": "\\t"
                default: nil
                }
            let mustEscape = scalar.value < 0x20 || scalar == "\"" || scalar == "\\"
            if let short, random.chance(70) {
                text += short
            } else if mustEscape || random.chance(20) {
                if scalar.value >= 0x10000 {
                    let value = scalar.value - 0x10000
                    text += hex4(0xD800 + (value >> 10)) + hex4(0xDC00 + (value & 0x3FF))
                } else {
                    text += hex4(scalar.value)
                }
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }

    mutating func digits(_ count: Int, leadingNonZero: Bool) -> String {
        var text = ""
        for position in 0..<count {
            let low = position == 0 && leadingNonZero ? 1 : 0
            text.append(Character(Unicode.Scalar(UInt8(ascii: "0") + UInt8(low + random.below(10 - low)))))
        }
        return text
    }

    static let edgeNumbers = [
        "0", "-0", "-0.0", "0.0", "1.0", "1e2", "1E+2", "1.5e1", "0.1e1", "100e-2", "1e-400", "-1e-400", "4.9e-324",
        "2e-324", "1.7976931348623157e308", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "-9223372036854775809", "9223372036854775807.0", "9223372036854775295.0", "-9223372036854775808.0",
        "9007199254740992.5", "9007199254740993.0", "9007199254740993.5", "-9007199254740993.5", "9007199254740993e0",
        "900719925474099.3e1", "1.0000000000000001", "12345678901234567890", "1e18", "1e19", "1.5e18",
        "9007199254740993.0000000000000000000000000000001", "100000000000000000000000000000000000001e-20",
        "1000000000000000000000000000000000000001e-21", "300000000000000000000000000000000000001e-20",
        "400000000000000000000000000000000000001e-20", "1.23456789012345678901234567890123456789e18",
        "0.123456789012345678e18", "9007199254740993.99999999999999999999999", "0.5", "-0.5", "1e-7",
    ]

    /// A number lexeme of a random shape.
    mutating func number() -> String {
        switch random.below(10) {
        case 0: return String(random.below(2001) - 1000)
        case 1: return String(Int64.random(in: .min ... .max, using: &random))
        case 2: return (random.chance(50) ? "-" : "") + digits(19 + random.below(8), leadingNonZero: true)
        case 3, 4: return Self.edgeNumbers[random.below(Self.edgeNumbers.count)]
        default:
            var text = random.chance(30) ? "-" : ""
            text += random.chance(20) ? "0" : digits(1 + random.below(20), leadingNonZero: true)
            if random.chance(60) { text += "." + digits(1 + random.below(20), leadingNonZero: false) }
            if random.chance(40) {
                text += random.chance(50) ? "e" : "E"
                text += ["", "+", "-"][random.below(3)]
                text += digits(random.chance(90) ? 1 + random.below(2) : 3, leadingNonZero: false)
            }
            return text
        }
    }

    mutating func text(depth: Int) -> String {
        switch random.below(depth > 3 ? 6 : 8) {
        case 0, 1: return literal(string())
        case 2, 3: return number()
        case 4: return ["true", "false", "null"][random.below(3)]
        case 5: return literal(string(maxLength: 40))
        case 6:
            let elements = (0..<random.below(5)).map { _ in whitespace() + text(depth: depth + 1) + whitespace() }
            return "[" + (elements.isEmpty ? whitespace() : elements.joined(separator: ",")) + "]"
        default: return objectText(depth: depth + 1)
        }
    }

    mutating func objectText(depth: Int) -> String {
        var members: [String] = []
        var keys: Set<String> = []
        for _ in 0..<random.below(6) {
            // Sometimes a key again: the first value must win.
            let key = random.chance(15) ? "a" : string(maxLength: 6)
            if !keys.insert(key).inserted { wroteDuplicateKey = true }
            members.append(
                whitespace() + literal(key) + whitespace() + ":" + whitespace() + text(depth: depth) + whitespace())
        }
        return "{" + (members.isEmpty ? whitespace() : members.joined(separator: ",")) + "}"
    }
}

@Suite struct ConfigurationParserTests {
    /// Both parsers on one input: the same values, or both refuse it.
    /// Returns whether it was accepted.
    /// Both parsers on one input: the same values, or both refuse it, or
    /// only the new parser refuses it for one of its deliberate differences
    /// (a trailing comma; a bad value under a duplicate key, which
    /// JSONDecoder discards unread).
    private func compare(_ bytes: [UInt8], duplicateKeys: Bool) -> Outcome {
        let old = parseOld(bytes)
        let new = try? parseNew(bytes)
        if new == nil && old != nil {
            let text = String(decoding: bytes, as: UTF8.self).filter { !" \t\n\r".contains($0) }
            #expect(
                duplicateKeys || text.contains(",}") || text.contains(",]"),
                "only JSONDecoder accepts \(String(decoding: bytes, as: UTF8.self))")
            return .stricter
        }
        #expect(old == new, "\(String(decoding: bytes, as: UTF8.self))")
        return new != nil ? .equal : .refusedByBoth
    }

    private enum Outcome { case equal, refusedByBoth, stricter }

    @Test func sameValuesAsJSONDecoder() throws {
        var generator = Generator(random: SplitMix64(seed: 20_261_121))
        var encoded: [Outcome: Int] = [:]
        var handWritten: [Outcome: Int] = [:]
        var mutated: [Outcome: Int] = [:]
        let encoder = JSONEncoder()
        for round in 0..<3000 {
            encoder.outputFormatting =
                [
                    [], [.sortedKeys], [.prettyPrinted], [.withoutEscapingSlashes], [.prettyPrinted, .sortedKeys],
                ][round % 5]
            let values = generator.object(depth: 0)
            let bytes = Array(try encoder.encode(values))
            encoded[compare(bytes, duplicateKeys: false), default: 0] += 1
        }
        for _ in 0..<3000 {
            generator.wroteDuplicateKey = false
            let text = generator.whitespace() + generator.objectText(depth: 0) + generator.whitespace()
            let bytes = Array(text.utf8)
            handWritten[compare(bytes, duplicateKeys: generator.wroteDuplicateKey), default: 0] += 1
            // A one-byte mutation: both refuse it, or both read the same.
            var broken = bytes
            let position = generator.random.below(broken.count)
            switch generator.random.below(3) {
            case 0: broken.remove(at: position)
            case 1: broken.insert(Array(",:{}[]\"\\0-.e ".utf8)[generator.random.below(13)], at: position)
            default: broken[position] = UInt8(truncatingIfNeeded: generator.random.next())
            }
            mutated[compare(broken, duplicateKeys: generator.wroteDuplicateKey), default: 0] += 1
        }
        func counts(_ outcomes: [Outcome: Int]) -> String {
            "\(outcomes[.equal] ?? 0) equal, \(outcomes[.refusedByBoth] ?? 0) refused by both,"
                + " \(outcomes[.stricter] ?? 0) refused only by the new parser"
        }
        print(
            "differential: 3000 JSONEncoder objects: \(counts(encoded)); 3000 hand-written: \(counts(handWritten));",
            "3000 one-byte mutations: \(counts(mutated))")
        #expect(encoded[.equal] == 3000)
        #expect(handWritten[.equal] ?? 0 > 2500)
    }

    @Test func numbersAsJSONDecoderReadsThem() throws {
        let expected: [(String, ConfigurationValue)] = [
            ("1.0", .integer(1)), ("1e2", .integer(100)), ("-0", .integer(0)), ("-0.0", .integer(0)),
            ("1.5e1", .integer(15)), ("1e-400", .integer(0)), ("1.0000000000000001", .integer(1)),
            ("0.5", .number(0.5)), ("4.9e-324", .number(.leastNonzeroMagnitude)),
            ("9223372036854775807", .integer(.max)), ("-9223372036854775808", .integer(.min)),
            ("9223372036854775808", .number(9_223_372_036_854_775_808)),
            ("-9223372036854775809", .number(-9_223_372_036_854_775_808)),
            ("9223372036854775807.0", .number(9_223_372_036_854_775_808)),
            ("-9223372036854775808.0", .number(-9_223_372_036_854_775_808)),
            ("9223372036854775295.0", .integer(9_223_372_036_854_775_295)),
            ("9007199254740993.0", .integer(9_007_199_254_740_993)),
            ("9007199254740993.5", .integer(9_007_199_254_740_993)),
            ("1e19", .number(1e19)), ("1e18", .integer(1_000_000_000_000_000_000)),
            ("12345678901234567890", .number(12_345_678_901_234_567_168)),
        ]
        for (lexeme, value) in expected {
            let configuration = try InstanceConfiguration(json: "{\"n\":\(lexeme)}")
            #expect(configuration["n"] == value, "\(lexeme)")
            #expect(parseOld(Array("{\"n\":\(lexeme)}".utf8))?["n"] == value, "JSONDecoder: \(lexeme)")
        }
    }

    @Test func keysStringsAndNesting() throws {
        let configuration = try InstanceConfiguration(
            json:
                "\u{FEFF} {\"a\": 1, \"a\": 2, \"s\": \"\\ud83d\\ude00\\u00e9\\/\\\"x\\u0000\", \"\u{E9}\": true, \"e\u{301}\": false} "
        )
        #expect(configuration.integer("a") == 1)
        #expect(configuration.string("s") == "😀é/\"x\u{0}")
        #expect(configuration.bool("é") == true)
        #expect(configuration.values.count == 3)

        let deepest = "{\"a\":" + String(repeating: "[", count: 511) + String(repeating: "]", count: 511) + "}"
        #expect(throws: Never.self) { try InstanceConfiguration(json: deepest) }
        let objects = String(repeating: "{\"a\":", count: 512) + "1" + String(repeating: "}", count: 512)
        #expect(throws: Never.self) { try InstanceConfiguration(json: objects) }
    }

    @Test func invalidInputsNameWhatAndWhere() {
        let deep = "{\"a\":" + String(repeating: "[", count: 512) + String(repeating: "]", count: 512) + "}"
        let table: [(input: [UInt8], offset: Int, what: String)] = [
            (Array("".utf8), 0, "expected '{', found end of input"),
            (Array("   ".utf8), 3, "found end of input"),
            (Array("[1]".utf8), 0, "must be an object"),
            (Array("nope".utf8), 0, "must be an object"),
            (Array(#"{"a":1,}"#.utf8), 7, "expected a string key after ','"),
            (Array(#"{"a":[1,]}"#.utf8), 8, "expected a value, found ']'"),
            (Array(#"{"a":01}"#.utf8), 6, "leading zero"),
            (Array(#"{"a":-01}"#.utf8), 7, "leading zero"),
            (Array(#"{"a":+1}"#.utf8), 5, "expected a value, found '+'"),
            (Array(#"{"a":.5}"#.utf8), 5, "expected a value"),
            (Array(#"{"a":1.}"#.utf8), 7, "expected a digit after '.'"),
            (Array(#"{"a":1e}"#.utf8), 7, "expected a digit in the exponent"),
            (Array(#"{"a":-}"#.utf8), 6, "expected a digit after '-'"),
            (Array(#"{"a":NaN}"#.utf8), 5, "expected a value"),
            (Array(#"{"a":1e400}"#.utf8), 5, "out of range"),
            (Array(#"{"a":tru}"#.utf8), 5, "expected 'true'"),
            (Array(#"{"a":"\ud83d"}"#.utf8), 6, "lone surrogate \\ud83d"),
            (Array(#"{"a":"\ude00x"}"#.utf8), 6, "lone surrogate \\ude00"),
            (Array(#"{"a":"\ud83d\u0041"}"#.utf8), 6, "lone surrogate"),
            (Array(#"{"a":"\q"}"#.utf8), 6, "invalid escape \\q"),
            (Array(#"{"a":"\u00zz"}"#.utf8), 6, "expected 4 hex digits"),
            (Array("{\"a\":\"x\u{1}\"}".utf8), 7, "unescaped control character 0x01"),
            (Array("{\"a\":\"x\ny\"}".utf8), 7, "unescaped control character 0x0a"),
            (Array(#"{"a":"bc"#.utf8), 5, "unterminated string"),
            (Array(#"{"a":"bc\"#.utf8), 5, "unterminated string"),
            (Array(#"{"a":1"#.utf8), 6, "expected ',' or '}' after member \"a\", found end of input"),
            (Array(#"{"title":"x" "b":2}"#.utf8), 13, "expected ',' or '}' after member \"title\", found '\"'"),
            (Array(#"{"a""#.utf8), 4, "expected ':' after key \"a\""),
            (Array(#"{"a" 1}"#.utf8), 5, "expected ':' after key \"a\", found '1'"),
            (Array("{".utf8), 1, "expected a string key or '}'"),
            (Array("{1:2}".utf8), 1, "expected a string key or '}', found '1'"),
            (Array("{'a':2}".utf8), 1, "expected a string key"),
            (Array("{} x".utf8), 3, "unexpected 'x' after the object"),
            (Array("{}{}".utf8), 2, "unexpected '{' after the object"),
            (Array("{}\u{0}".utf8), 2, "unexpected byte 0x00 after the object"),
            (Array("{\u{B}}".utf8), 1, "found byte 0x0b"),
            (Array(deep.utf8), 5 + 511, "nesting deeper than 512 levels"),
            ([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D], 6, "invalid UTF-8 byte 0xff"),
            ([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC0, 0x80, 0x22, 0x7D], 6, "invalid UTF-8 byte 0xc0"),
            (
                [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x7D], 7,
                "invalid UTF-8 byte 0xa0 after 0xed"
            ),
            ([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xE2, 0x82, 0x22, 0x7D], 8, "invalid UTF-8 byte 0x22 after 0xe2"),
            ([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xF0, 0x9F, 0x98], 6, "truncated UTF-8"),
            ([0x7B, 0x22, 0x61, 0x22, 0x3A, 0xC3, 0xA9, 0x7D], 5, "expected a value, found byte 0xc3"),
        ]
        for (input, offset, what) in table {
            let text = String(decoding: input, as: UTF8.self)
            do {
                let values = try parseNew(input)
                Issue.record("accepted \(text) as \(values)")
            } catch {
                #expect(error.code == TimelineProviderError.badConfiguration, "\(text)")
                #expect(error.message.hasPrefix("configuration is not a JSON object: "), "\(error.message)")
                #expect(error.message.hasSuffix(" at byte \(offset)"), "\(text): \(error.message)")
                #expect(error.message.contains(what), "\(text): \(error.message)")
            }
            // Through the public API too, where the bytes are valid UTF-8.
            if String(validating: input, as: UTF8.self) != nil {
                #expect(throws: TimelineProviderError.self) { try InstanceConfiguration(json: text) }
            }
        }
    }
}
