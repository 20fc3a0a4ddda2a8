import Testing
import WidgetHostABI

import struct WidgetHostModel.SplitMix64

@testable import WidgetHostJSON
@testable import WidgetHostKit

// JSONTextEncoder must write exactly what CompletionSink's JSONEncoder
// configuration writes, or say it cannot (JSONTextEncoderUnsupported).

private func referenceEncoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return encoder
}

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// The outcome of encoding one value with both encoders.
private enum Comparison: Equatable {
    case identical, unsupported
    case mismatch(expected: String, got: String)
}

private func compare<T: Encodable>(_ value: T) throws -> Comparison {
    let expected = Array(try referenceEncoder().encode(value))
    // The sink's path (JSONTextEncoder, else JSONEncoder) always gives JSONEncoder's bytes.
    let sink = try CompletionSink.encode(entry: value)
    if sink != expected { return .mismatch(expected: text(expected), got: "through the sink: " + text(sink)) }
    do {
        let got = try JSONTextEncoder.encode(value)
        return got == expected ? .identical : .mismatch(expected: text(expected), got: text(got))
    } catch is JSONTextEncoderUnsupported {
        return .unsupported
    }
}

/// The errors JSONEncoder, JSONTextEncoder and the sink's path throw for `value`.
private func errors<T: Encodable>(_ value: T) -> (expected: String, got: String, sink: String) {
    var expected = ""
    do { _ = try referenceEncoder().encode(value) } catch { expected = "\(error)" }
    var got = ""
    do { _ = try JSONTextEncoder.encode(value) } catch { got = "\(error)" }
    var sink = ""
    do { _ = try CompletionSink.encode(entry: value) } catch { sink = "\(error)" }
    return (expected, got, sink)
}

// MARK: - Random values

private let scalarPool: [Unicode.Scalar] =
    (0x00...0x1F).map { Unicode.Scalar(UInt8($0)) } + [
        "\"", "\\", "/", "\u{7F}", " ", "a", "Z", "0", "_", "é", "e", "\u{301}", "ß", "Ω", "中", "文", "😀", "🇫",
        "\u{2028}", "\u{FEFF}", "\u{FFFD}", "\u{10FFFF}", "\u{212B}", "Å", "K", "\u{212A}",
    ]

extension SplitMix64 {

    mutating func string(maxLength: Int = 12) -> String {
        var result = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...maxLength, using: &self) {
            if chance(50) {
                result.append(Unicode.Scalar(UInt8.random(in: 0x20...0x7E, using: &self)))
            } else {
                result.append(scalarPool.randomElement(using: &self)!)
            }
        }
        return String(result)
    }

    mutating func double() -> Double {
        switch Int.random(in: 0..<12, using: &self) {
        case 0: return Double(bitPattern: next()).isFinite ? Double(bitPattern: next() & ~(0x7FF << 52)) : 0
        case 1:
            let bits = next()
            let value = Double(bitPattern: bits)
            return value.isFinite ? value : 1.5
        case 2: return Double(bitPattern: next() & 0x800F_FFFF_FFFF_FFFF)  // subnormal (or ±0)
        case 3:
            return [
                0, -0.0, 1, -1, 0.1, 0.2, 1e-7, 1e-6, 1e-5, 1e21, 1e22, 1e20, 1e15, 1e16, 1e17, 123_456.789,
                .leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
                .ulpOfOne, .pi, 9_007_199_254_740_992, 9_007_199_254_740_994, 4_503_599_627_370_496.5, 0.5, 100,
                999_999_999_999_999, 1e15 - 0.5, 1e14 + 0.25,
            ].randomElement(using: &self)!
        case 4: return Double(Int64.random(in: -(1 << 53)...(1 << 53), using: &self))
        case 5: return Double(Int64.random(in: .min ... .max, using: &self))
        case 6: return Double(Int.random(in: -1000...1000, using: &self)) / 10
        case 7: return Double(Int.random(in: -100_000...100_000, using: &self)) / 1000
        case 8: return Double.random(in: -1...1, using: &self) * pow10(Int.random(in: -30...30, using: &self))
        case 9: return Double(Int.random(in: 1...9, using: &self)) * pow10(Int.random(in: -10...25, using: &self))
        case 10: return Double.random(in: 0..<1, using: &self)
        default: return Double(Int.random(in: -5...5, using: &self))
        }
    }

    mutating func float() -> Float {
        switch Int.random(in: 0..<5, using: &self) {
        case 0:
            let value = Float(bitPattern: UInt32(truncatingIfNeeded: next()))
            return value.isFinite ? value : 2.5
        case 1:
            let value = Float(double())
            return value.isFinite ? value : -3.25
        case 2:
            return [0, -0.0, 1, 0.1, 1e-7, 16_777_216, 16_777_218, 1e10, 3.4e38, .leastNonzeroMagnitude]
                .randomElement(using: &self)!
        case 3: return Float(Int.random(in: -100_000...100_000, using: &self)) / 100
        default: return Float(Int32.random(in: .min ... .max, using: &self))
        }
    }

    /// Dates mostly 1900...2100 with fractional seconds, some exactly on or
    /// just before a second, and a few across the whole range (before 1583
    /// and after 9999 are unsupported).
    mutating func date() -> Date {
        let interval: Double
        switch Int.random(in: 0..<20, using: &self) {
        case 0 where chance(5): interval = Double.random(in: -1e11...1e11, using: &self)
        case 1 where chance(20):
            interval = [
                -13_191_897_600, -13_191_897_600.5, -13_191_897_599.9, 252_423_993_599.999, 252_423_993_600, 0,
                -978_307_200, -978_307_200.5, -978_307_199.9999999, 1e-9, -1e-9,
            ].randomElement(using: &self)!
        case 2, 3: interval = Double(Int64.random(in: -3_250_000_000...3_250_000_000, using: &self)) - 1e-7
        case 4, 5: interval = Double(Int64.random(in: -12_000_000_000...250_000_000_000, using: &self))
        case 6, 7:
            interval = Double(Int64.random(in: -3_250_000_000...3_250_000_000, using: &self)) + 0.9999999
        default: interval = Double.random(in: -3_250_000_000...3_250_000_000, using: &self)
        }
        return Date(timeIntervalSinceReferenceDate: interval)
    }

    private func pow10(_ exponent: Int) -> Double {
        var result = 1.0
        for _ in 0..<abs(exponent) { result *= 10 }
        return exponent < 0 ? 1 / result : result
    }
}

