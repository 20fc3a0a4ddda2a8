#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A small JSON encoder whose output is byte-identical to `JSONEncoder` with
/// `dateEncodingStrategy = .iso8601` and `outputFormatting = [.sortedKeys,
/// .withoutEscapingSlashes]`: the Swift SDK's timeline entries
/// (`CompletionSink`) and the host's control-protocol lines
/// (`ControlCoding`) go through it.
///
/// ```swift
/// let bytes = try JSONTextEncoder.encode(["b": 2, "a": 1])   // {"a":1,"b":2}
/// ```
///
/// Why it exists: every plugin call runs in a freshly forked fork-server
/// child, whose caches are cold. There `JSONEncoder`'s generic machinery (its
/// value tree, boxes and the run-time instantiation of its generic containers
/// and conversions) was about half of a provider's time; in the daemon's
/// loop, encoding answers with it was a tenth of the loop under load. This encoder writes
/// scalars straight into one byte buffer, keeps containers as a small tree
/// that is sorted and written once at the end, and dispatches the common
/// concrete types (`String`, `Int`, `Double`, `Bool`, `Date`) before falling
/// back to a value's own `encode(to:)`.
///
/// What it matches (checked against swift-foundation's JSONEncoder, the one
/// FoundationEssentials has on Linux; see `JSONTextEncoderTests`):
/// - keys sorted by their UTF-8 bytes (`.sortedKeys` on Linux compares
///   `key.utf8` lexicographically);
/// - strings: `"` and `\` escaped, `\b \f \n \r \t` for those controls,
///   `\u00xx` (lowercase hex) for the other controls below 0x20, everything
///   else (slashes, DEL, non-ASCII) raw;
/// - integers in decimal; `Float` and `Double` as their `description`
///   without a trailing `.0` (`1`, `0.1`, `1e-07`, `1e+21`, `-0`);
///   non-finite values throw `EncodingError.invalidValue` with JSONEncoder's
///   message;
/// - `Date` as `.iso8601` writes it: UTC, whole seconds rounded down
///   (`2026-11-21T22:20:00Z`), for years 1583 through 9999;
/// - `nil` as `null`, `encodeIfPresent` of `nil` writes nothing, a value
///   that encodes nothing writes `{}`;
/// - the coding paths a value's `encode(to:)` sees, quirks included (see
///   ``JSONTextEncoderNode/memberPath``).
///
/// What it does not handle: it throws ``JSONTextEncoderUnsupported`` and the
/// caller encodes the entry with `JSONEncoder` instead, so the output is the
/// same either way. That covers `Data`, `URL`, `Decimal`, `Int128`/`UInt128`,
/// `superEncoder()`, a key encoded twice in one object, containers requested
/// in conflicting ways, dates before 1583 (JSONEncoder's Gregorian calendar
/// switches to the Julian one before 1582-10-15) or after 9999, nesting
/// deeper than 500, and a top-level value that encodes nothing.
public struct JSONTextEncoder {
    /// Encodes `value` as JSON, or throws ``JSONTextEncoderUnsupported`` if the
    /// value uses something this encoder does not write exactly as
    /// JSONEncoder, or the error JSONEncoder would throw (a non-finite
    /// number, or whatever the value's `encode(to:)` throws).
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let session = JSONTextEncoderSession()
        let root = JSONTextEncoderNode(kind: .array, codingPath: [])
        root.members.append(JSONTextEncoderMember(key: "", value: .pending))
        let encoder = JSONTextEncoderSlot(session: session, parent: root, slot: 0, key: nil)
        if try !session.encodeKnown(value, into: root, slot: 0, path: encoder) {
            try value.encode(to: encoder)
        }
        if let reason = session.unsupported { throw JSONTextEncoderUnsupported(reason: reason) }
        let value = root.members[0].value
        if value.isPending { throw JSONTextEncoderUnsupported(reason: "the top-level value encoded nothing") }
        var output: [UInt8] = []
        output.reserveCapacity(session.scratch.count + 16 * session.keyCount + 2)
        try session.write(value, into: &output, depth: 0)
        return output
    }

    /// Appends `text` as a JSON string literal, escaped as `JSONEncoder`
    /// escapes it (`"` and `\`, `\b \f \n \r \t`, `\u00xx` for the other
    /// controls; slashes, DEL and non-ASCII as they are): the one string
    /// quoting of the host's hand-written JSON (``JSONValue``, the state
    /// file's columns).
    public static func appendQuoted(_ text: String, to output: inout [UInt8]) {
        JSONTextEncoderSession.write(string: text, into: &output)
    }
}

