#if canImport(Glibc)
    import Glibc
#endif

/// What identifies one version of a file: device, inode, size and
/// modification time. A rebuilt `.so` (written in place or replaced by a
/// rename, as linkers do) gets a different stamp.
public struct FileStamp: Sendable, Hashable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    public var modifiedNanoseconds: Int64

    /// The file's stamp now, or nil if it cannot be read (missing mid-rebuild).
    public static func of(path: String) -> FileStamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileStamp(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modifiedNanoseconds: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
    }
}