// MARK: - The family of test entries

private enum Mood: String, Codable, CaseIterable { case calm, busy, 緊張 }

/// Every integer width, at its limits or random.
private struct Integers: Encodable {
    var int: Int, int8: Int8, int16: Int16, int32: Int32, int64: Int64
    var uint: UInt, uint8: UInt8, uint16: UInt16, uint32: UInt32, uint64: UInt64

    init(_ g: inout SplitMix64) {
        func pick<T: FixedWidthInteger>(_ g: inout SplitMix64) -> T {
            switch Int.random(in: 0..<5, using: &g) {
            case 0: T.min
            case 1: T.max
            case 2: 0
            case 3: T(truncatingIfNeeded: Int.random(in: -10...10, using: &g))
            default: T(truncatingIfNeeded: g.next())
            }
        }
        int = pick(&g)
        int8 = pick(&g)
        int16 = pick(&g)
        int32 = pick(&g)
        int64 = pick(&g)
        uint = pick(&g)
        uint8 = pick(&g)
        uint16 = pick(&g)
        uint32 = pick(&g)
        uint64 = pick(&g)
    }
}

/// Reports the coding path it is encoded at: both encoders must agree.
private struct PathEcho: Encodable {
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(encoder.codingPath.map { "\($0.stringValue)/\($0.intValue.map(String.init) ?? "-")" })
    }
}

private struct Leaf: Encodable {
    var name: String
    var score: Double
    var ratio: Float
    var small: Int8
    var maybe: Double?
    var when: Date?
    var mood: Mood
    var path: PathEcho

    init(_ g: inout SplitMix64) {
        name = g.string()
        score = g.double()
        ratio = g.float()
        small = Int8.random(in: .min ... .max, using: &g)
        maybe = g.chance(50) ? g.double() : nil
        when = g.chance(50) ? g.date() : nil
        mood = Mood.allCases.randomElement(using: &g)!
        path = PathEcho()
    }
}

/// Hand-written encode(to:) with awkward keys and every kind of container.
private struct Manual: Encodable {
    enum Keys: String, CodingKey {
        case zeta = "Zeta"
        case alpha
        case upperA = "Alpha"
        case umlaut = "Äpfel"
        case accent = "émile"
        case b
        case upperB = "B"
        case a10, a9
        case emoji = "😀"
        case underscore = "_x"
        case empty = ""
        case slash = "a/b"
        case quote = "q\"uote"
        case tab = "t\tab"
        case nested, list, nothing, single
        case kelvin = "\u{212A}elvin"
    }
    var values: [Double]
    var text: String?
    var flag: Bool
    var count: UInt16
    var inner: [String: [Int]]
    var date: Date

