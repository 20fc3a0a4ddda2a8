#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Where the daemon and its clients find things, following the XDG base
/// directory specification. Each can be overridden by an environment
/// variable (and by a command-line option where one exists).
///
/// | what | variable | default |
/// |---|---|---|
/// | configuration | `WIDGETHOST_CONFIG` | `$XDG_CONFIG_HOME/widgethost/host.json` (`~/.config/...`) |
/// | state database | `WIDGETHOST_STATE` | `$XDG_STATE_HOME/widgethost/state.sqlite` (`~/.local/state/...`) |
/// | control socket | `WIDGETHOST_SOCKET` | `$XDG_RUNTIME_DIR/widgethost/control.sock` (`/tmp/widgethost-UID/...` without it) |
public enum ControlPaths {
    /// The default configuration file.
    public static var configuration: String {
        environment("WIDGETHOST_CONFIG") ?? (base("XDG_CONFIG_HOME", home: ".config") + "/widgethost/host.json")
    }

    /// The default state database.
    public static var state: String {
        environment("WIDGETHOST_STATE") ?? (base("XDG_STATE_HOME", home: ".local/state") + "/widgethost/state.sqlite")
    }

    /// The default control socket.
    public static var socket: String {
        if let explicit = environment("WIDGETHOST_SOCKET") { return explicit }
        if let runtime = environment("XDG_RUNTIME_DIR") { return runtime + "/widgethost/control.sock" }
        return "/tmp/widgethost-\(getuid())/control.sock"
    }

    static func environment(_ name: String) -> String? {
        guard let value = getenv(name), value.pointee != 0 else { return nil }
        return String(cString: value)
    }

    static func base(_ variable: String, home relative: String) -> String {
        if let value = environment(variable), value.hasPrefix("/") { return value }
        return (environment("HOME") ?? "/tmp") + "/" + relative
    }
}
