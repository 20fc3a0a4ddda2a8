import ArgumentParser

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `widgethost new --swift|--c|--rust NAME`: a plugin project to start from.
struct NewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new",
        abstract: "Write a new plugin project (Swift, C or Rust) in ./NAME.",
        discussion: """
            The project has one widget kind with a placeholder, a snapshot and a timeline,
            builds with the language's usual command and loads clean:

              --swift  swift build -c release   -> NAME/.build/release/libNAME.so
              --c      make                     -> NAME/NAME.so
              --rust   cargo build --release --offline -> NAME/target/release/libNAME.so

            It uses the SDK this widgethost comes with (found next to the program, in a
            source tree or an installed prefix), or the one --sdk names.

            Exit status: 0 written, 2 usage error (a bad name, NAME exists, no SDK found).

            Examples:
              widgethost new --c weather && make -C weather && widgethost load weather/weather.so
              widgethost new --rust tides --sdk ~/src/widgethost
            """
    )

    @Flag(help: "The language of the project.")
    var language: ProjectLanguage

    @Argument(
        help: ArgumentHelp(
            "The project's name: letters, digits, '-' and '_', starting with a letter.", valueName: "name"))
    var name: String

    @Option(
        help: ArgumentHelp(
            "A widgethost source tree or install prefix to take the SDK from (default: the one this program comes with).",
            valueName: "path"))
    var sdk: String?

    @Option(help: ArgumentHelp("The plugin's id and its kind's id (default: org.example.NAME).", valueName: "id"))
    var id: String?

    @Flag(help: "Print JSON for machines instead of text (schema: docs/cli.md).")
    var json = false

    func run() throws {
        let project = try ProjectName(name)
        let pluginID = id ?? "org.example.\(project.identifier.lowercased().replacingOccurrences(of: "_", with: "-"))"
        guard ProjectName.isReverseDNS(pluginID) else {
            throw UsageError("--id \(pluginID): expected a reverse-DNS id such as org.example.weather")
        }
        let location = try SDKLocation.find(explicit: sdk, executable: SDKLocation.executablePath())
        let directory = IsolatedRunnerPath.absolute(name)
        guard !FileManager.default.fileExists(atPath: directory) else {
            throw UsageError("\(directory) already exists; choose another name or remove it")
        }
        let files = try ProjectTemplate.files(
            language: language, project: project, pluginID: pluginID, sdk: location)
        do {
            for (path, text) in files.sorted(by: { $0.key < $1.key }) {
                let file = directory + "/" + path
                try FileManager.default.createDirectory(
                    atPath: PathText.parent(file), withIntermediateDirectories: true)
                try text.write(toFile: file, atomically: true, encoding: .utf8)
            }
        } catch {
            throw UsageError("cannot write the project in \(directory): \(error)")
        }
        let template = ProjectTemplate(language: language, project: project)
        if json {
            print(
                JSONReport.encode(
                    JSONReport.NewProject(
                        directory: directory, language: language.rawValue, pluginID: pluginID,
                        files: files.keys.sorted(), build: template.buildCommand,
                        library: directory + "/" + template.libraryPath.replacingOccurrences(of: "./", with: ""))))
            return
        }
        print("Wrote a \(language.title) plugin project in \(directory) (plugin id \(pluginID)).")
        print("Build and load it:")
        print("  cd \(name)")
        print("  \(template.buildCommand)")
        print("  widgethost load \(template.libraryPath)")
    }
}

/// The language of `widgethost new`.
enum ProjectLanguage: String, EnumerableFlag, Sendable {
    case swift, c, rust

    var title: String {
        switch self {
        case .swift: "Swift"
        case .c: "C"
        case .rust: "Rust"
        }
    }

    static func help(for value: ProjectLanguage) -> ArgumentHelp? {
        switch value {
        case .swift: "A Swift package using WidgetHostKit."
        case .c: "A C file and a Makefile using <widgethost/provider.h>."
        case .rust: "A Cargo crate using the widgethost crate (no registry needed)."
        }
    }
}

/// A checked project name and the identifiers derived from it.
struct ProjectName {
    /// As given: the directory and package name.
    let name: String
    /// `name` with '-' as '_': a Swift module, a Rust library, a C file.
    let identifier: String

