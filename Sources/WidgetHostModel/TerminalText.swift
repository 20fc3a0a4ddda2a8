/// Text that came from a plugin, made safe to print: a plugin's strings
/// (its name, an error message, an entry's content) may carry escape
/// sequences that would move the cursor, retitle the window or rewrite what
/// the terminal shows, and may be of any length.
///
/// ```swift
/// print(TerminalText.escaped("Game\u{1B}]0;pwned\u{07}"))   // Game\u{1B}]0;pwned\u{07}
/// let message = TerminalText.bounded(huge)                // at most 64 KiB, says it was cut
/// ```
public enum TerminalText {
    /// Most bytes of a plugin's message the host keeps (the runner cuts
    /// `error_message` to the same size).
    public static let maxMessageBytes = 64 * 1024

    /// `text` with every control character (C0, DEL, C1) but newline and tab
    /// written as a visible `\u{XX}` escape, so printing it cannot drive the
    /// terminal.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                out.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// `text` cut to at most `maxBytes` bytes of UTF-8 (at a character
    /// boundary), with a note saying how much was dropped.
    public static func bounded(_ text: String, maxBytes: Int = maxMessageBytes) -> String {
        let count = text.utf8.count
        guard count > maxBytes else { return text }
        var kept = Substring(text).prefix(0)
        var bytes = 0
        for character in text {
            let size = character.utf8.count
            if bytes + size > maxBytes { break }
            bytes += size
            kept = text[text.startIndex..<text.index(kept.endIndex, offsetBy: 1)]
        }
        return kept + " … (\(count - bytes) more bytes cut)"
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value == 0x0A || value == 0x09 { return false }
        return value < 0x20 || (value >= 0x7F && value < 0xA0)
    }
}
