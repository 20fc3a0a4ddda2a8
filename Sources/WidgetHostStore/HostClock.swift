import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension ClockSample {
    /// The host's clocks now: wall clock, boot id, CLOCK_BOOTTIME.
    public static func current() -> ClockSample {
        let wall = Date().timeIntervalSince1970
        #if os(Linux)
            let bootID = (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            var ts = timespec()
            let uptime: Double? =
                clock_gettime(CLOCK_BOOTTIME, &ts) == 0 ? Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9 : nil
            return ClockSample(wallClock: wall, bootID: bootID, uptime: uptime)
        #else
            return ClockSample(wallClock: wall)
        #endif
    }
}

extension PluginFileIdentity {
    /// The identity of the file at `path` now (size and nanosecond mtime);
    /// nil if it cannot be stat'ed.
    public static func of(path: String) -> PluginFileIdentity? {
        #if os(Linux)
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            let mtime = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
            return PluginFileIdentity(path: path, size: Int64(info.st_size), mtime: mtime)
        #else
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                let size = attributes[.size] as? NSNumber, let date = attributes[.modificationDate] as? Date
            else { return nil }
            return PluginFileIdentity(
                path: path, size: size.int64Value, mtime: Int64(date.timeIntervalSince1970 * 1e9))
        #endif
    }
}
