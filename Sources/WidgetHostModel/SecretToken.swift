/// Random secrets and their comparison: the dashboard's access token, its
/// per-response nonces and the daemon's push tokens all come from here.
///
/// ```swift
/// let token = SecretToken.random(bytes: 32)        // 64 hex digits
/// SecretToken.matches(presented, token)            // time depends on length only
/// ```
public enum SecretToken {
    /// `bytes` bytes from the system's cryptographic random source, as
    /// lowercase hex (two digits a byte).
    public static func random(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(bytes * 2)
        for _ in 0..<max(0, bytes) {
            let byte = UInt8.random(in: 0...255, using: &generator)
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// Whether `presented` equals `secret`, in time that depends on their
    /// lengths only (no early exit on the first differing byte).
    public static func matches(_ presented: String, _ secret: String) -> Bool {
        let x = Array(presented.utf8)
        let y = Array(secret.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}