/// Thrown by ``JSONTextEncoder`` for what it does not write exactly as
/// JSONEncoder does; the caller then uses JSONEncoder.
public struct JSONTextEncoderUnsupported: Error, CustomStringConvertible {
    /// What the value used that this encoder does not write.
    public var reason: String
    public var description: String { "JSONTextEncoder does not handle this: \(reason)" }
}

// MARK: - Tree

/// A keyed or unkeyed container: its members, in the order encoded. Scalars
/// are byte ranges in the session's scratch buffer.
final class JSONTextEncoderNode {
    enum Kind { case object, array }
    let kind: Kind
    /// The container's own coding path.
    let codingPath: [any CodingKey]
    /// What its members' coding paths start with. JSONEncoder starts them
    /// with the path of the encoder that made the outermost container, not
    /// with the path of a nested container (`nestedContainer(forKey:)`'s key
    /// is not in it); a value's `encode(to:)` can see this, so it is matched.
    let memberPath: [any CodingKey]
    // Unchecked: only one encode call uses a node, on one thread, and no
    // access to `members` overlaps another; the dynamic checks were a fifth
    // of the encoder's time.
    @exclusivity(unchecked) var members: [JSONTextEncoderMember] = []

    init(kind: Kind, codingPath: [any CodingKey], memberPath: [any CodingKey]? = nil) {
        self.kind = kind
        self.codingPath = codingPath
        self.memberPath = memberPath ?? codingPath
    }
}

struct JSONTextEncoderMember {
    /// The key in an object; empty in an array.
    var key: String
    var value: JSONTextEncoderValue
}

enum JSONTextEncoderValue {
    /// Nothing encoded (yet): written as `{}`, as JSONEncoder does.
    case pending
    /// A single-value container was requested but nothing encoded into it.
    case emptySingle
    /// Bytes `start..<end` of the session's scratch buffer.
    case bytes(Int, Int)
    case node(JSONTextEncoderNode)

    var isPending: Bool {
        if case .pending = self { return true }
        return false
    }
}

/// The key JSONEncoder puts in the coding path for an array element.
struct JSONTextEncoderIndexKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.init(index: intValue) }
}

// MARK: - Session

/// The state of one `JSONTextEncoder.encode` call.
final class JSONTextEncoderSession {
    // Unchecked, as JSONTextEncoderNode.members: one call, one thread, no
    // overlapping accesses.
    @exclusivity(unchecked) var scratch: [UInt8] = []
    @exclusivity(unchecked) var keyCount = 0
    /// Set by the non-throwing protocol methods (`superEncoder()`,
    /// `container(keyedBy:)` on a used encoder) when they meet something
    /// unsupported; checked when the top-level value is done.
    var unsupported: String?

    init() {
        scratch.reserveCapacity(256)
    }

    func markUnsupported(_ reason: String) {
        if unsupported == nil { unsupported = reason }
    }

    /// Encodes the types JSONEncoder treats specially and the common scalars
    /// into `parent.members[slot]`; returns false for anything else, which
    /// the caller encodes with the value's own `encode(to:)`.
    @inline(__always)
    func encodeKnown<T: Encodable>(
        _ value: T, into parent: JSONTextEncoderNode, slot: Int, path: @autoclosure () -> JSONTextEncoderSlot
    ) throws -> Bool {
        let type = T.self
        let start = scratch.count
        if type == String.self {
            appendString(unsafeBitCast(value, to: String.self))
        } else if type == Int.self {
            appendInt(Int64(unsafeBitCast(value, to: Int.self)))
        } else if type == Double.self {
            try appendDouble(unsafeBitCast(value, to: Double.self), path: path().codingPath)
        } else if type == Bool.self {
            appendBool(unsafeBitCast(value, to: Bool.self))
        } else if type == Date.self {
            try appendDate(unsafeBitCast(value, to: Date.self))
        } else if type == Data.self || type == URL.self || type == Decimal.self {
            throw JSONTextEncoderUnsupported(reason: "\(type) (JSONEncoder encodes it specially)")
        } else {
            return false
        }
        parent.members[slot].value = .bytes(start, scratch.count)
        return true
    }