    init(_ g: inout SplitMix64) {
        values = (0..<Int.random(in: 0...4, using: &g)).map { _ in g.double() }
        text = g.chance(50) ? g.string() : nil
        flag = g.chance(50)
        count = UInt16.random(in: .min ... .max, using: &g)
        inner = [:]
        for _ in 0..<Int.random(in: 0...3, using: &g) {
            inner[g.string(maxLength: 4)] = (0..<Int.random(in: 0...3, using: &g)).map { _ in
                Int(bitPattern: UInt(g.next()))
            }
        }
        date = g.date()
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(flag, forKey: .zeta)
        try container.encode(count, forKey: .alpha)
        try container.encode("A", forKey: .upperA)
        try container.encodeIfPresent(text, forKey: .umlaut)
        try container.encode(text, forKey: .accent)  // null when nil
        try container.encodeNil(forKey: .b)
        try container.encode(values.count, forKey: .upperB)
        try container.encode(10, forKey: .a10)
        try container.encode(9, forKey: .a9)
        try container.encode(inner, forKey: .emoji)
        try container.encode(date, forKey: .underscore)
        try container.encode([String](), forKey: .empty)
        try container.encode([String: Int](), forKey: .slash)
        try container.encode(Mood.calm, forKey: .quote)
        try container.encode(PathEcho(), forKey: .tab)
        try container.encode(PathEcho(), forKey: .kelvin)
        var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .nested)
        try nested.encode(values.first ?? 0, forKey: .b)
        try nested.encode(PathEcho(), forKey: .a9)
        var list = nested.nestedUnkeyedContainer(forKey: .list)
        for value in values { try list.encode(value) }
        try list.encodeNil()
        try list.encode(date)
        try list.encode(PathEcho())
        try list.encode(Int8.min)
        try list.encode(UInt64.max)
        try list.encode(Float(0.1))
        try list.encode(text ?? "none")
        var deeper = list.nestedContainer(keyedBy: Keys.self)
        try deeper.encode(true, forKey: .upperB)
        try deeper.encode(PathEcho(), forKey: .b)
        var deepest = list.nestedUnkeyedContainer()
        try deepest.encode([PathEcho()])
        try container.encode(Nothing(), forKey: .nothing)
        try container.encode(Single(value: values.last ?? 1), forKey: .single)
    }
}

/// Encodes nothing: JSONEncoder writes `{}`.
private struct Nothing: Encodable {
    func encode(to encoder: any Encoder) throws {}
}

/// A wrapper that delegates to a single-value container.
private struct Single: Encodable {
    var value: Double
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

private struct RandomEntry: TimelineEntry, Encodable {
    var date: Date
    var title: String
    var target: Date?
    var integers: Integers
    var double: Double
    var doubles: [Double]
    var floats: [Float]
    var leaf: Leaf
    var leaves: [Leaf]
    var optionalLeaf: Leaf?
    var map: [String: Int]
    var nestedMap: [String: [Leaf]]
    var intKeyed: [Int: String]
    var optionalString: String?
    var strings: [String?]
    var flags: [Bool]
    var dates: [Date]
    var matrix: [[Int]]
    var manual: Manual
    var mood: Mood

