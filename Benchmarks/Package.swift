// swift-tools-version: 6.1
//
// Benchmarks of the code widgethost ships, kept out of the main package so
// that its build and CI do not pay for the harness:
//
//   cd Benchmarks && swift package benchmark
//
// ordo-one/benchmark (the harness swift-nio uses) counts allocations through
// its malloc interposer, hence the trait.
import PackageDescription

let package = Package(
    name: "widgethost-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "widgethost", path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The shipped ReloadScheduler at 1k, 10k and 100k instances, and the
        // plain scan the tests use as the oracle (ScanScheduler.swift is a
        // link to Tests/WidgetHostSchedulerTests/ScanScheduler.swift) as the
        // baseline in the same run.
        .executableTarget(
            name: "SchedulerBenchmark",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "WidgetHostScheduler", package: "widgethost"),
            ],
            path: "Benchmarks/SchedulerBenchmark",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        )
    ]
)