    // MARK: Scalars

    func appendBool(_ value: Bool) {
        if value {
            scratch.append(contentsOf: [0x74, 0x72, 0x75, 0x65])  // true
        } else {
            scratch.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])  // false
        }
    }

    func appendNull() {
        scratch.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])  // null
    }

    func appendInt(_ value: Int64) {
        if value < 0 {
            scratch.append(UInt8(ascii: "-"))
            appendUInt(value.magnitude)
        } else {
            appendUInt(UInt64(value))
        }
    }

    func appendUInt(_ value: UInt64) {
        if value < 10 {
            scratch.append(UInt8(truncatingIfNeeded: value) &+ 0x30)
            return
        }
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        let end = scratch.count + digits
        scratch.append(contentsOf: repeatElement(0, count: digits))
        scratch.withUnsafeMutableBufferPointer { buffer in
            var position = end
            var rest = value
            repeat {
                let (quotient, digit) = rest.quotientAndRemainder(dividingBy: 10)
                position -= 1
                buffer[position] = UInt8(truncatingIfNeeded: digit) &+ 0x30
                rest = quotient
            } while rest > 0
        }
    }

    func appendDouble(_ value: Double, path: @autoclosure () -> [any CodingKey]) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: path(), debugDescription: "Unable to encode Double.\(value) directly in JSON."))
        }
        // Integral values below 1e15 print as integers (`description` would
        // add ".0", which JSONEncoder removes); -0 goes the long way ("-0").
        if value.rounded(.towardZero) == value, value.magnitude < 1e15, !(value == 0 && value.sign == .minus) {
            appendInt(Int64(value))
            return
        }
        appendDescription(value.description)
    }

    func appendFloat(_ value: Float, path: @autoclosure () -> [any CodingKey]) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: path(), debugDescription: "Unable to encode Float.\(value) directly in JSON."))
        }
        appendDescription(value.description)
    }

    /// A number's description without a trailing ".0", as JSONEncoder
    /// writes it.
    private func appendDescription(_ description: String) {
        var text = description
        text.withUTF8 { bytes in
            var count = bytes.count
            if count > 2, bytes[count - 2] == UInt8(ascii: "."), bytes[count - 1] == UInt8(ascii: "0") {
                count -= 2
            }
            scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[..<count]))
        }
    }

    func appendString(_ value: String) {
        Self.write(string: value, into: &scratch)
    }

    /// Writes `value` as a JSON string, escaped as JSONEncoder escapes it.
    static func write(string value: String, into scratch: inout [UInt8]) {
        scratch.append(UInt8(ascii: "\""))
        var text = value
        text.withUTF8 { bytes in
            var mark = 0
            var index = 0
            let count = bytes.count
            while index < count {
                let byte = bytes[index]
                if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                    index += 1
                    continue
                }
                if index > mark { scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[mark..<index])) }
                scratch.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): scratch.append(byte)
                case 0x08: scratch.append(UInt8(ascii: "b"))
                case 0x0C: scratch.append(UInt8(ascii: "f"))
                case 0x0A: scratch.append(UInt8(ascii: "n"))
                case 0x0D: scratch.append(UInt8(ascii: "r"))
                case 0x09: scratch.append(UInt8(ascii: "t"))
                default:
                    // JSONEncoder writes lowercase hex.
                    func hex(_ digit: UInt8) -> UInt8 { digit < 10 ? 0x30 &+ digit : 0x57 &+ digit }
                    scratch.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, hex(byte >> 4), hex(byte & 0xF)])
                }
                index += 1
                mark = index
            }
            if count > mark { scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[mark..<count])) }
        }
        scratch.append(UInt8(ascii: "\""))
    }

    /// `.iso8601`: `yyyy-MM-ddTHH:mm:ssZ` in UTC, the seconds rounded down.
    func appendDate(_ date: Date) throws {
        let interval = date.timeIntervalSinceReferenceDate
        // 1583-01-01 and 10000-01-01, relative to 2001-01-01.
        guard interval >= -13_191_897_600, interval < 252_423_993_600 else {
            throw JSONTextEncoderUnsupported(reason: "a date before 1583 or after 9999 (\(interval))")
        }
        let seconds = Int64(interval.rounded(.down))
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        // Days since 1970-01-01, then the civil date (Howard Hinnant's
        // days_from_civil inverse, proleptic Gregorian).
        let z = days + 11_323 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let hour = secondOfDay / 3600
        let minute = secondOfDay / 60 % 60
        let second = secondOfDay % 60
        scratch.append(UInt8(ascii: "\""))
        appendDigits(year, 4)
        scratch.append(UInt8(ascii: "-"))
        appendDigits(month, 2)
        scratch.append(UInt8(ascii: "-"))
        appendDigits(day, 2)
        scratch.append(UInt8(ascii: "T"))
        appendDigits(hour, 2)
        scratch.append(UInt8(ascii: ":"))
        appendDigits(minute, 2)
        scratch.append(UInt8(ascii: ":"))
        appendDigits(second, 2)
        scratch.append(UInt8(ascii: "Z"))
        scratch.append(UInt8(ascii: "\""))
    }

    private func appendDigits(_ value: Int64, _ width: Int) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        while divisor > 0 {
            scratch.append(UInt8(truncatingIfNeeded: value / divisor % 10) &+ 0x30)
            divisor /= 10
        }
    }

    // MARK: Writing the tree

    func write(_ value: JSONTextEncoderValue, into output: inout [UInt8], depth: Int) throws {
        switch value {
        case .pending:
            output.append(contentsOf: [UInt8(ascii: "{"), UInt8(ascii: "}")])
        case .emptySingle:
            throw JSONTextEncoderUnsupported(reason: "a single-value container with no value")
        case .bytes(let start, let end):
            scratch.withUnsafeBufferPointer { bytes in
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<end]))
            }
        case .node(let node):
            guard depth < 500 else { throw JSONTextEncoderUnsupported(reason: "nesting deeper than 500") }
            switch node.kind {
            case .array: try writeArray(node, into: &output, depth: depth)
            case .object: try writeObject(node, into: &output, depth: depth)
            }
        }
    }

    private func writeArray(_ node: JSONTextEncoderNode, into output: inout [UInt8], depth: Int) throws {
        output.append(UInt8(ascii: "["))
        for index in node.members.indices {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            try write(node.members[index].value, into: &output, depth: depth + 1)
        }
        output.append(UInt8(ascii: "]"))
    }

    private func writeObject(_ node: JSONTextEncoderNode, into output: inout [UInt8], depth: Int) throws {
        let members = node.members
        // Sort by the keys' UTF-8 bytes, as JSONEncoder's `.sortedKeys` does
        // on Linux. Each key's first 8 bytes, big-endian, decide most
        // comparisons; equal prefixes compare the whole keys.
        var order: [(prefix: UInt64, index: Int)] = []
        order.reserveCapacity(members.count)
        var allASCII = true
        for index in members.indices {
            var prefix: UInt64 = 0
            var count: UInt64 = 0
            for byte in members[index].key.utf8 {
                if byte >= 0x80 { allASCII = false }
                if count < 8 { prefix |= UInt64(byte) << (56 - 8 * count) }
                count += 1
            }
            order.append((prefix, index))
        }
        func precedes(_ a: (prefix: UInt64, index: Int), _ b: (prefix: UInt64, index: Int)) -> Bool {
            if a.prefix != b.prefix { return a.prefix < b.prefix }
            return members[a.index].key.utf8.lexicographicallyPrecedes(members[b.index].key.utf8)
        }
        if order.count > 16 {
            order.sort(by: precedes)
        } else if order.count > 1 {
            // Insertion sort: entries' objects are small.
            for index in 1..<order.count {
                let moving = order[index]
                var position = index
                while position > 0 && precedes(moving, order[position - 1]) {
                    order[position] = order[position - 1]
                    position -= 1
                }
                order[position] = moving
            }
        }
        // JSONEncoder keeps one value per key, by `String` equality
        // (canonical equivalence): equal keys are unsupported.
        for index in order.indices.dropFirst() where order[index].prefix == order[index - 1].prefix {
            let key = members[order[index].index].key
            if key.utf8.elementsEqual(members[order[index - 1].index].key.utf8) {
                throw JSONTextEncoderUnsupported(reason: "key \"\(key)\" encoded twice")
            }
        }
        if !allASCII {
            // Non-ASCII keys can be canonically equal with different bytes.
            var seen: Set<String> = []
            for member in members where !seen.insert(member.key).inserted {
                throw JSONTextEncoderUnsupported(reason: "key \"\(member.key)\" encoded twice (canonically equal)")
            }
        }
        output.append(UInt8(ascii: "{"))
        var first = true
        for (_, index) in order {
            if first { first = false } else { output.append(UInt8(ascii: ",")) }
            Self.write(string: members[index].key, into: &output)
            output.append(UInt8(ascii: ":"))
            try write(members[index].value, into: &output, depth: depth + 1)
        }
        output.append(UInt8(ascii: "}"))
    }
}

