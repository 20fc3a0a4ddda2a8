import CWidgetHostSupport

/// Documented limits on what a plugin may return (see docs/abi.md).
public enum WidgetHostLimits {
    /// Most entries in one result (WidgetKit field reports: ~400 stop updating).
    public static let maxEntries = Int(WH_LIMIT_MAX_ENTRIES)
    /// Most bytes of entry content in one result (WidgetKit field reports: 10 MB).
    public static let maxResultBytes = Int(WH_LIMIT_MAX_RESULT_BYTES)
    /// Entries closer than this draw a warning (WidgetKit: "at least about 5 minutes apart").
    public static let minimumEntrySpacing: Double = 300
    /// Bytes of stdout and of stderr kept per call; the rest is counted, not kept.
    public static let logBytesPerStream = 64 * 1024
}
