import Foundation
import WidgetHostModel

/// The `timeline.entries` column since schema v5: a timeline's entries as one
/// blob, so a restart copies each entry's content instead of parsing it (as
/// JSON text, every `"` of an entry's own JSON was escaped inside the
/// column's: undoing that was a third of a 100,000-instance restart).
///
/// Layout, little-endian:
///
/// | bytes | what |
/// |---|---|
/// | 0 | format version, 1 |
/// | 1-3 | reserved, 0 |
/// | 4-7 | entry count `n` (UInt32) |
/// | 8 + 32·i | entry `i`: date, relevance score, relevance duration (Float64 each), content length in bytes (UInt32), flags (UInt32: bit 0, the entry has a relevance) |
/// | 8 + 32·n | the contents, UTF-8, one after another in entry order |
///
/// Reading checks the layout (version, sizes that add up, UTF-8) and throws
/// ``Malformed`` instead of trapping; the numbers are checked by the caller
/// like every column's (times, finite scores, durations).
///
/// ```swift
/// let blob = EntriesBlob.encode(timeline.entries)
/// let entries = try EntriesBlob.decode(blob)
/// ```
enum EntriesBlob {
    static let version: UInt8 = 1
    static let headerSize = 8
    static let entrySize = 32

    /// Why a blob is not an entries column.
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    static func encode(_ entries: [EntryRecord]) -> Data {
        var contentBytes = 0
        for entry in entries { contentBytes += entry.contentJSON.utf8.count }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerSize + entries.count * entrySize + contentBytes)
        bytes += [version, 0, 0, 0]
        append(UInt32(entries.count), to: &bytes)
        for entry in entries {
            append(entry.date.bitPattern, to: &bytes)
            append((entry.relevance?.score ?? 0).bitPattern, to: &bytes)
            append((entry.relevance?.duration ?? 0).bitPattern, to: &bytes)
            append(UInt32(entry.contentJSON.utf8.count), to: &bytes)
            append(UInt32(entry.relevance == nil ? 0 : 1), to: &bytes)
        }
        for entry in entries { bytes.append(contentsOf: entry.contentJSON.utf8) }
        return Data(bytes)
    }

    static func decode(_ data: Data) throws(Malformed) -> [EntryRecord] {
        let result: Result<[EntryRecord], Malformed> = data.withUnsafeBytes { read($0) }
        return try result.get()
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) throws(Malformed) -> [EntryRecord] {
        try read(bytes).get()
    }

    private static func read(_ bytes: UnsafeRawBufferPointer) -> Result<[EntryRecord], Malformed> {
        guard bytes.count >= headerSize else {
            return .failure(Malformed(description: "a \(bytes.count)-byte entries blob is shorter than its header"))
        }
        guard bytes[0] == version, bytes[1] == 0, bytes[2] == 0, bytes[3] == 0 else {
            return .failure(
                Malformed(
                    description:
                        "entries blob version \(bytes[0]) (reserved bytes \(bytes[1]), \(bytes[2]), \(bytes[3])) is not version \(version) of this build"
                ))
        }
        let count = Int(uint32(bytes, at: 4))
        let contentsStart = headerSize + count * entrySize
        guard contentsStart <= bytes.count else {
            return .failure(
                Malformed(description: "the entries blob says \(count) entries but holds \(bytes.count) bytes"))
        }
        var entries: [EntryRecord] = []
        entries.reserveCapacity(count)
        var offset = contentsStart
        for index in 0..<count {
            let at = headerSize + index * entrySize
            let length = Int(uint32(bytes, at: at + 24))
            let flags = uint32(bytes, at: at + 28)
            guard flags <= 1 else {
                return .failure(Malformed(description: "entry \(index) of the entries blob has unknown flags \(flags)"))
            }
            guard length <= bytes.count - offset else {
                return .failure(
                    Malformed(description: "entry \(index)'s content (\(length) bytes) runs past the entries blob"))
            }
            guard let content = utf8(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length])) else {
                return .failure(Malformed(description: "entry \(index)'s content is not UTF-8"))
            }
            offset += length
            let relevance =
                flags == 1
                ? Relevance(score: float64(bytes, at: at + 8), duration: float64(bytes, at: at + 16)) : nil
            entries.append(EntryRecord(date: float64(bytes, at: at), relevance: relevance, contentJSON: content))
        }
        guard offset == bytes.count else {
            return .failure(
                Malformed(description: "the entries blob has \(bytes.count - offset) bytes after its last content"))
        }
        return .success(entries)
    }

    /// The bytes as a string if they are UTF-8, else nil. The standard
    /// library's repairing decoder (not generic, unlike
    /// `String(validating:as:)`, whose type lookups were half of its cost on
    /// millions of contents) and a comparison: valid bytes come out
    /// unchanged, invalid ones cannot (the output is valid UTF-8).
    static func utf8(_ bytes: UnsafeRawBufferPointer) -> String? {
        bytes.withMemoryRebound(to: UInt8.self) { input in
            var text = String(decoding: input, as: UTF8.self)
            let same = text.withUTF8 { output in
                output.count == input.count
                    && (input.isEmpty || memcmp(output.baseAddress!, input.baseAddress!, input.count) == 0)
            }
            return same ? text : nil
        }
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func uint32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    private static func float64(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Double {
        Double(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
    }
}
