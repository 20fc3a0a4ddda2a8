// swift-tools-version: 6.1
//
// widgethost: a Linux runtime for WidgetKit-style timeline providers.
//
// The data path, in the order a call travels:
//   SDK/ (C ABI)  ->  widgethost-runner (child, C)  ->  WidgetHostIsolation (host side)
//   ->  WidgetHostScheduler  ->  WidgetHostStore  ->  WidgetHostDaemon (+ WidgetHostControl)
//   ->  WidgetHostCLI / widgethost
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6)
]

let package = Package(
    name: "widgethost",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "widgethost", targets: ["widgethost"]),
        .executable(name: "widgethost-runner", targets: ["widgethost-runner"]),
        .library(name: "WidgetHostKit", targets: ["WidgetHostKit"]),
        .library(name: "WidgetHostABI", targets: ["WidgetHostABI"]),
        // The reload scheduler, for the benchmarks in Benchmarks/ (a separate package).
        .library(name: "WidgetHostScheduler", targets: ["WidgetHostScheduler"]),
        // For apps: WidgetCenter.shared.reloadTimelines(ofKind:) and friends.
        .library(name: "WidgetHostCenter", targets: ["WidgetHostCenter"]),
        // First-party provider plugins, each a .so loaded through the C ABI.
        .library(name: "CharacterPlugin", type: .dynamic, targets: ["CharacterPlugin"]),
        .library(name: "CountdownPlugin", type: .dynamic, targets: ["CountdownPlugin"]),
        .library(name: "MarketHoursPlugin", type: .dynamic, targets: ["MarketHoursPlugin"]),
        // Test fixture: WidgetKit provider code in the shapes public apps use
        // (Tests/Fixtures/ProviderCorpus), one plugin the tests load.
        .library(name: "ProviderCorpus", type: .dynamic, targets: ["ProviderCorpus"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        // The web side (preview, and the dashboard of `run --http`).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Tests only: random scenarios that shrink when they fail (the
        // scheduler's comparison with its oracle).
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        // The plugin ABI: SDK/include/widgethost/provider.h, plus compile-time
        // checks that freeze the v1 layout.
        .target(
            name: "WidgetHostABI",
            path: "SDK",
            sources: ["src"],
            publicHeadersPath: "include"
        ),
        // Host-side system shims (posix_spawn with file actions, pidfd) and the
        // wire protocol header shared with the runner.
        .target(
            name: "CWidgetHostSupport",
            path: "Sources/CWidgetHostSupport"
        ),
        // The child process: loads one plugin and calls it. Plain C, single
        // threaded, nothing that breaks after fork().
        .executableTarget(
            name: "widgethost-runner",
            dependencies: ["WidgetHostABI", "CWidgetHostSupport"],
            path: "Sources/widgethost-runner",
            // -rdynamic: the runner's clock functions (virtual_clock.c) interpose
            // those of the libraries a plugin loads. -z now: every symbol is
            // bound at start, so no fork-server call child pays a lazy PLT
            // binding again.
            linkerSettings: [
                .linkedLibrary("dl"), .linkedLibrary("seccomp"),
                .unsafeFlags(["-Xlinker", "--export-dynamic", "-Xlinker", "-z", "-Xlinker", "now"]),
            ]
        ),
        // The Swift SDK plugin authors import (WidgetKit's names).
        .target(
            name: "WidgetHostKit",
            dependencies: ["WidgetHostABI", "WidgetHostJSON"],
            swiftSettings: strictSwift
        ),
        // JSON text as Foundation's JSONEncoder writes it (sorted keys), at a
        // fraction of its cost: the SDK's entries and the control protocol.
        .target(
            name: "WidgetHostJSON",
            swiftSettings: strictSwift
        ),
        // Plain values shared by the host modules: families, entries,
        // timelines, plugin descriptions.
        .target(
            name: "WidgetHostModel",
            dependencies: ["WidgetHostJSON"],
            swiftSettings: strictSwift
        ),
        // Host side of isolation: spawns the runner, speaks the wire protocol,
        // enforces timeouts, turns everything into typed outcomes.
        .target(
            name: "WidgetHostIsolation",
            dependencies: [
                "WidgetHostModel",
                "WidgetHostABI",
                "CWidgetHostSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        // The scheduler's one use of C: a prefetch, which Swift has not
        // (ReadAhead.swift).
        .target(
            name: "CWidgetHostReadAhead",
            path: "Sources/CWidgetHostReadAhead"
        ),
        // The budgeted reload scheduler: pure logic over a clock abstraction.
        .target(
            name: "WidgetHostScheduler",
            dependencies: ["WidgetHostModel", "CWidgetHostReadAhead"],
            swiftSettings: strictSwift
        ),
        // The daemon's state store: SQLite through GRDB (WAL, versioned
        // migrations), and the restart / clock-jump reconciliation.
        .target(
            name: "WidgetHostStore",
            dependencies: [
                "WidgetHostModel",
                "WidgetHostJSON",
                "WidgetHostScheduler",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSwift
        ),
        // The control protocol (JSON lines over a Unix socket) and its client.
        .target(
            name: "WidgetHostControl",
            dependencies: [
                "CWidgetHostSupport", "WidgetHostModel", "WidgetHostJSON",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSwift
        ),
        // WidgetCenter for apps: reloadTimelines(ofKind:), reloadAllTimelines(),
        // getCurrentConfigurations, over the control socket.
        .target(
            name: "WidgetHostCenter",
            dependencies: ["WidgetHostControl", "WidgetHostKit"],
            swiftSettings: strictSwift
        ),
        // `widgethost run`: the daemon (configuration, the real-time loop,
        // plugin workers, the control server).
        .target(
            name: "WidgetHostDaemon",
            dependencies: [
                "WidgetHostModel",
                "WidgetHostIsolation",
                "WidgetHostScheduler",
                "WidgetHostStore",
                "WidgetHostControl",
                "WidgetHostJSON",
                "CWidgetHostSupport",
                // `run --http`: the daemon feeds the web dashboard (daemon -> web).
                "WidgetHostWeb",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSwift
        ),
        // The web side: family sizes, the entry renderer (plugin templates
        // or the generic card, each widget in a sandboxed frame), the page
        // shell (CSP, token + CSRF, loopback bind) and the preview routes.
        .target(
            name: "WidgetHostWeb",
            dependencies: [
                "WidgetHostModel",
                "WidgetHostIsolation",
                // The dashboard speaks the control protocol's types in-process.
                "WidgetHostControl",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strictSwift
        ),
        // The command-line interface.
        .target(
            name: "WidgetHostCLI",
            dependencies: [
                "WidgetHostModel",
                "WidgetHostWeb",
                "WidgetHostIsolation",
                "WidgetHostScheduler",
                "WidgetHostDaemon",
                "WidgetHostControl",
                "WidgetHostStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                // Latency histograms for `widgethost bench`.
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "widgethost",
            dependencies: ["WidgetHostCLI"],
            swiftSettings: strictSwift
        ),

        // First-party plugins.
        .target(
            name: "CharacterPlugin", dependencies: ["WidgetHostKit"],
            path: "Plugins/Character", swiftSettings: strictSwift),
        .target(
            name: "CountdownPlugin", dependencies: ["WidgetHostKit"],
            path: "Plugins/Countdown", swiftSettings: strictSwift),
        .target(
            name: "MarketHoursPlugin", dependencies: ["WidgetHostKit"],
            path: "Plugins/MarketHours", swiftSettings: strictSwift),

        // Test fixtures: provider code and WidgetCenter app code as apps
        // write it, in Swift 5 mode as most apps are (Tests/Fixtures/README.md).
        .target(
            name: "ProviderCorpus", dependencies: ["WidgetHostKit"],
            path: "Tests/Fixtures/ProviderCorpus", swiftSettings: [.swiftLanguageMode(.v5)]),
        .target(
            name: "CenterAppCorpus", dependencies: ["WidgetHostCenter"],
            path: "Tests/Fixtures/CenterAppCorpus", swiftSettings: [.swiftLanguageMode(.v5)]),

        // Tests.
        .target(name: "WidgetHostTestSupport", path: "Tests/Support", swiftSettings: strictSwift),
        .testTarget(
            name: "WidgetHostKitTests",
            dependencies: ["WidgetHostTestSupport", "WidgetHostKit", "WidgetHostJSON", "WidgetHostModel"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "WidgetHostIsolationTests",
            dependencies: ["WidgetHostTestSupport", "WidgetHostIsolation", "WidgetHostModel", "CWidgetHostSupport"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "WidgetHostSchedulerTests",
            dependencies: [
                "WidgetHostScheduler", "WidgetHostModel", "CWidgetHostSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "WidgetHostStoreTests",
            dependencies: ["WidgetHostTestSupport", "WidgetHostStore", "WidgetHostScheduler", "WidgetHostModel"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "WidgetHostDaemonTests",
            dependencies: [
                "WidgetHostTestSupport", "WidgetHostDaemon", "WidgetHostScheduler", "WidgetHostStore",
                "WidgetHostModel", "WidgetHostIsolation",
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "WidgetHostWebTests",
            dependencies: [
                "WidgetHostTestSupport", "WidgetHostWeb", "WidgetHostModel", "WidgetHostIsolation", "WidgetHostControl",
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "WidgetHostCLITests",
            dependencies: [
                "WidgetHostTestSupport", "WidgetHostCLI", "WidgetHostControl", "WidgetHostCenter", "WidgetHostStore",
                "WidgetHostScheduler", "CenterAppCorpus",
            ],
            swiftSettings: strictSwift
        ),
    ]
)

// libFuzzer targets (scripts/fuzz builds them with `-sanitize=fuzzer` and
// links each into a fuzzer): only in the package when WIDGETHOST_FUZZ is set,
// so that a normal build neither compiles them nor gives them a product.
if Context.environment["WIDGETHOST_FUZZ"] != nil {
    package.targets += [
        .target(name: "FuzzControlRequest", dependencies: ["WidgetHostControl"], path: "Fuzz/ControlRequest"),
        .target(
            name: "FuzzConfiguration", dependencies: ["WidgetHostModel", "WidgetHostScheduler"],
            path: "Fuzz/Configuration"),
        .target(
            name: "FuzzRunnerAnswer", dependencies: ["WidgetHostIsolation", "WidgetHostModel", "CWidgetHostSupport"],
            path: "Fuzz/RunnerAnswer"),
        .target(
            name: "FuzzStateRow",
            dependencies: ["WidgetHostStore", "WidgetHostModel", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Fuzz/StateRow"),
    ]
}