// MARK: - Encoder

/// The encoder a value's `encode(to:)` gets: it fills one slot, member
/// `slot` of `parent`.
struct JSONTextEncoderSlot: Encoder {
    let session: JSONTextEncoderSession
    let parent: JSONTextEncoderNode
    let slot: Int
    /// The slot's key in the coding path; nil for the top-level value.
    let key: (any CodingKey)?

    var codingPath: [any CodingKey] {
        guard let key else { return parent.memberPath }
        return parent.memberPath + [key]
    }

    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(JSONTextEncoderKeyedContainer<Key>(session: session, node: node(.object)))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        JSONTextEncoderUnkeyedContainer(session: session, node: node(.array))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        switch parent.members[slot].value {
        case .pending: parent.members[slot].value = .emptySingle
        case .emptySingle: break
        default: session.markUnsupported("a single-value container on an encoder already used")
        }
        return JSONTextEncoderSingleValueContainer(encoder: self)
    }

    /// The slot's container of `kind`: new, or the one an earlier request
    /// made (JSONEncoder lets a value ask again, e.g. a subclass and its
    /// superclass).
    private func node(_ kind: JSONTextEncoderNode.Kind) -> JSONTextEncoderNode {
        switch parent.members[slot].value {
        case .pending, .emptySingle:
            let node = JSONTextEncoderNode(kind: kind, codingPath: codingPath)
            parent.members[slot].value = .node(node)
            return node
        case .node(let node) where node.kind == kind:
            return node
        default:
            session.markUnsupported("a \(kind) container on an encoder already used otherwise")
            return JSONTextEncoderNode(kind: kind, codingPath: codingPath)
        }
    }

    /// Encodes `value` into this slot.
    func encodeValue<T: Encodable>(_ value: T) throws {
        if try !session.encodeKnown(value, into: parent, slot: slot, path: self) {
            try value.encode(to: self)
        }
    }
}

