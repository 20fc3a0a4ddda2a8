/// A plugin file's identity: a quarantine applies to these exact bytes, so a
/// rebuilt or replaced file (another size or mtime) is not quarantined
/// (GStreamer's registry keys plugins the same way).
public struct PluginFileIdentity: Sendable, Hashable, Codable {
    public var path: String
    public var size: Int64
    /// Modification time, nanoseconds since the Unix epoch.
    public var mtime: Int64

    public init(path: String, size: Int64, mtime: Int64) {
        self.path = path
        self.size = size
        self.mtime = mtime
    }
}

/// One quarantined plugin file.
public struct QuarantineEntry: Sendable, Hashable, Codable {
    public var file: PluginFileIdentity
    public var reason: String
    /// When it was first quarantined.
    public var since: Double
    /// Crashes counted against this file.
    public var crashCount: Int

    public init(file: PluginFileIdentity, reason: String, since: Double, crashCount: Int) {
        self.file = file
        self.reason = reason
        self.since = since
        self.crashCount = crashCount
    }
}

/// One row of the event log.
public struct LoggedEvent: Sendable, Hashable, Codable {
    public var id: Int64
    public var time: Double
    public var instanceID: String?
    public var kind: String
    public var message: String
    /// Structured details for the watch stream (JSON object text), if any.
    public var data: String? = nil
}

/// How much of the event log is kept: the newest `maximumRows` rows, none
/// older than `maximumAge` seconds (before the newest event's time).
/// Pruned on every append.
public struct EventLogRetention: Sendable, Hashable, Codable {
    public var maximumRows: Int
    public var maximumAge: Double

    public init(maximumRows: Int = 10_000, maximumAge: Double = 7 * 86_400) {
        self.maximumRows = maximumRows
        self.maximumAge = maximumAge
    }

    public static let standard = EventLogRetention()
}

/// The last wall-clock time the host saw, with the boot it was seen in and
/// that boot's monotonic (CLOCK_BOOTTIME) reading, so that a restart in the
/// same boot can tell a wall-clock jump from real elapsed time.
public struct ClockSample: Sendable, Hashable, Codable {
    /// Seconds since the Unix epoch.
    public var wallClock: Double
    /// `/proc/sys/kernel/random/boot_id`, if known.
    public var bootID: String?
    /// Seconds since boot (suspend included), if known.
    public var uptime: Double?

    public init(wallClock: Double, bootID: String? = nil, uptime: Double? = nil) {
        self.wallClock = wallClock
        self.bootID = bootID
        self.uptime = uptime
    }

    /// Seconds of real time between `earlier` and `self` when both were taken
    /// in the same boot; nil otherwise.
    public func monotonicElapsed(since earlier: ClockSample) -> Double? {
        guard let a = earlier.bootID, let b = bootID, a == b, let u0 = earlier.uptime, let u1 = uptime else {
            return nil
        }
        return u1 - u0
    }
}
