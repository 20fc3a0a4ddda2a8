import WidgetHostIsolation
import WidgetHostModel
import WidgetHostScheduler

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The daemon's configuration file (JSON; format in docs/daemon.md): the
/// plugins, the widget instances, and scheduler and failure settings.
///
/// ```json
/// {
///   "plugins": [{ "name": "character", "path": "libCharacterPlugin.so" }],
///   "pluginDirectory": "plugins",
///   "instances": [
///     { "id": "hero", "plugin": "character", "kind": "com.example.character-detail",
///       "family": "systemSmall", "app": "emoji-rangers", "configuration": { "hero": "\"spouty\"" } }
///   ]
/// }
/// ```
///
/// Relative paths are relative to the configuration file's directory.
public struct DaemonConfiguration: Sendable {
    /// One plugin file and the name instances use for it.
    public struct Plugin: Sendable, Hashable {
        public var name: String
        /// Absolute path of the .so file.
        public var path: String
        /// The plugin's data directory (its working directory, the only place it may write).
        public var dataDirectory: String?
        /// The sandbox around the plugin: the defaults, with the file's `sandbox` overrides.
        public var sandbox: SandboxPolicy
        /// Where in the file it was declared (`plugins[3]`, or the plugin directory).
        public var field: String
        /// How its calls are isolated (`"isolation"`: worker, fork-server or
        /// spawn; default worker). The engine decides each call's mode from
        /// this and the plugin's descriptor (docs/isolation.md).
        public var isolation: IsolationMode = .worker
        /// When its warm workers are replaced (`"workers"`: `maxCalls`,
        /// `maxResidentMiB`, `maxIdleSeconds`, `standbys`).
        public var recycling = WorkerRecycling()
    }

    /// One widget instance.
    public struct Instance: Sendable, Hashable {
        public var id: String
        public var plugin: String
        public var kind: String
        public var family: WidgetFamily
        public var app: String
        /// Parameter name → JSON text of its value.
        public var configuration: [String: String]
        public var visible: Bool
        public var usesLocation: Bool
        /// Timeline call timeout (default: ``DefaultTimeouts/timeline``).
        public var timeout: Double?
        /// `instances[N]`, for errors found after the plugins load.
        public var field: String
        /// The configuration file, or `instances.add` at run time.
        public var origin: InstanceOrigin = .configuration
    }

    /// When a crashing plugin is quarantined: after
    /// ``quarantineAfterCrashes`` crashes of one file within
    /// ``crashWindow`` (a rolling window, as systemd's `StartLimitBurst`
    /// within `StartLimitIntervalSec`): a crash older than the window no
    /// longer counts, so rare crashes months apart never add up.
    public struct FailurePolicy: Sendable, Hashable {
        /// Crashes (signals, forbidden system calls, exits mid-call, protocol
        /// violations) of one plugin file within ``crashWindow`` after which
        /// it is quarantined (1-1,000,000).
        public var quarantineAfterCrashes = 3
        /// Seconds a crash counts toward quarantine (1 second to 365 days;
        /// `"failures": {"crashWindow"}`, default one day). Measured on
        /// CLOCK_BOOTTIME: a wall-clock jump neither ages nor revives a crash.
        public var crashWindow: Double = 86_400
        /// The longest ``crashWindow`` the file may set.
        public static let crashWindowRange: ClosedRange<Double> = 1...(365 * 86_400)
        public init() {}
    }

    /// The daemon's own limits (`"daemon"` in the file).
    public struct Settings: Sendable, Hashable {
        /// Control connections held at once; default: the descriptor limit
        /// less an eighth (at least 64) kept for plugins and the state file.
        public var maximumConnections: Int?
        /// After SIGTERM, how long running calls may go on before they are killed.
        public var shutdownGracePeriod = 5.0
        /// Seconds a control client may hold part of a request line (no
        /// newline yet) before it is answered `request-timeout` and closed
        /// (1 second to 10 minutes; default 30 s).
        public var requestLineTimeout = 30.0
        /// The values ``requestLineTimeout`` may take.
        public static let requestLineTimeoutRange: ClosedRange<Double> = 1...600
        public init() {}
    }

    /// The file, as given.
    public var file: String
    public var plugins: [Plugin]
    public var instances: [Instance]
    public var scheduler: SchedulerConfiguration
    public var failurePolicy: FailurePolicy
    public var daemon = Settings()
    /// The root under which each plugin without an explicit `dataDirectory`
    /// gets `ROOT/NAME` (default `$XDG_DATA_HOME/widgethost/plugins`).
    public var dataRoot: String?
    /// The parsed file, to report problems found later with their line.
    public var reader: DocumentReader