// MARK: - Containers

struct JSONTextEncoderKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let session: JSONTextEncoderSession
    let node: JSONTextEncoderNode

    var codingPath: [any CodingKey] { node.codingPath }

    /// Appends a member for `key` and returns its index.
    private func add(_ key: Key) -> Int {
        session.keyCount += 1
        node.members.append(JSONTextEncoderMember(key: key.stringValue, value: .pending))
        return node.members.count - 1
    }

    /// Appends a member for `key` whose value `append` writes into the
    /// scratch buffer (no member when it throws). Always inlined, as in the
    /// other containers: otherwise the closure costs ~10 % of an encode.
    @inline(__always) private func put(_ key: Key, _ append: () throws -> Void) rethrows {
        let start = session.scratch.count
        try append()
        node.members[add(key)].value = .bytes(start, session.scratch.count)
    }

    mutating func encodeNil(forKey key: Key) throws { put(key) { session.appendNull() } }
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(key) { session.appendBool(value) } }
    mutating func encode(_ value: String, forKey key: Key) throws { put(key) { session.appendString(value) } }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        try put(key) { try session.appendDouble(value, path: node.memberPath + [key]) }
    }

    mutating func encode(_ value: Float, forKey key: Key) throws {
        try put(key) { try session.appendFloat(value, path: node.memberPath + [key]) }
    }

    mutating func encode(_ value: Int, forKey key: Key) throws { put(key) { session.appendInt(Int64(value)) } }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(key) { session.appendInt(Int64(value)) } }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(key) { session.appendInt(Int64(value)) } }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(key) { session.appendInt(Int64(value)) } }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(key) { session.appendInt(value) } }
    mutating func encode(_ value: UInt, forKey key: Key) throws { put(key) { session.appendUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(key) { session.appendUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(key) { session.appendUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(key) { session.appendUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { put(key) { session.appendUInt(value) } }

    mutating func encode(_ value: Int128, forKey key: Key) throws {
        throw JSONTextEncoderUnsupported(reason: "Int128")
    }

    mutating func encode(_ value: UInt128, forKey key: Key) throws {
        throw JSONTextEncoderUnsupported(reason: "UInt128")
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let slot = add(key)
        try JSONTextEncoderSlot(session: session, parent: node, slot: slot, key: key).encodeValue(value)
    }

    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) }
    }

    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
        if let value { put(key) { session.appendInt(Int64(value)) } }
    }

    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) }
    }

    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) }
    }

    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let slot = add(key)
        let nested = JSONTextEncoderNode(
            kind: .object, codingPath: node.codingPath + [key], memberPath: node.memberPath)
        node.members[slot].value = .node(nested)
        return KeyedEncodingContainer(JSONTextEncoderKeyedContainer<NestedKey>(session: session, node: nested))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let slot = add(key)
        let nested = JSONTextEncoderNode(kind: .array, codingPath: node.codingPath + [key], memberPath: node.memberPath)
        node.members[slot].value = .node(nested)
        return JSONTextEncoderUnkeyedContainer(session: session, node: nested)
    }

    mutating func superEncoder() -> any Encoder {
        session.markUnsupported("superEncoder()")
        return detachedEncoder(session)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        session.markUnsupported("superEncoder(forKey:)")
        return detachedEncoder(session)
    }
}

