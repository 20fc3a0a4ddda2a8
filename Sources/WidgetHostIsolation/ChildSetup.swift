import CWidgetHostSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Finds the `widgethost-runner` executable.
public enum RunnerLocator {
    /// `explicit` if given (and nothing else), else `$WIDGETHOST_RUNNER`, else
    /// `widgethost-runner` in the directory of the running executable (a
    /// build), else in `../libexec/widgethost/` from it (an install:
    /// `PREFIX/bin/widgethost`, `PREFIX/libexec/widgethost/widgethost-runner`).
    /// Nil if none is executable.
    public static func locate(explicit: String? = nil) -> String? {
        // A path the caller named is the only candidate: falling back to
        // another runner would hide the mistake.
        if let explicit { return access(explicit, X_OK) == 0 ? explicit : nil }
        var candidates: [String] = []
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
    /// without a call; nil if it cannot be made, or once the command is
    /// interrupted (`errno` EINTR). Removed if the command is interrupted
    /// first (``InterruptCleanup``).
    public static func makeTemporary() -> String? {
        let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/widgethost-load.XXXXXX").utf8CString)
        return InterruptCleanup.make(
            {
                template.withUnsafeMutableBufferPointer { buffer in
                    guard let made = mkdtemp(buffer.baseAddress!) else { return nil }
                    return String(cString: made)
                }
            }, removeOnInterrupt: true)
    }

    /// Removes `path` and everything under it, without following symlinks.
    public static func removeTree(_ path: String) {
        // Removed, then forgotten: a signal during the removal still finds
        // it registered, and the cleanup removes it too (the other order
        // left it to a process that died removing it).
        _ = wh_remove_tree(path)
        InterruptCleanup.forget(path)
    }

    /// Creates `path` and its parents (mode 0700) if missing; nothing once
    /// the command is interrupted (``InterruptCleanup``), so a folder the
    /// cleanup removed is not made again.
    public static func ensure(_ path: String) {
        if access(path, F_OK) == 0 { return }
        _ = InterruptCleanup.make(
            {
                var prefix = path.hasPrefix("/") ? "" : "."
                for component in path.split(separator: "/") {
                    prefix += "/" + component
                    mkdir(prefix, 0o700)
                }
                return path
            }, removeOnInterrupt: false)
    }
}

/// The environment a plugin runs with: nothing inherited from the host but
/// the time zone.
enum ChildEnvironment {
    static func make(dataDirectory: String?, locale: String?, prefault: Bool = true) -> [String] {
        var environment = ["PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"]
        if !prefault { environment.append("WIDGETHOST_PREFAULT=off") }
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

/// The one launcher of `widgethost-runner` processes: spawn mode, fork
/// servers and warm workers all start their child here (Chromium's one
/// child-process launcher), with the same descriptors, environment,
/// session and working directory (docs/isolation.md).
struct RunnerLauncher {
    /// A started runner: its pid (the host's own child, so a trusted pid),
    /// a pidfd of it, the host's end of the channel (fd 3 in the child) and
    /// of its stdout and stderr pipes, all non-blocking.
    struct Child {
        var pid: pid_t
        var pidfd: Int32
        var channel: Int32
        var stdout: Int32
        var stderr: Int32
    }

    /// Starts a runner in its own session with `dataDirectory` as its
    /// working directory. A failure here is the host's, never the plugin's:
    /// `.runnerMissing`, `.hostOutOfResources` or `.runnerUnavailable`.
    static func start(options: IsolationOptions, dataDirectory: String, locale: String?)
        -> Result<Child, PluginFailure.Reason>
    {
        guard let runner = RunnerLocator.locate(explicit: options.runnerPath) else {
            return .failure(
                .runnerMissing(
                    "widgethost-runner was not found next to \(RunnerLocator.executableDirectory() ?? "the executable") and WIDGETHOST_RUNNER is not set"
                ))
        }
        var sockets: [Int32] = [-1, -1]
        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &sockets) == 0,
            wh_pipe_cloexec(&outPipe) == 0, wh_pipe_cloexec(&errPipe) == 0
        else {
            let code = errno
            for fd in sockets + outPipe + errPipe where fd >= 0 { close(fd) }
            return .failure(hostFault(code, doing: "socketpair/pipe2"))
        }
        let environment = ChildEnvironment.make(
            dataDirectory: dataDirectory, locale: locale, prefault: options.prefault)
        // From the launcher thread, which lives as long as the host: the
        // runner's PR_SET_PDEATHSIG fires when the thread that spawned it ends.
        guard let launcher = LauncherThread.shared else {
            for fd in sockets + outPipe + errPipe { close(fd) }
            return .failure(
                .hostOutOfResources("the host could not start the thread that spawns runners (out of threads)"))
        }
        let (channel, output, errors) = (sockets[1], outPipe[1], errPipe[1])
        let (rc, pid, pidfd) = launcher.run {
            var pid: pid_t = 0
            var pidfd: Int32 = -1
            let rc = withCStrings(["widgethost-runner"]) { argv in
                withCStrings(environment) { envp in
                    wh_spawn(runner, argv, envp, channel, output, errors, dataDirectory, &pid, &pidfd)
                }
            }
            return (rc, pid, pidfd)
        }
        close(sockets[1])
        close(outPipe[1])
        close(errPipe[1])
        guard rc == 0 else {
            close(sockets[0])
            close(outPipe[0])
            close(errPipe[0])
            return .failure(hostFault(rc, doing: "posix_spawn(\(runner))"))
        }
        for fd in [sockets[0], outPipe[0], errPipe[0]] {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        return .success(Child(pid: pid, pidfd: pidfd, channel: sockets[0], stdout: outPipe[0], stderr: errPipe[0]))
    }

    /// A host-side failure, typed by its errno: out of descriptors, memory or
    /// processes is `.hostOutOfResources`; anything else `.runnerUnavailable`.
    static func hostFault(_ code: Int32, doing what: String) -> PluginFailure.Reason {
        let text = "\(what) failed: \(String(cString: strerror(code)))"
        switch code {
        case EMFILE, ENFILE, ENOMEM, EAGAIN, ENOSPC: return .hostOutOfResources(text)
        default: return .runnerUnavailable(text)
        }
    }
}
