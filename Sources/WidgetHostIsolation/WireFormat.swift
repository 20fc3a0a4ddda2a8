import CWidgetHostSupport

/// Builds a wire payload: little-endian fields as `widgethost_wire.h` lists them.
struct WireWriter {
    private(set) var bytes: [UInt8] = []

    mutating func u32(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func u64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func f64(_ value: Double) { u64(value.bitPattern) }

    mutating func string(_ value: String) {
        let utf8 = Array(value.utf8)
        u32(UInt32(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    /// The payload wrapped in its 16-byte frame header.
    func frame(type: UInt16) -> [UInt8] {
        var header = WireWriter()
        header.u32(UInt32(WH_WIRE_MAGIC))
        header.bytes.append(contentsOf: [UInt8(WH_WIRE_VERSION & 0xFF), UInt8(WH_WIRE_VERSION >> 8)])
        header.bytes.append(contentsOf: [UInt8(type & 0xFF), UInt8(type >> 8)])
        header.u32(UInt32(bytes.count))
        header.u32(0)
        return header.bytes + bytes
    }
}

/// Reads the fields of a received payload; any short read marks it malformed.
struct WireReader {
    private let bytes: [UInt8]
    private var offset = 0
    /// Bytes not read yet.
    var remaining: Int { max(0, bytes.count - offset) }
    /// Set once a read ran past the end of the payload.
    private(set) var malformed = false

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func u32() -> UInt32 {
        guard bytes.count - offset >= 4 else {
            malformed = true
            return 0
        }
        var value: UInt32 = 0
        for index in 0..<4 { value |= UInt32(bytes[offset + index]) << (8 * UInt32(index)) }
        offset += 4
        return value
    }

    mutating func i32() -> Int32 { Int32(bitPattern: u32()) }

    mutating func u64() -> UInt64 {
        let low = UInt64(u32())
        let high = UInt64(u32())
        return low | high << 32
    }

    mutating func f64() -> Double { Double(bitPattern: u64()) }

    /// A length-prefixed run of raw bytes (empty and `malformed` if truncated).
    mutating func lengthPrefixedBytes() -> [UInt8] {
        let count = Int(u32())
        guard !malformed, self.bytes.count - offset >= count else {
            malformed = true
            return []
        }
        defer { offset += count }
        return Array(self.bytes[offset..<offset + count])
    }

    mutating func string() -> String {
        let count = Int(u32())
        guard !malformed, bytes.count - offset >= count else {
            malformed = true
            return ""
        }
        defer { offset += count }
        return String(decoding: bytes[offset..<offset + count], as: UTF8.self)
    }
}

/// One decoded frame.
struct WireFrame {
    var type: UInt16
    var payload: [UInt8]
}

/// Splits a byte stream into frames, checking magic, version and size.
struct FrameDecoder {
    private var buffer: [UInt8] = []

    enum Failure: Error, Equatable {
        case badMagic(UInt32)
        case badVersion(UInt16)
        case tooLarge(UInt32)
    }

    mutating func append(_ bytes: ArraySlice<UInt8>) { buffer.append(contentsOf: bytes) }

    /// Bytes received that are not yet a complete frame.
    var pendingBytes: Int { buffer.count }

    /// The next complete frame, nil if more bytes are needed.
    mutating func next() throws(Failure) -> WireFrame? {
        let headerSize = Int(WH_WIRE_HEADER_SIZE)
        guard buffer.count >= headerSize else { return nil }
        var reader = WireReader(Array(buffer[0..<headerSize]))
        let magic = reader.u32()
        let versionAndType = reader.u32()
        let length = reader.u32()
        guard magic == UInt32(WH_WIRE_MAGIC) else { throw .badMagic(magic) }
        let version = UInt16(versionAndType & 0xFFFF)
        guard version == WH_WIRE_VERSION else { throw .badVersion(version) }
        guard length <= UInt32(WH_WIRE_MAX_PAYLOAD) else { throw .tooLarge(length) }
        guard buffer.count >= headerSize + Int(length) else { return nil }
        let payload = Array(buffer[headerSize..<headerSize + Int(length)])
        buffer.removeFirst(headerSize + Int(length))
        return WireFrame(type: UInt16(versionAndType >> 16), payload: payload)
    }
}
