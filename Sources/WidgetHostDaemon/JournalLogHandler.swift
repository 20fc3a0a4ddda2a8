import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Log lines for systemd's journal: when standard error is the journal
/// (`JOURNAL_STREAM` names its device and inode), each line starts with its
/// syslog priority, `<N>` (sd-daemon(3)), so `journalctl -p warning` and the
/// colours work, and carries no timestamp (the journal adds one):
///
/// ```text
/// <4>widgethost: [WidgetHostDaemon] kind k of p backs off until ...
/// ```
///
/// ```swift
/// LoggingSystem.bootstrap { label in
///     JournalLogHandler.isJournal ? JournalLogHandler(label: label) : StreamLogHandler.standardError(label: label)
/// }
/// ```
public struct JournalLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    private let label: String

    public init(label: String) { self.label = label }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Whether standard error is the journal's stream (`JOURNAL_STREAM=DEV:INODE` matches it).
    public static var isJournal: Bool {
        guard let value = getenv("JOURNAL_STREAM").map({ String(cString: $0) }) else { return false }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return false }
        return value == "\(info.st_dev):\(info.st_ino)"
    }

    /// The syslog priority of a level: emergency 0 … debug 7.
    public static func priority(of level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let details =
            merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
        // One write per line: lines from several threads never interleave.
        let line = "<\(Self.priority(of: event.level))>\(label): [\(event.source)] \(event.message)\(details)\n"
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(STDERR_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}