    init(_ name: String) throws {
        let scalars = Array(name.unicodeScalars)
        let valid =
            (1...64).contains(scalars.count) && Self.isLetter(scalars[0])
            && scalars.allSatisfy { Self.isLetter($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }
        guard valid else {
            throw UsageError(
                "\"\(name)\" is not a project name: expected 1 to 64 ASCII letters, digits, '-' and '_', starting with a letter (e.g. weather-widget)"
            )
        }
        self.name = name
        self.identifier = name.replacingOccurrences(of: "-", with: "_")
    }

    static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }

    /// `org.example.weather`: dot-separated labels of letters, digits, '-' and '_'.
    static func isReverseDNS(_ id: String) -> Bool {
        let labels = id.split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && id.utf8.count <= 200
            && labels.allSatisfy { label in
                !label.isEmpty
                    && label.unicodeScalars.allSatisfy {
                        isLetter($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_"
                    }
            }
    }
}

/// Where the SDK is: the C headers, the Rust crate and the Swift package.
struct SDKLocation: Equatable {
    /// The directory holding `widgethost/provider.h`.
    var includeDirectory: String
    /// The Rust crate's directory (its Cargo.toml).
    var rustCrate: String
    /// The Swift package that has the `WidgetHostKit` product.
    var swiftPackage: String

    /// The package identity SwiftPM gives a `.package(path:)` dependency:
    /// the last component of its path (`WidgetHostKit`).
    var swiftPackageIdentity: String { PathText.lastComponent(swiftPackage) }

    /// The SDK of a source tree (`root/SDK/...`) or of an install prefix
    /// (`root/include`, `root/share/widgethost/...`), if `root` is one.
    static func at(_ root: String) -> SDKLocation? {
        let manager = FileManager.default
        let tree = SDKLocation(
            includeDirectory: root + "/SDK/include", rustCrate: root + "/SDK/rust",
            swiftPackage: root + "/SDK/WidgetHostKit")
        if manager.fileExists(atPath: tree.includeDirectory + "/widgethost/provider.h"),
            manager.fileExists(atPath: tree.rustCrate + "/Cargo.toml")
        {
            return tree
        }
        let prefix = SDKLocation(
            includeDirectory: root + "/include", rustCrate: root + "/share/widgethost/rust",
            swiftPackage: root + "/share/widgethost/WidgetHostKit")
        if manager.fileExists(atPath: prefix.includeDirectory + "/widgethost/provider.h"),
            manager.fileExists(atPath: prefix.rustCrate + "/Cargo.toml")
        {
            return prefix
        }
        return nil
    }

    /// `explicit` (--sdk), else `$WIDGETHOST_SDK`, else the first ancestor
    /// of the executable that is a source tree or an install prefix.
    static func find(explicit: String?, executable: String) throws -> SDKLocation {
        if let root = explicit ?? ProcessInfo.processInfo.environment["WIDGETHOST_SDK"] {
            let absolute = PathText.normalized(IsolatedRunnerPath.absolute(root))
            guard let location = at(absolute) else {
                throw UsageError(
                    "\(absolute) has no widgethost SDK: expected SDK/include/widgethost/provider.h and SDK/rust (a source tree) or include/widgethost/provider.h and share/widgethost/rust (an install prefix)"
                )
            }
            return location
        }
        var directory = PathText.parent(executable)
        while directory.count > 1 {
            if let location = at(directory) { return location }
            directory = PathText.parent(directory)
        }
        throw UsageError(
            "no widgethost SDK next to \(executable): pass --sdk with a widgethost source tree or install prefix")
    }

    /// The real path of the running program.
    static func executablePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}

/// Path arithmetic on strings (FoundationEssentials has no NSString).
enum PathText {
    /// `/a/b/c` -> `/a/b`; `/a` -> `/`.
    static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `/a/b/c` -> `c`.
    static func lastComponent(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// An absolute path without `.`, `..`, empty components or a trailing `/`.
    static func normalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." { continue }
            if part == ".." {
                _ = parts.popLast()
            } else {
                parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
    }
}