    init(_ g: inout SplitMix64) {
        date = g.date()
        title = g.string(maxLength: 30)
        target = g.chance(50) ? g.date() : nil
        integers = Integers(&g)
        double = g.double()
        doubles = (0..<Int.random(in: 0...6, using: &g)).map { _ in g.double() }
        floats = (0..<Int.random(in: 0...3, using: &g)).map { _ in g.float() }
        leaf = Leaf(&g)
        leaves = (0..<Int.random(in: 0...3, using: &g)).map { _ in Leaf(&g) }
        optionalLeaf = g.chance(50) ? Leaf(&g) : nil
        map = [:]
        for _ in 0..<Int.random(in: 0...6, using: &g) {
            map[g.string(maxLength: 6)] = Int.random(in: -99...99, using: &g)
        }
        nestedMap = [:]
        for _ in 0..<Int.random(in: 0...2, using: &g) { nestedMap[g.string(maxLength: 3)] = [Leaf(&g)] }
        intKeyed = [:]
        for _ in 0..<Int.random(in: 0...4, using: &g) { intKeyed[Int.random(in: -20...20, using: &g)] = g.string() }
        optionalString = g.chance(50) ? g.string() : nil
        strings = (0..<Int.random(in: 0...4, using: &g)).map { _ in g.chance(70) ? g.string() : nil }
        flags = (0..<Int.random(in: 0...3, using: &g)).map { _ in g.chance(50) }
        dates = (0..<Int.random(in: 0...2, using: &g)).map { _ in g.date() }
        matrix = (0..<Int.random(in: 0...2, using: &g)).map { _ in
            (0..<Int.random(in: 0...3, using: &g)).map { _ in Int.random(in: .min ... .max, using: &g) }
        }
        manual = Manual(&g)
        mood = Mood.allCases.randomElement(using: &g)!
    }
}

/// Asks its encoder for the same kind of container twice (as a class and
/// its superclass may): both write into one object, and one array.
private struct AskTwice: Encodable {
    enum Keys: CodingKey { case first, second, list }
    func encode(to encoder: any Encoder) throws {
        var first = encoder.container(keyedBy: Keys.self)
        try first.encode(1, forKey: .second)
        var second = encoder.container(keyedBy: Keys.self)
        try second.encode("one", forKey: .first)
        try first.encode(ListTwice(), forKey: .list)
    }
}

private struct ListTwice: Encodable {
    func encode(to encoder: any Encoder) throws {
        var first = encoder.unkeyedContainer()
        try first.encode(1)
        var second = encoder.unkeyedContainer()
        try second.encode(2)
        try first.encode(3)
    }
}

/// A Date in a single-value container, or Date.encode(to:) on the encoder.
private struct DateBox: Encodable {
    var date: Date
    var direct: Bool
    func encode(to encoder: any Encoder) throws {
        if direct {
            try date.encode(to: encoder)
        } else {
            var container = encoder.singleValueContainer()
            try container.encode(date)
        }
    }
}

/// A NaN in a nested container.
private struct NestedNaN: Encodable {
    enum Keys: CodingKey { case outer, inner }
    var inList: Bool
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .outer)
        if inList {
            var list = nested.nestedUnkeyedContainer(forKey: .inner)
            try list.encode(1.0)
            try list.encode(Double.nan)
        } else {
            try nested.encode(Double.nan, forKey: .inner)
        }
    }
}

/// One field of any kind, to look at one value at a time.
private struct Field<Value: Encodable>: Encodable {
    var value: Value
}

// MARK: - Tests

@Suite struct JSONTextEncoderTests {
    @Test func randomEntriesMatchJSONEncoder() throws {
        var g = SplitMix64(seed: 0x5EED_2026)
        var identical = 0
        var unsupported = 0
        var mismatches: [String] = []
        for index in 0..<3000 {
            let entry = RandomEntry(&g)
            switch try compare(entry) {
            case .identical: identical += 1
            case .unsupported: unsupported += 1
            case .mismatch(let expected, let got):
                if mismatches.count < 5 {
                    mismatches.append("entry \(index):\n  JSONEncoder \(expected)\n  JSONTextEncoder \(got)")
                } else {
                    mismatches.append("")
                }
            }
        }
        print(
            "JSONTextEncoder vs JSONEncoder, 3000 random entries: \(identical) identical, \(unsupported) unsupported (JSONEncoder fallback), \(mismatches.count) mismatches"
        )
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches:\n\(mismatches.prefix(5).joined(separator: "\n"))")
        #expect(unsupported < 300)
    }

