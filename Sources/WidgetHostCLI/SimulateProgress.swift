import WidgetHostModel

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The progress line of `widgethost simulate` on a terminal: a bar over the
/// virtual days, the virtual time, the reloads so far and how many reloads a
/// second the run makes. Redrawn at most ten times a second, on stderr.
final class SimulationProgress {
    private let start: Double
    private let span: Double
    private let began = Date().timeIntervalSince1970
    private var lastDraw = 0.0

    /// Whether stderr is a terminal (the only place a progress line goes).
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    private static func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    init(start: Double, days: Double) {
        self.start = start
        self.span = max(1, days * 86_400)
    }

    func update(now: Double, reloads: Int) {
        let wall = Date().timeIntervalSince1970
        guard wall - lastDraw >= 0.1 else { return }
        lastDraw = wall
        let done = min(1, max(0, (now - start) / span))
        let width = 30
        let filled = Int((done * Double(width)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let rate = Double(reloads) / max(0.001, wall - began)
        let line =
            "\r[\(bar)] \(Timestamp.iso8601(now)) \(reloads) reloads, \(Int(rate)) reloads/s  "
        Self.write(line)
    }

    /// Clears the line.
    func finish() {
        Self.write("\r" + String(repeating: " ", count: 100) + "\r")
    }
}
