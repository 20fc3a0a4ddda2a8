import Testing
import WidgetHostModel

@Suite("JSONValue.parse")
struct JSONValueTests {
    @Test func parsesEscapesNumbersNestingAndSortsMembers() throws {
        let text = #"{"b":[1,2.5,-0.5e2,true,false,null,{}],"a":"x\"\u00e9\ud83d\ude00\n\/"}"#
        let expected = JSONValue.object([
            ("a", .string("x\"é😀\n/")),
            ("b", .array([.number(1), .number(2.5), .number(-50), .bool(true), .bool(false), .null, .object([])])),
        ])
        #expect(try JSONValue.parse(text) == expected)
        #expect(try JSONValue.parse(" \"s\" ") == .string("s"))
        #expect(try JSONValue.parse("[]") == .array([]))
    }

    @Test func rejectsWhatIsNotJSON() {
        for text in ["[01]", "{'a':1}", "[1 2]", "\"\\x\"", "", "{\"a\":1} x", "nul", "[1.]", "-"] {
            #expect(throws: JSONValue.ParseError.self, "\(text)") { try JSONValue.parse(text) }
        }
    }

    /// Foundation's JSONDecoder traps on a text nested deeper than 512
    /// levels; every outside text is measured first and refused with an
    /// error. Without the check this test stops the test process.
    @Test func refusesNestingDeeperThanTheLimitWithAnError() throws {
        let limit = JSONNesting.limit
        let deepest = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        #expect(try JSONValue.parse(deepest).typeName == "array")
        for text in [
            String(repeating: "[", count: limit + 1),  // unclosed: the decoder's trap
            String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1),
            String(repeating: #"{"a":"#, count: 100_000),
        ] {
            #expect {
                try JSONValue.parse(text)
            } throws: { error in
                "\(error)".contains("nested deeper than \(limit) levels")
            }
        }
        // Brackets inside strings, escaped quotes included, do not count.
        let quoted = #"["\"["# + String(repeating: "[", count: 2 * limit) + #"", 1]"#
        #expect(JSONNesting.firstTooDeep(in: quoted.utf8) == nil)
        #expect(try JSONValue.parse(quoted).typeName == "array")
        #expect(JSONNesting.firstTooDeep(in: String(repeating: "{", count: limit + 1).utf8) == limit)
    }

    /// A key twice in one object is refused (JSONDecoder, which read such
    /// texts, took the last), with the key, the line and column of its
    /// second occurrence and its path; also when the names are written
    /// differently (an escape), and by the check that builds nothing.
    @Test func duplicateKeysAreRefusedWithWhereTheyAppearAgain() throws {
        let text = "{\"a\": [1, {\"x\": 1}, {\"x\": 2}],\n  \"b\": {\"c\": 2, \"c\": 3}}"
        #expect {
            try JSONValue.parse(text)
        } throws: { error in
            guard let error = error as? JSONValue.ParseError else { return false }
            return error.kind == .duplicateKey(name: "c", first: JSONLocator.Position(line: 2, column: 9))
                && error.position == JSONLocator.Position(line: 2, column: 17) && error.path == "b.c"
                && error.explanation.hasPrefix(
                    #"duplicate key "c" at line 2, column 17 (b.c), first at line 2, column 9"#)
        }
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.typeName(of: text) }
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(#"{"\u0061": 1, "a": 2}"#) }
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.refuseAmbiguous(Array(#"{"v":2,"v":1}"#.utf8)) }
        // The same name in different objects is no duplicate.
        #expect(try JSONValue.parse(#"[{"x": 1}, {"x": {"x": 2}}]"#).typeName == "array")
        try JSONValue.refuseAmbiguous(Array(#"{"v":2,"op":"hello"}"#.utf8))
        try JSONValue.refuseAmbiguous(Array("not json".utf8))  // left to the caller's decoder
        // A configuration file says file:line:column, field, the key and the fix.
        #expect {
            try DocumentReader(file: "host.json", text: text, documentation: "docs/daemon.md")
        } throws: { error in
            "\(error)"
                == #"host.json:2:17: b.c: the key "c" appears twice in this object (first at 2:9); a key may appear once in an object: remove or rename one (see docs/daemon.md)"#
        }
    }

    /// A number beyond Double's range is out of range, not a type mismatch
    /// (JSONDecoder's "expected to decode String but found a number").
    @Test func numbersBeyondADoubleAreOutOfRange() throws {
        for (text, literal, path, column) in [
            (#"{"a": [1, 1e400]}"#, "1e400", "a[1]", 11), ("-1e999", "-1e999", "", 1),
            (#"{"n": 1"# + String(repeating: "0", count: 400) + "}", "1" + String(repeating: "0", count: 400), "n", 7),
        ] {
            #expect {
                try JSONValue.parse(text)
            } throws: { error in
                guard let error = error as? JSONValue.ParseError else { return false }
                return error.kind == .numberOutOfRange(literal: literal) && error.path == path
                    && error.position == JSONLocator.Position(line: 1, column: column)
                    && error.explanation.contains("is out of range") && !error.explanation.contains("String")
            }
        }
        #expect(try JSONValue.parse("1e-400") == .number(0))  // underflows to 0: in range
        #expect {
            try DocumentReader(file: "s.json", text: #"{"days": 1e400}"#, documentation: "docs/simulate.md")
        } throws: { error in
            "\(error)"
                == "s.json:1:10: days: the number 1e400 is out of range: expected a finite number, at most 1.7976931348623157e308 in magnitude (a 64-bit double) (see docs/simulate.md)"
        }
    }

    /// `typeName(of:)` checks without building: for valid texts, mutated
    /// ones and the cases it leaves to the building parse (escaped or
    /// non-ASCII member names, duplicates, exponents, huge numbers), it must
    /// say exactly what `parse(text).typeName` says, or throw the same
    /// explanation.
    @Test func checkingWithoutBuildingAgreesWithParse() throws {
        var random = Xorshift(seed: 0x5EED_1234)
        var checked = 0
        var invalid = 0
        for round in 0..<6000 {
            var text = Self.json(&random, depth: 0)
            if round % 3 == 1 { text = Self.mutate(text, &random) }
            let parsed = Result { () throws(JSONValue.ParseError) in try JSONValue.parse(text).typeName }
            let typed = Result { () throws(JSONValue.ParseError) in try JSONValue.typeName(of: text) }
            switch (parsed, typed) {
            case (.success(let a), .success(let b)): #expect(a == b, "\(text)")
            case (.failure(let a), .failure(let b)):
                #expect(a.explanation == b.explanation, "\(text)")
                invalid += 1
            default: Issue.record("parse \(parsed) but typeName(of:) \(typed) for \(text)")
            }
            checked += 1
        }
        #expect(checked == 6000)
        #expect(invalid > 500, "the mutations make invalid texts too")
        // Named cases.
        #expect(try JSONValue.typeName(of: #" {"a": 1, "b": [true, null, -0.5e-3]} "#) == "object")
        // Out of Double's range: both refuse it as out of range.
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.typeName(of: "[1e400]") }
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse("[1e400]") }
        #expect(try JSONValue.typeName(of: #""x""#) == "string")
        #expect(try JSONValue.typeName(of: "-12") == "number")
        #expect(try JSONValue.typeName(of: "false") == "boolean")
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.typeName(of: #"{"a": }"#) }
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.typeName(of: "") }
    }

    /// A random JSON text, with the cases above mixed in.
    static func json(_ random: inout Xorshift, depth: Int) -> String {
        let choice = random.next(depth >= 3 ? 6 : 8)
        switch choice {
        case 0: return "null"
        case 1: return random.next(2) == 0 ? "true" : "false"
        case 2:
            let numbers = [
                "0", "-0", "12", "-7.25", "3e2", "1E-7", "2.5e+10", "1e400", "-1e999", "123456789012345678901234567890",
                String(repeating: "9", count: 310), "0.000001",
            ]
            return numbers[random.next(numbers.count)]
        case 3, 4, 5:
            let strings = [
                #""plain""#, #""é and 😀""#, #""esc \" \\ \/ \n \t""#, #""\u00e9\ud83d\ude00""#, #""""#,
                #""line""#, #""tab\u0009""#,
            ]
            return strings[random.next(strings.count)]
        case 6:
            let count = random.next(4)
            return "[" + (0..<count).map { _ in json(&random, depth: depth + 1) }.joined(separator: ",") + "]"
        default:
            let names = [
                #""a""#, #""b""#, #""title""#, #""caf\u00e9""#, #""café""#, #""cafe\u0301""#, #""a""#, #""x y""#,
            ]
            let count = random.next(5)
            let members = (0..<count).map { _ in names[random.next(names.count)] + ":" + json(&random, depth: depth + 1)
            }
            return "{" + members.joined(separator: random.next(4) == 0 ? " , " : ",") + "}"
        }
    }

    /// The text with one character dropped, doubled or replaced.
    static func mutate(_ text: String, _ random: inout Xorshift) -> String {
        var characters = Array(text)
        guard !characters.isEmpty else { return "x" }
        let at = random.next(characters.count)
        let replacements: [Character] = ["{", "}", "[", "]", ",", ":", "\"", "\\", "0", "e", "-", " ", "\u{1}"]
        switch random.next(3) {
        case 0: characters.remove(at: at)
        case 1: characters.insert(characters[at], at: at)
        default: characters[at] = replacements[random.next(replacements.count)]
        }
        return String(characters)
    }
}

/// A small seeded generator (xorshift64*), so that a failure repeats.
struct Xorshift {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(_ bound: Int) -> Int {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return Int((state &* 0x2545_F491_4F6C_DD1D) >> 33) % bound
    }
}