    /// An error at `field` of this file, with its line.
    public func fail(_ field: String, _ problem: String) -> DocumentError { reader.fail(field, problem) }

    /// Whether the configuration came from a regular file, which SIGHUP can
    /// read again; false for a pipe or standard input (`--config -`), read
    /// once, whose relative paths are relative to the current directory.
    public var rereadable = true

    /// Reads and checks a configuration file. Every problem is a
    /// ``DocumentError`` naming the file, the line, the field and what to do.
    /// `path` may be a pipe or `-` (standard input): it is read to its end,
    /// once.
    public static func load(_ path: String) throws(DocumentError) -> DaemonConfiguration {
        var info = stat()
        if path != "-" && stat(path, &info) != 0 {
            throw DocumentError(
                "\(path): no configuration file there; write one (samples/daemon/host.json is an example, docs/daemon.md the format) or pass --config FILE"
            )
        }
        let stream = path == "-" || (info.st_mode & S_IFMT) != S_IFREG
        var configuration = try parse(
            try DocumentReader(file: path, documentation: documentation),
            base: stream ? currentDirectory() : nil)
        configuration.rereadable = !stream
        return configuration
    }

    static let documentation = "docs/daemon.md"

    /// Checks a parsed document. Relative paths in it are relative to
    /// `base`, by default the directory of the document's file.
    public static func parse(_ reader: DocumentReader, base: String? = nil) throws(DocumentError)
        -> DaemonConfiguration
    {
        let top = try reader.members(
            reader.root, "(top level)",
            allowed: [
                "description", "plugins", "pluginDirectory", "dataDirectory", "scheduler", "instances", "failures",
                "daemon",
            ])
        let base = base ?? directory(of: absolute(reader.file, relativeTo: currentDirectory()))
        var plugins: [Plugin] = []
        func add(_ plugin: Plugin) throws(DocumentError) {
            if let other = plugins.first(where: { $0.name == plugin.name }) {
                throw reader.fail(
                    plugin.field,
                    "plugin name \"\(plugin.name)\" is used twice (also \(other.field), \(other.path)); give one a distinct \"name\""
                )
            }
            plugins.append(plugin)
        }
        for (index, item) in (try reader.array(top["plugins"], "plugins") ?? []).enumerated() {
            let field = "plugins[\(index)]"
            let m = try reader.members(
                item, field, allowed: ["name", "path", "dataDirectory", "sandbox", "isolation", "workers"])
            let path = absolute(try reader.requiredString(m["path"], "\(field).path"), relativeTo: base)
            guard FileManager.default.fileExists(atPath: path) else {
                throw reader.fail(
                    "\(field).path", "\(path) does not exist; build the plugin or fix the path (relative to \(base))")
            }
            var plugin = Plugin(
                name: try reader.string(m["name"], "\(field).name") ?? fileName(path), path: path,
                dataDirectory: try reader.string(m["dataDirectory"], "\(field).dataDirectory").map {
                    absolute($0, relativeTo: base)
                }, sandbox: try sandbox(m["sandbox"], "\(field).sandbox", reader: reader, base: base),
                field: field)
            if let mode = try reader.string(m["isolation"], "\(field).isolation") {
                guard let parsed = IsolationMode(rawValue: mode), parsed != .inProcess else {
                    throw reader.fail(
                        "\(field).isolation",
                        "expected \"worker\", \"fork-server\" or \"spawn\", found \"\(mode)\"")
                }
                plugin.isolation = parsed
            }
            plugin.recycling = try workers(m["workers"], "\(field).workers", reader: reader)
            try add(plugin)
        }
        if let directory = try reader.string(top["pluginDirectory"], "pluginDirectory") {
            let path = absolute(directory, relativeTo: base)
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else {
                throw reader.fail("pluginDirectory", "cannot list \(path); create it or fix the path")
            }
            for name in names.sorted() where name.hasSuffix(".so") {
                let file = path + "/" + name
                // An explicitly configured plugin wins over the directory's copy.
                guard !plugins.contains(where: { $0.path == file || $0.name == name }) else { continue }
                try add(
                    Plugin(name: name, path: file, dataDirectory: nil, sandbox: .standard, field: "pluginDirectory"))
            }
        }

        var instances: [Instance] = []
        // Id → index, so that 100,000 instances are checked in one pass (a
        // search per instance made the start quadratic: 80 % of a 100k start).
        var seen: [String: Int] = [:]
        guard let list = try reader.array(top["instances"], "instances") else {
            throw reader.fail("instances", "required: an array of widget instances (it may be empty)")
        }
        for (index, item) in list.enumerated() {
            let field = "instances[\(index)]"
            let m = try reader.members(
                item, field,
                allowed: [
                    "id", "plugin", "kind", "family", "app", "configuration", "visible", "usesLocation", "timeout",
                ])
            let id = try reader.requiredString(m["id"], "\(field).id")
            if let other = seen[id] {
                throw reader.fail(
                    "\(field).id",
                    "\"\(id)\" is already the id of \(instances[other].field); instance ids must be unique")
            }
            seen[id] = instances.count
            let plugin = try reader.requiredString(m["plugin"], "\(field).plugin")
            guard plugins.contains(where: { $0.name == plugin }) else {
                let known = plugins.map(\.name)
                throw reader.fail(
                    "\(field).plugin",
                    "no plugin named \"\(plugin)\"; configured: \(known.isEmpty ? "none" : known.joined(separator: ", ")). Add it to \"plugins\" or to the plugin directory"
                )
            }
            let familyName = try reader.string(m["family"], "\(field).family") ?? "systemSmall"
            guard let family = WidgetFamily(name: familyName) else {
                throw reader.fail(
                    "\(field).family",
                    "unknown family \"\(familyName)\"; expected one of \(WidgetFamily.allCases.map(\.name).joined(separator: ", "))"
                )
            }
            var configuration: [String: String] = [:]
            if let value = m["configuration"] {
                guard let members = value.objectMembers else {
                    throw reader.fail("\(field).configuration", "expected an object of parameter values")
                }
                for (name, member) in members { configuration[name] = member.compactText(limit: .max) }
            }
            let timeout = try reader.callTimeout(m["timeout"], "\(field).timeout")
            instances.append(
                Instance(
                    id: id, plugin: plugin, kind: try reader.requiredString(m["kind"], "\(field).kind"), family: family,
                    app: try reader.string(m["app"], "\(field).app") ?? "default", configuration: configuration,
                    visible: try reader.bool(m["visible"], "\(field).visible") ?? true,
                    usesLocation: try reader.bool(m["usesLocation"], "\(field).usesLocation") ?? false,
                    timeout: timeout, field: field))
        }

        var failurePolicy = FailurePolicy()
        if let value = top["failures"] {
            let m = try reader.members(value, "failures", allowed: ["quarantineAfterCrashes", "crashWindow"])
            if let count = try reader.integer(
                m["quarantineAfterCrashes"], "failures.quarantineAfterCrashes", in: 1...1_000_000)
            {
                failurePolicy.quarantineAfterCrashes = count
            }
            if let window = try reader.duration(
                m["crashWindow"], "failures.crashWindow", in: FailurePolicy.crashWindowRange,
                purpose: "crashes older than it stop counting toward quarantine: write e.g. \"1d\"")
            {
                failurePolicy.crashWindow = window
            }
        }
        var settings = Settings()
        if let value = top["daemon"] {
            let m = try reader.members(
                value, "daemon", allowed: ["maximumConnections", "shutdownGracePeriod", "requestLineTimeout"])
            settings.maximumConnections = try reader.integer(
                m["maximumConnections"], "daemon.maximumConnections", in: 1...1_000_000)
            if let grace = try reader.duration(m["shutdownGracePeriod"], "daemon.shutdownGracePeriod") {
                guard grace <= 600 else {
                    throw reader.fail("daemon.shutdownGracePeriod", "must be at most 10 minutes, got \(grace) s")
                }
                settings.shutdownGracePeriod = grace
            }
            if let timeout = try reader.duration(
                m["requestLineTimeout"], "daemon.requestLineTimeout", in: Settings.requestLineTimeoutRange,
                purpose: "it is how long a client may leave a request line without its newline: write e.g. \"30s\"")
            {
                settings.requestLineTimeout = timeout
            }
        }
        var configuration = DaemonConfiguration(
            file: reader.file, plugins: plugins, instances: instances,
            scheduler: try SchedulerConfiguration(document: top["scheduler"], reader: reader),
            failurePolicy: failurePolicy,
            dataRoot: try reader.string(top["dataDirectory"], "dataDirectory").map { absolute($0, relativeTo: base) },
            reader: reader)
        configuration.daemon = settings
        return configuration
    }

