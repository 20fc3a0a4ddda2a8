/// Escaping for text the web side writes into HTML itself (the page shell,
/// attribute values such as a frame's `srcdoc`). Plugin values pass through
/// Mustache's own HTML escaping; this is for the host's markup.
public enum HTMLText {
    /// `text` with `& < > " '` replaced by character references, safe in
    /// element content and in double- or single-quoted attribute values.
    public static func escape(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + text.utf8.count / 8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): bytes.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): bytes.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): bytes.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): bytes.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'"): bytes.append(contentsOf: "&#39;".utf8)
            default: bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
