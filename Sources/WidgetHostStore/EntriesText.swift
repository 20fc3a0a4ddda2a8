import WidgetHostModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reads the `timeline.entries` column as schema v4 and earlier wrote it (the
/// JSON array of entries `JSONEncoder` writes; since v5 it is an
/// ``EntriesBlob``), in one pass over its bytes: the v5 migration and a row it
/// left as text are read this way, where `JSONDecoder` spent 70 % of a
/// 100,000-instance restart.
///
/// It accepts the column's shape only: an array of objects with `date` (a
/// number), `contentJSON` (a string) and an optional `relevance` (`null` or
/// an object with numbers `score` and `duration`), each key once. For
/// anything else (another key, a number written as a string, a lone
/// surrogate, text that is not JSON) it returns nil and the caller decodes
/// with `JSONDecoder`, which either reads it the same way or explains what is
/// wrong. What it returns is what `JSONDecoder` returns for the same text
/// (`EntriesTextTests` checks this on random and mutated columns).
enum EntriesText {
    static func parse(_ text: String) -> [EntryRecord]? {
        var text = text
        return text.withUTF8 { bytes in
            var reader = Reader(bytes: bytes)
            return reader.document()
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        /// A string's bytes with its escapes undone (kept between strings).
        var unescaped: [UInt8] = []

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        mutating func document() -> [EntryRecord]? {
            guard take(UInt8(ascii: "[")) else { return nil }
            var entries: [EntryRecord] = []
            if !take(UInt8(ascii: "]")) {
                while true {
                    guard let entry = entry() else { return nil }
                    entries.append(entry)
                    if take(UInt8(ascii: ",")) { continue }
                    guard take(UInt8(ascii: "]")) else { return nil }
                    break
                }
            }
            skipSpace()
            return index == bytes.count ? entries : nil
        }

        private mutating func entry() -> EntryRecord? {
            guard take(UInt8(ascii: "{")) else { return nil }
            var date: Double?
            var content: String?
            var relevance: Relevance?
            var sawRelevance = false
            guard !take(UInt8(ascii: "}")) else { return nil }
            while true {
                guard let key = key(), take(UInt8(ascii: ":")) else { return nil }
                switch key {
                case .contentJSON:
                    guard content == nil, let value = string() else { return nil }
                    content = value
                case .date:
                    guard date == nil, let value = number() else { return nil }
                    date = value
                case .relevance:
                    guard !sawRelevance else { return nil }
                    sawRelevance = true
                    if !literalNull() {
                        guard let value = relevanceObject() else { return nil }
                        relevance = value
                    }
                default: return nil
                }
                if take(UInt8(ascii: ",")) { continue }
                guard take(UInt8(ascii: "}")) else { return nil }
                break
            }
            guard let date, let content else { return nil }
            return EntryRecord(date: date, relevance: relevance, contentJSON: content)
        }

        private mutating func relevanceObject() -> Relevance? {
            guard take(UInt8(ascii: "{")), !take(UInt8(ascii: "}")) else { return nil }
            var score: Double?
            var duration: Double?
            while true {
                guard let key = key(), take(UInt8(ascii: ":")) else { return nil }
                switch key {
                case .score:
                    guard score == nil, let value = number() else { return nil }
                    score = value
                case .duration:
                    guard duration == nil, let value = number() else { return nil }
                    duration = value
                default: return nil
                }
                if take(UInt8(ascii: ",")) { continue }
                guard take(UInt8(ascii: "}")) else { return nil }
                break
            }
            guard let score, let duration else { return nil }
            return Relevance(score: score, duration: duration)
        }

        private enum Key { case contentJSON, date, relevance, score, duration }

        /// A member name without escapes, as one of the known keys.
        private mutating func key() -> Key? {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            let start = index + 1
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\") { end += 1 }
            guard end < bytes.count, bytes[end] == UInt8(ascii: "\"") else { return nil }
            index = end + 1
            let key: Key
            let name: StaticString
            switch (end - start, bytes[start]) {
            case (11, UInt8(ascii: "c")): (key, name) = (.contentJSON, "contentJSON")
            case (4, UInt8(ascii: "d")): (key, name) = (.date, "date")
            case (9, UInt8(ascii: "r")): (key, name) = (.relevance, "relevance")
            case (5, UInt8(ascii: "s")): (key, name) = (.score, "score")
            case (8, UInt8(ascii: "d")): (key, name) = (.duration, "duration")
            default: return nil
            }
            guard memcmp(bytes.baseAddress! + start, name.utf8Start, end - start) == 0 else { return nil }
            return key
        }

        /// A JSON string, unescaped; nil for a control character, a bad
        /// escape, a lone surrogate or bytes that are not UTF-8.
        private mutating func string() -> String? {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            index += 1
            var run = index
            var escaped = false
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let tail = UnsafeBufferPointer(rebasing: bytes[run..<index])
                    index += 1
                    guard escaped else { return String(validating: tail, as: UTF8.self) }
                    unescaped.append(contentsOf: tail)
                    return String(validating: unescaped, as: UTF8.self)
                }
                if byte < 0x20 { return nil }
                if byte != UInt8(ascii: "\\") {
                    index += 1
                    continue
                }
                if !escaped {
                    unescaped.removeAll(keepingCapacity: true)
                    escaped = true
                }
                unescaped.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
                index += 1
                guard index < bytes.count else { return nil }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): unescaped.append(escape)
                case UInt8(ascii: "b"): unescaped.append(0x08)
                case UInt8(ascii: "f"): unescaped.append(0x0C)
                case UInt8(ascii: "n"): unescaped.append(0x0A)
                case UInt8(ascii: "r"): unescaped.append(0x0D)
                case UInt8(ascii: "t"): unescaped.append(0x09)
                case UInt8(ascii: "u"):
                    guard var scalar = hex4() else { return nil }
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard take(UInt8(ascii: "\\"), skippingSpace: false),
                            take(UInt8(ascii: "u"), skippingSpace: false),
                            let low = hex4(), (0xDC00..<0xE000).contains(low)
                        else { return nil }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        return nil
                    }
                    guard let value = Unicode.Scalar(scalar) else { return nil }
                    unescaped.append(contentsOf: UTF8.encode(value)!)
                default: return nil
                }
                run = index
            }
            return nil
        }

        private mutating func hex4() -> UInt32? {
            guard index + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        /// A JSON number (RFC 8259's grammar), finite; nil otherwise.
        private mutating func number() -> Double? {
            skipSpace()
            let start = index
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { return nil }
            // No leading zero before other digits.
            let integerStart = bytes[start] == UInt8(ascii: "-") ? start + 1 : start
            if bytes[integerStart] == UInt8(ascii: "0"), index - integerStart > 1 { return nil }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { return nil }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard digits() > 0 else { return nil }
            }
            // strtod reads what the grammar above accepted, and stops where it
            // stopped (the byte after a number in a whole column is `,` or `}`).
            var end: UnsafeMutablePointer<CChar>?
            let first = UnsafeMutableRawPointer(mutating: bytes.baseAddress! + start).assumingMemoryBound(
                to: CChar.self)
            let value = strtod(first, &end)
            guard let end, end - first == index - start, value.isFinite else { return nil }
            return value
        }

        private mutating func digits() -> Int {
            let start = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                index += 1
            }
            return index - start
        }

        private mutating func literalNull() -> Bool {
            skipSpace()
            guard index + 4 <= bytes.count,
                UnsafeBufferPointer(rebasing: bytes[index..<index + 4]).elementsEqual("null".utf8)
            else { return false }
            index += 4
            return true
        }

        /// Skips white space (unless told not to), then consumes `byte` if it is next.
        private mutating func take(_ byte: UInt8, skippingSpace: Bool = true) -> Bool {
            if skippingSpace { skipSpace() }
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        private mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x0A, 0x0D, 0x09: index += 1
                default: return
                }
            }
        }
    }
}
