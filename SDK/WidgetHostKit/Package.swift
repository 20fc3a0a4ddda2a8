// swift-tools-version: 6.1
//
// WidgetHostKit alone: the Swift SDK for widgethost plugins, without the host
// (no GRDB, argument parser, logging). A plugin's package depends on it by
// path (any checkout folder name works; the package identity is this
// folder's name, WidgetHostKit):
//
//     .package(path: "/path/to/widgethost/SDK/WidgetHostKit")
//     .product(name: "WidgetHostKit", package: "WidgetHostKit")
//
// The sources are the repository's own (symbolic links into ../include,
// ../src, ../../Sources/WidgetHostKit and ../../Sources/WidgetHostJSON): one
// copy, built by both manifests.
import PackageDescription

let package = Package(
    name: "WidgetHostKit",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "WidgetHostKit", targets: ["WidgetHostKit"])
    ],
    targets: [
        // The plugin ABI header (provider.h) and its layout checks.
        .target(name: "WidgetHostABI", path: "Sources/WidgetHostABI", publicHeadersPath: "include"),
        // JSON text as JSONEncoder writes it, for the entries.
        .target(name: "WidgetHostJSON", path: "Sources/WidgetHostJSON", swiftSettings: [.swiftLanguageMode(.v6)]),
        .target(
            name: "WidgetHostKit",
            dependencies: ["WidgetHostABI", "WidgetHostJSON"],
            path: "Sources/WidgetHostKit",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