/// An encoder whose output goes nowhere, for the protocol methods that
/// cannot throw; the session is already marked unsupported.
private func detachedEncoder(_ session: JSONTextEncoderSession) -> JSONTextEncoderSlot {
    let holder = JSONTextEncoderNode(kind: .array, codingPath: [])
    holder.members.append(JSONTextEncoderMember(key: "", value: .pending))
    return JSONTextEncoderSlot(session: session, parent: holder, slot: 0, key: nil)
}

struct JSONTextEncoderUnkeyedContainer: UnkeyedEncodingContainer {
    let session: JSONTextEncoderSession
    let node: JSONTextEncoderNode

    var codingPath: [any CodingKey] { node.codingPath }
    var count: Int { node.members.count }

    private func add() -> Int {
        node.members.append(JSONTextEncoderMember(key: "", value: .pending))
        return node.members.count - 1
    }

    /// Appends an element whose value `append` writes into the scratch
    /// buffer (no element when it throws).
    @inline(__always) private func put(_ append: () throws -> Void) rethrows {
        let start = session.scratch.count
        try append()
        node.members[add()].value = .bytes(start, session.scratch.count)
    }

    /// The coding path of the element being appended.
    private var indexPath: [any CodingKey] { node.memberPath + [JSONTextEncoderIndexKey(index: node.members.count)] }

