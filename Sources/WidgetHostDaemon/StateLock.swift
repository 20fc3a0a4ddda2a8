#if canImport(Glibc)
    import Glibc
#endif

/// One daemon per state file: an exclusive `flock(2)` on `STATE.lock`
/// (0600, holding the owner's pid), held while the daemon runs and released
/// by the kernel when it exits, however it exits (`kill -9` included).
///
/// ```swift
/// let lock = try StateLock.acquire(for: "/var/lib/widgethost/state.sqlite")
/// // a second daemon on the same file: DaemonError.alreadyRunning(pid: 1234, ...)
/// ```
final class StateLock {
    let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// Takes the lock of `statePath` without waiting. Another process
    /// holding it is ``DaemonError/alreadyRunning(pid:statePath:)`` with the
    /// pid it wrote.
    static func acquire(for statePath: String) throws(DaemonError) -> StateLock {
        let path = statePath + ".lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw .state(path: statePath, detail: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            var bytes = [UInt8](repeating: 0, count: 32)
            let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            close(fd)
            guard code == EWOULDBLOCK else {
                throw .state(path: statePath, detail: "cannot lock \(path): \(String(cString: strerror(code)))")
            }
            let text = String(decoding: bytes.prefix(max(0, count)), as: UTF8.self)
            throw .alreadyRunning(pid: Int32(text.split(separator: "\n").first ?? "") ?? 0, statePath: statePath)
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return StateLock(path: path, descriptor: fd)
    }

    deinit { close(descriptor) }
}