    /// A plugin's `"sandbox"` overrides (docs/sandbox.md): extra Landlock
    /// paths and resource limits.
    static func sandbox(_ value: JSONValue?, _ field: String, reader: DocumentReader, base: String)
        throws(DocumentError) -> SandboxPolicy
    {
        var policy = SandboxPolicy.standard
        guard let value else { return policy }
        let m = try reader.members(
            value, field,
            allowed: [
                "readOnlyPaths", "readWritePaths", "addressSpaceMiB", "cpuSeconds", "openFiles", "fileSizeMiB",
                "maxTasks",
            ])
        func paths(_ name: String) throws(DocumentError) -> [String] {
            var list: [String] = []
            for (index, item) in (try reader.array(m[name], "\(field).\(name)") ?? []).enumerated() {
                let path = try reader.requiredString(item, "\(field).\(name)[\(index)]")
                list.append(absolute(path, relativeTo: base))
            }
            return list
        }
        func limit(_ name: String, _ key: WritableKeyPath<SandboxPolicy, UInt64>, scale: UInt64 = 1)
            throws(DocumentError)
        {
            // At most 2^40 (of MiB: 2^60 bytes), so the product fits in UInt64.
            guard let number = try reader.integer(m[name], "\(field).\(name)", in: 1...(1 << 40)) else { return }
            policy[keyPath: key] = UInt64(number) * scale
        }
        // pids.max: the kernel takes at most PID_MAX_LIMIT, and the host's own
        // processes count (Bounds.smallestMaxTasks, Bounds.largestMaxTasks).
        let tasks = Bounds.smallestMaxTasks...Bounds.largestMaxTasks
        if let count = try reader.integer(m["maxTasks"], "\(field).maxTasks", in: Int.min...Int.max) {
            guard tasks.contains(count) else {
                throw reader.fail(
                    "\(field).maxTasks",
                    "expected a whole number from \(tasks.lowerBound) to \(tasks.upperBound), found \(count): it is pids.max of the plugin's pids cgroup; the kernel refuses more than \(tasks.upperBound) (PID_MAX_LIMIT, every call would fail), and the host's own processes in it (the runner, its PID namespace's init, a fork server's child) take up to 5"
                )
            }
            policy.maxTasks = UInt64(count)
        }
        policy.extraReadOnlyPaths = try paths("readOnlyPaths")
        policy.extraReadWritePaths = try paths("readWritePaths")
        try limit("addressSpaceMiB", \.addressSpaceBytes, scale: 1 << 20)
        try limit("cpuSeconds", \.cpuSeconds)
        try limit("openFiles", \.openFiles)
        try limit("fileSizeMiB", \.fileSizeBytes, scale: 1 << 20)
        return policy
    }