    mutating func encodeNil() throws { put { session.appendNull() } }
    mutating func encode(_ value: Bool) throws { put { session.appendBool(value) } }
    mutating func encode(_ value: String) throws { put { session.appendString(value) } }
    mutating func encode(_ value: Double) throws { try put { try session.appendDouble(value, path: indexPath) } }
    mutating func encode(_ value: Float) throws { try put { try session.appendFloat(value, path: indexPath) } }
    mutating func encode(_ value: Int) throws { put { session.appendInt(Int64(value)) } }
    mutating func encode(_ value: Int8) throws { put { session.appendInt(Int64(value)) } }
    mutating func encode(_ value: Int16) throws { put { session.appendInt(Int64(value)) } }
    mutating func encode(_ value: Int32) throws { put { session.appendInt(Int64(value)) } }
    mutating func encode(_ value: Int64) throws { put { session.appendInt(value) } }
    mutating func encode(_ value: UInt) throws { put { session.appendUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt8) throws { put { session.appendUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt16) throws { put { session.appendUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt32) throws { put { session.appendUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt64) throws { put { session.appendUInt(value) } }
    mutating func encode(_ value: Int128) throws { throw JSONTextEncoderUnsupported(reason: "Int128") }
    mutating func encode(_ value: UInt128) throws { throw JSONTextEncoderUnsupported(reason: "UInt128") }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let key = JSONTextEncoderIndexKey(index: node.members.count)
        let slot = add()
        try JSONTextEncoderSlot(session: session, parent: node, slot: slot, key: key).encodeValue(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let path = node.codingPath + [JSONTextEncoderIndexKey(index: node.members.count)]
        let nested = JSONTextEncoderNode(kind: .object, codingPath: path, memberPath: node.memberPath)
        node.members[add()].value = .node(nested)
        return KeyedEncodingContainer(JSONTextEncoderKeyedContainer<NestedKey>(session: session, node: nested))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = node.codingPath + [JSONTextEncoderIndexKey(index: node.members.count)]
        let nested = JSONTextEncoderNode(kind: .array, codingPath: path, memberPath: node.memberPath)
        node.members[add()].value = .node(nested)
        return JSONTextEncoderUnkeyedContainer(session: session, node: nested)
    }

    mutating func superEncoder() -> any Encoder {
        session.markUnsupported("superEncoder()")
        return detachedEncoder(session)
    }
}

struct JSONTextEncoderSingleValueContainer: SingleValueEncodingContainer {
    let encoder: JSONTextEncoderSlot

    var codingPath: [any CodingKey] { encoder.codingPath }

    private var session: JSONTextEncoderSession { encoder.session }

    /// Checks that nothing was encoded here yet and returns where the value
    /// starts in the scratch buffer.
    private func begin() throws -> Int {
        switch encoder.parent.members[encoder.slot].value {
        case .pending, .emptySingle: return session.scratch.count
        default: throw JSONTextEncoderUnsupported(reason: "a second value in a single-value container")
        }
    }

    /// The value, written by `append` into the scratch buffer.
    @inline(__always) private func put(_ append: () throws -> Void) throws {
        let start = try begin()
        try append()
        encoder.parent.members[encoder.slot].value = .bytes(start, session.scratch.count)
    }

    mutating func encodeNil() throws { try put { session.appendNull() } }
    mutating func encode(_ value: Bool) throws { try put { session.appendBool(value) } }
    mutating func encode(_ value: String) throws { try put { session.appendString(value) } }
    mutating func encode(_ value: Double) throws {
        try put { try session.appendDouble(value, path: encoder.codingPath) }
    }
    mutating func encode(_ value: Float) throws { try put { try session.appendFloat(value, path: encoder.codingPath) } }
    mutating func encode(_ value: Int) throws { try put { session.appendInt(Int64(value)) } }
    mutating func encode(_ value: Int8) throws { try put { session.appendInt(Int64(value)) } }
    mutating func encode(_ value: Int16) throws { try put { session.appendInt(Int64(value)) } }
    mutating func encode(_ value: Int32) throws { try put { session.appendInt(Int64(value)) } }
    mutating func encode(_ value: Int64) throws { try put { session.appendInt(value) } }
    mutating func encode(_ value: UInt) throws { try put { session.appendUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt8) throws { try put { session.appendUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt16) throws { try put { session.appendUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt32) throws { try put { session.appendUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt64) throws { try put { session.appendUInt(value) } }
    mutating func encode(_ value: Int128) throws { throw JSONTextEncoderUnsupported(reason: "Int128") }
    mutating func encode(_ value: UInt128) throws { throw JSONTextEncoderUnsupported(reason: "UInt128") }

    mutating func encode<T: Encodable>(_ value: T) throws {
        _ = try begin()
        try encoder.encodeValue(value)
    }
}