    @Test func scalarsMatchJSONEncoder() throws {
        var g = SplitMix64(seed: 42)
        var values: [Double] = [
            0, -0.0, 1, -1, 0.1, 1e-7, 1e21, 1e22, 1e16, 1e15, 999_999_999_999_999, 9_007_199_254_740_994,
            .leastNonzeroMagnitude, .greatestFiniteMagnitude, Double.leastNormalMagnitude.nextDown, 0.1.nextUp,
        ]
        for _ in 0..<20_000 { values.append(g.double()) }
        for value in values {
            #expect(try compare(Field(value: value)) == .identical, "\(value)")
        }
        var floats: [Float] = [0, -0.0, 1, 0.1, 1e-7, 16_777_216, 1e10, .greatestFiniteMagnitude]
        for _ in 0..<5000 { floats.append(g.float()) }
        for value in floats {
            #expect(try compare(Field(value: value)) == .identical, "\(value)")
        }
        for byte in UInt8(0)...0x7F {
            let string = "x" + String(Unicode.Scalar(byte)) + "y"
            #expect(try compare(Field(value: string)) == .identical, "\(byte)")
        }
        #expect(try compare(Field(value: "😀 e\u{301} \u{2028} \u{10FFFF} a/b \\ \"")) == .identical)
        #expect(try compare(Field(value: [Int8.min, Int8.max])) == .identical)
        #expect(try compare(Field(value: [Int64.min, Int64.max])) == .identical)
        #expect(try compare(Field(value: [UInt64.min, UInt64.max])) == .identical)
        #expect(try compare(Field(value: Float16(1.5))) == .identical)
        #expect(try compare(Field(value: [true, false])) == .identical)
        #expect(try compare(Field(value: Optional<Int>.none)) == .identical)
        #expect(try compare(AskTwice()) == .identical)
        // A Date through a custom type's single-value container is still a
        // date; Date's own encode(to:) called directly writes a number.
        let date = Date(timeIntervalSince1970: 1_795_000_000.25)
        #expect(try compare(Field(value: DateBox(date: date, direct: false))) == .identical)
        #expect(try compare(Field(value: DateBox(date: date, direct: true))) == .identical)
        #expect(
            text(try JSONTextEncoder.encode(Field(value: DateBox(date: date, direct: false)))).contains("T11:06:40Z"))
    }

    @Test func datesMatchJSONEncoder() throws {
        var g = SplitMix64(seed: 7)
        var unsupported = 0
        for _ in 0..<20_000 {
            let date = g.date()
            switch try compare(Field(value: date)) {
            case .identical: break
            case .unsupported: unsupported += 1
            case let mismatch: Issue.record("\(date.timeIntervalSinceReferenceDate): \(mismatch)")
            }
        }
        // Whole seconds, fractions, just before a second, 1970, 2001, 1583 and 9999.
        for interval in [
            0, 0.5, -0.5, 0.999_999_9, -1e-9, -978_307_200, -978_307_200.5, -13_191_897_600, 252_423_993_599.5,
            815_000_000.123_456,
        ] as [Double] {
            #expect(
                try compare(Field(value: Date(timeIntervalSinceReferenceDate: interval))) == .identical, "\(interval)")
        }
        #expect(try compare(Field(value: Date(timeIntervalSinceReferenceDate: -13_191_897_601))) == .unsupported)
        #expect(try compare(Field(value: Date(timeIntervalSinceReferenceDate: 252_423_993_600))) == .unsupported)
        #expect(unsupported < 2000)
    }

    @Test func keysSortByUTF8Bytes() throws {
        let keys = [
            "b", "B", "a", "é", "e\u{301}x", "z", "Z", "a10", "a9", "_", "ab", "Ä", "😀", "", "\u{212A}", "K", "k",
        ]
        var map: [String: Int] = [:]
        for (index, key) in keys.enumerated() { map[key] = index }
        #expect(try compare(map) == .identical)
        #expect(text(try JSONTextEncoder.encode(["b": 1, "B": 2, "é": 3, "z": 4])) == #"{"B":2,"b":1,"z":4,"é":3}"#)
    }

    @Test func firstPartyEntriesMatchJSONEncoder() async throws {
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        func context(_ json: String = "{}", preview: Bool = false) throws -> TimelineProviderContext {
            TimelineProviderContext(
                isPreview: preview, date: now, configuration: try InstanceConfiguration(json: json),
                dataDirectory: URL(fileURLWithPath: "/nonexistent", isDirectory: true))
        }
        func check<Entry: TimelineEntry & Encodable>(_ entries: [Entry]) throws {
            #expect(!entries.isEmpty)
            for entry in entries { #expect(try compare(entry) == .identical, "\(entry)") }
        }
        let health = CharacterHealthProvider()
        try check(try await health.timeline(in: context(#"{"health": 0.25}"#)).entries)
        try check([health.placeholder(in: try context()), try await health.snapshot(in: context(preview: true))])
        let heroes = HeroLeaderboardProvider()
        try check(try await heroes.timeline(in: context()).entries)
        try check([heroes.placeholder(in: try context())])
        let target = Date(timeIntervalSince1970: 1_798_761_600)  // 2027-01-01
        try check(CountdownProvider.timeline(title: "New Year \"27\" / 🎆", target: target, now: now).entries)
        try check(CountdownProvider.timeline(title: "Launch", target: now.addingTimeInterval(3660), now: now).entries)
        try check(try await CountdownProvider().timeline(in: context()).entries)
        let market = MarketHoursProvider()
        try check(try await market.timeline(in: context()).entries)
        try check([market.placeholder(in: try context())])
        for offset in stride(from: 0.0, to: 7 * 86_400, by: 5 * 3600) {
            let at = TimelineProviderContext(
                date: now.addingTimeInterval(offset), configuration: InstanceConfiguration(),
                dataDirectory: URL(fileURLWithPath: "/nonexistent", isDirectory: true))
            try check(try await market.timeline(in: at).entries)
        }
    }

    @Test func nonFiniteNumbersThrowAsJSONEncoderDoes() throws {
        struct Nested: Encodable {
            var leaf: Field<[Double]>
        }
        let values: [any Encodable] = [
            Field(value: Double.nan), Field(value: -Double.infinity), Field(value: Float.nan),
            Field(value: [1, Double.infinity]), Nested(leaf: Field(value: [0, 1, .nan])),
            Field(value: Single(value: .nan)),
            Field(value: [Float.infinity]), NestedNaN(inList: false), NestedNaN(inList: true),
        ]
        for value in values {
            let (expected, got, sink) = errors(value)
            #expect(expected.contains("Unable to encode"), "\(expected)")
            #expect(got == expected)
            #expect(sink == expected)
        }
    }

    @Test func unsupportedValuesFallBackToJSONEncoder() throws {
        struct Twice: Encodable {
            enum Keys: CodingKey { case a }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(1, forKey: .a)
                try container.encode(2, forKey: .a)
            }
        }
        struct Super: Encodable {
            enum Keys: CodingKey { case a }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(1, forKey: .a)
                var single = container.superEncoder().singleValueContainer()
                try single.encode("base")
            }
        }
        struct Canonical: Encodable {
            struct Key: CodingKey {
                var stringValue: String
                var intValue: Int? { nil }
                init(stringValue: String) { self.stringValue = stringValue }
                init?(intValue: Int) { nil }
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(1, forKey: Key(stringValue: "\u{E9}"))
                try container.encode(2, forKey: Key(stringValue: "e\u{301}"))
            }
        }
        struct Mixed: Encodable {
            var url = URL(string: "https://example.com/a/b?c=d")!
            var data = Data([0, 1, 2, 250])
            var decimal = Decimal(string: "3.14")!
            var date = Date(timeIntervalSinceReferenceDate: -20_000_000_000)
            var big = Int128.max
        }
        for value in [Field(value: URL(string: "https://example.com/x")!)] as [any Encodable] {
            #expect(try compare(value) == .unsupported)
        }
        #expect(try compare(Field(value: Data([1, 2, 3]))) == .unsupported)
        #expect(try compare(Field(value: Decimal(string: "1.5")!)) == .unsupported)
        #expect(try compare(Field(value: Int128.min)) == .unsupported)
        #expect(try compare(Twice()) == .unsupported)
        #expect(try compare(Super()) == .unsupported)
        #expect(try compare(Canonical()) == .unsupported)
        #expect(try compare(Mixed()) == .unsupported)
    }

    @Test func fallbackThroughTheCompletionGivesJSONEncodersBytes() async throws {
        let d = descriptor(
            PluginInfo(id: "test.entry-encoder", name: "Encoder", version: "1"),
            kinds: [WidgetKind("test.link", displayName: "Link", provider: LinkProvider())])
        let result = await call(kind(d, 0), .timeline)
        #expect(result.status == Int32(WH_STATUS_OK.rawValue))
        let expected = try referenceEncoder().encode(
            LinkEntry(date: Date(timeIntervalSince1970: 1_795_000_000), link: URL(string: "https://example.com/a/b")!))
        #expect(result.entries.map(\.json) == [text(Array(expected))])
        #expect(result.entries.first?.json.contains(#""link":"https://example.com/a/b""#) == true)
    }
}

private struct LinkEntry: TimelineEntry, Encodable {
    var date: Date
    var link: URL
}

private struct LinkProvider: TimelineProvider {
    func placeholder(in context: Context) -> LinkEntry {
        LinkEntry(date: context.date, link: URL(string: "https://example.com/a/b")!)
    }
    func getSnapshot(in context: Context, completion: @escaping (LinkEntry) -> Void) {
        completion(placeholder(in: context))
    }
    func getTimeline(in context: Context, completion: @escaping (Timeline<LinkEntry>) -> Void) {
        completion(Timeline(entries: [placeholder(in: context)], policy: .never))
    }
}