    /// A plugin's `"workers"`: when its warm workers are replaced
    /// (docs/isolation.md, "Warm workers"); each member optional.
    static func workers(_ value: JSONValue?, _ field: String, reader: DocumentReader)
        throws(DocumentError) -> WorkerRecycling
    {
        var recycling = WorkerRecycling()
        guard let value else { return recycling }
        let m = try reader.members(
            value, field, allowed: ["maxCalls", "maxResidentMiB", "maxIdleSeconds", "standbys"])
        if let calls = try reader.integer(m["maxCalls"], "\(field).maxCalls", in: 1...100_000_000) {
            recycling.maxCalls = calls
        }
        if let mebibytes = try reader.integer(m["maxResidentMiB"], "\(field).maxResidentMiB", in: 1...(1 << 20)) {
            recycling.maxResidentBytes = mebibytes << 20
        }
        if let idle = try reader.duration(m["maxIdleSeconds"], "\(field).maxIdleSeconds") {
            recycling.maxIdleSeconds = idle
        }
        if let standbys = try reader.integer(m["standbys"], "\(field).standbys", in: 0...4) {
            recycling.standbys = standbys
        }
        return recycling
    }

    static func currentDirectory() -> String { FileManager.default.currentDirectoryPath }

    /// `path` made absolute against `base`, with `.`, `..` and symbolic links
    /// resolved when it exists.
    static func absolute(_ path: String, relativeTo base: String) -> String {
        let joined = path.hasPrefix("/") ? path : base + "/" + path
        guard let resolved = realpath(joined, nil) else { return joined }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func fileName(_ path: String) -> String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    }
}
