/// Escaping for text the web side writes into HTML itself (the page shell,
/// attribute values such as a frame's `srcdoc`). Plugin values pass through
/// Mustache's own HTML escaping; this is for the host's markup.
public enum HTMLText {
    /// `text` with `& < > " '` replaced by character references, safe in
    /// element content and in double- or single-quoted attribute values.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }
}
