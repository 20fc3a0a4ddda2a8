import CWidgetHostSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Finds the `widgethost-runner` executable.
public enum RunnerLocator {
    /// `explicit` if given, else `$WIDGETHOST_RUNNER`, else `widgethost-runner`
    /// in the directory of the running executable (a build), else in
    /// `../libexec/widgethost/` from it (an install: `PREFIX/bin/widgethost`,
    /// `PREFIX/libexec/widgethost/widgethost-runner`). Nil if none is
    /// executable.
    public static func locate(explicit: String? = nil) -> String? {
        var candidates: [String] = []
        if let explicit { candidates.append(explicit) }
        if let fromEnvironment = getenv("WIDGETHOST_RUNNER") {
            candidates.append(String(cString: fromEnvironment))
        }
        if let directory = executableDirectory() {
            candidates.append(directory + "/widgethost-runner")
            candidates.append(directory + "/../libexec/widgethost/widgethost-runner")
        }
        return candidates.first { access($0, X_OK) == 0 }
    }

    /// The directory of `/proc/self/exe`.
    public static func executableDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }
}

/// Plugin data directories: each plugin's only writable place (WidgetKit's
/// App Group container).
public enum DataDirectory {
    /// `ROOT/NAME`, ROOT defaulting to `$XDG_DATA_HOME/widgethost/plugins`
    /// (`~/.local/share/widgethost/plugins`), NAME being the plugin file's
    /// name without `lib` and `.so`.
    public static func defaultPath(forPlugin plugin: String, root: String? = nil) -> String {
        var name = plugin.split(separator: "/").last.map(String.init) ?? plugin
        if name.hasSuffix(".so") { name.removeLast(3) }
        if name.hasPrefix("lib"), name.count > 3 { name.removeFirst(3) }
        return (root ?? dataHome() + "/widgethost/plugins") + "/" + name
    }

    static func dataHome() -> String {
        if let xdg = getenv("XDG_DATA_HOME"), xdg.pointee != 0 { return String(cString: xdg) }
        let home = getenv("HOME").map { String(cString: $0) } ?? "/tmp"
        return home + "/.local/share"
    }

    /// A new empty directory (mode 0700) under `$TMPDIR` or /tmp, for a load
    /// without a call; nil if it cannot be made.
    public static func makeTemporary() -> String? {
        let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/widgethost-load.XXXXXX").utf8CString)
        return template.withUnsafeMutableBufferPointer { buffer in
            guard let made = mkdtemp(buffer.baseAddress!) else { return nil }
            return String(cString: made)
        }
    }

    /// Removes `path` and everything under it, without following symlinks.
    public static func removeTree(_ path: String) {
        _ = wh_remove_tree(path)
    }

    /// Creates `path` and its parents (mode 0700) if missing.
    public static func ensure(_ path: String) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            mkdir(prefix, 0o700)
        }
    }
}

/// The environment a plugin runs with: nothing inherited from the host but
/// the time zone.
enum ChildEnvironment {
    static func make(dataDirectory: String?, locale: String?) -> [String] {
        var environment = ["PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"]
        if let dataDirectory {
            environment.append("HOME=\(dataDirectory)")
            environment.append("TMPDIR=\(dataDirectory)")
            environment.append("WIDGETHOST_DATA_DIR=\(dataDirectory)")
        }
        if let locale { environment.append("WIDGETHOST_LOCALE=\(locale)") }
        if let zone = getenv("TZ") { environment.append("TZ=\(String(cString: zone))") }
        return environment
    }
}
