import WidgetHostModel

/// What a reload reads and writes of one instance, as the scheduler keeps
/// it: two cache lines side by side (128 bytes, each array of them starting
/// on a line). The first is the hot record (what the rules read on every
/// plan); the second holds the cold record (the last reload's time, the
/// timeline, the box of rare values, and the reload in flight's slot,
/// serial number and, when the line keeps it, ``LineFlight``) and the
/// position's numbers (its group, app and jitter fraction).
///
/// Kept apart, in three arrays, a reload read a line of each at three
/// places, and the cold record's 48 bytes, in a record of 144 with the
/// instance's names, crossed a line boundary one time in two. Here the two
/// lines are found from the position alone and read ahead together. The
/// names (an id, a plugin, a kind, an app, a configuration), which a
/// reload by ticket does not read, are in an array of their own
/// (``InstanceRecords``).
struct InstanceLine: Sendable {
    var hot: HotRecord
    var cold: ColdRecord
    var info: PositionInfo

    /// A line for an instance whose position numbers are not known yet
    /// (the scheduler's core gives them when it enters the instance).
    init(hot: HotRecord, cold: ColdRecord) {
        self.hot = hot
        self.cold = cold
        info = PositionInfo(group: 0, app: 0, jitterFraction: 0)
    }

    /// The hot record of the line at `line`.
    @inline(__always)
    static func hot(_ line: UnsafePointer<InstanceLine>) -> UnsafePointer<HotRecord> {
        (UnsafeRawPointer(line) + hotOffset).assumingMemoryBound(to: HotRecord.self)
    }

    /// The cold record of the line at `line`.
    @inline(__always)
    static func cold(_ line: UnsafePointer<InstanceLine>) -> UnsafePointer<ColdRecord> {
        (UnsafeRawPointer(line) + coldOffset).assumingMemoryBound(to: ColdRecord.self)
    }

    /// The position's numbers in the line at `line`.
    @inline(__always)
    static func info(_ line: UnsafePointer<InstanceLine>) -> UnsafePointer<PositionInfo> {
        (UnsafeRawPointer(line) + infoOffset).assumingMemoryBound(to: PositionInfo.self)
    }

    /// The cold record's timeline in the line at `line` (read through this
    /// pointer, not through the line or the record: a read of either, in a
    /// closure or a loop of the read-ahead, copied the whole value, its
    /// references retained and released).
    @inline(__always)
    static func timeline(_ line: UnsafePointer<InstanceLine>) -> UnsafePointer<TimelineRecord?> {
        (UnsafeRawPointer(line) + timelineOffset).assumingMemoryBound(to: TimelineRecord?.self)
    }

    @inline(__always)
    static var infoOffset: Int { MemoryLayout<InstanceLine>.offset(of: \InstanceLine.info).unsafelyUnwrapped }

    @inline(__always)
    static var timelineOffset: Int {
        coldOffset + MemoryLayout<ColdRecord>.offset(of: \ColdRecord.timeline).unsafelyUnwrapped
    }

    @inline(__always)
    static var hotOffset: Int { MemoryLayout<InstanceLine>.offset(of: \InstanceLine.hot).unsafelyUnwrapped }

    @inline(__always)
    static var coldOffset: Int { MemoryLayout<InstanceLine>.offset(of: \InstanceLine.cold).unsafelyUnwrapped }

    /// Asks for both lines of the line at `line`.
    @inline(__always)
    static func readAhead(_ line: UnsafePointer<InstanceLine>) {
        ReadAhead.line(line)
        ReadAhead.line(UnsafeRawPointer(line) + ReadAhead.lineSize)
    }
}
