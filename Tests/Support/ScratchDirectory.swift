import Foundation

/// Where the tests write their files: one directory per test process,
/// `/tmp/wht-<pid>`, removed when the process exits, so that a test run
/// leaves nothing behind (the runs before this one left about 180 MB each:
/// state files, built fixtures, daemons' data). A run killed before its
/// end (by a timeout) leaves its directory; the next run removes the
/// directories of processes that no longer exist.
///
/// Under `/tmp` itself, not `$TMPDIR`: the daemons' socket paths must stay
/// short (a Unix socket's path has at most 107 bytes).
///
/// ```swift
/// let directory = ScratchDirectory.make("warm-up")  // /tmp/wht-4242/warm-up-1F34AF29, created
/// let state = ScratchDirectory.path("lonely")       // /tmp/wht-4242/lonely, not created
/// ```
public enum ScratchDirectory {
    /// This process's directory, made (and its removal at exit arranged)
    /// on first use.
    public static let root: String = {
        sweepDeadRuns()
        let root = directory(of: getpid())
        try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: ScratchDirectory.directory(of: getpid())) }
        return root
    }()

    /// A new directory for `name`, with a random suffix when `unique`.
    public static func make(_ name: String, unique: Bool = true) -> String {
        let path = root + "/" + name + (unique ? "-\(UUID().uuidString.prefix(8))" : "")
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The path of `name` in this process's directory (not created).
    public static func path(_ name: String) -> String { root + "/" + name }

    static func directory(of pid: pid_t) -> String { "/tmp/wht-\(pid)" }

    /// Removes the directories of test processes that no longer exist.
    private static func sweepDeadRuns() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []
        for name in names where name.hasPrefix("wht-") {
            guard let pid = pid_t(name.dropFirst(4)), pid != getpid() else { continue }
            if kill(pid, 0) == -1 && errno == ESRCH {
                try? FileManager.default.removeItem(atPath: directory(of: pid))
            }
        }
    }
}
