import Foundation
import Testing
import WidgetHostIsolation
import WidgetHostModel
import WidgetHostTestSupport

/// Paths and builds shared by the isolation tests: the real fixture plugins
/// are compiled once per test run, into a temporary directory.
enum TestSupport {
    /// The package root, from this file's path.
    static let repositoryRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// A fresh temporary directory.
    static func temporaryDirectory(_ name: String) -> String {
        ScratchDirectory.make(name)
    }

    /// Runs a command, returning its exit status and combined output.
    @discardableResult
    static func shell(_ command: String, in directory: String? = nil) -> (status: Int32, output: String) {
        let process = Process()
        // Bounded: a command that hangs fails its test instead of the whole run.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["-k", "10", "1800", "/bin/bash", "-c", command]
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do { try process.run() } catch { return (127, "\(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// The faulty fixtures of Tests/Fixtures/faulty, built by its build.sh.
    static let fixtures: String = {
        let directory = temporaryDirectory("fixtures")
        let result = shell("bash '\(repositoryRoot)/Tests/Fixtures/faulty/build.sh' '\(directory)'")
        precondition(result.status == 0, "building the fixtures failed:\n\(result.output)")
        return directory
    }()

    static func fixture(_ name: String) -> String { fixtures + "/\(name).so" }

    /// One data directory for the whole run.
    static let dataDirectory = temporaryDirectory("data")

    static func call(
        _ plugin: String, _ entryPoint: EntryPoint = .timeline, kind: String = "test.fixture",
        family: WidgetFamily = .systemSmall, timeout: Double? = nil, loadTimeout: Double = 5,
        configuration: [String: String] = [:], dataDirectory: String? = nil
    ) -> CallOutput {
        let call = PluginCall(
            entryPoint, kind: kind, family: family, now: Date().timeIntervalSince1970,
            timeout: timeout, configuration: configuration,
            dataDirectory: dataDirectory ?? Self.dataDirectory)
        return IsolatedRunner.run(plugin: plugin, call: call, options: IsolationOptions(loadTimeout: loadTimeout))
    }

    /// Processes (not zombies) whose process group is `group`.
    static func livingProcesses(inGroup group: Int32) -> [Int32] {
        guard group > 0, let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        var found: [Int32] = []
        for entry in entries {
            guard let pid = Int32(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // Fields after "comm)": state ppid pgrp ...
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 2, fields[0] != "Z", Int32(fields[2]) == group else { continue }
            found.append(pid)
        }
        return found
    }

    /// Asserts that no process of a call survives it, waiting briefly for
    /// the kernel to finish tearing down killed processes.
    static func expectNoSurvivors(_ output: CallOutput, sourceLocation: SourceLocation = #_sourceLocation) {
        var survivors = livingProcesses(inGroup: output.processGroup)
        let deadline = Date().addingTimeInterval(5)
        while !survivors.isEmpty && Date() < deadline {
            usleep(20_000)
            survivors = livingProcesses(inGroup: output.processGroup)
        }
        #expect(survivors.isEmpty, "processes of the call survived it: \(survivors)", sourceLocation: sourceLocation)
    }

    /// After a fault: the host still loads and calls a good plugin.
    static func expectHostStillWorks(sourceLocation: SourceLocation = #_sourceLocation) {
        let output = call(fixture("good"))
        #expect(
            output.failure == nil, "good plugin failed after a fault: \(String(describing: output.failure))",
            sourceLocation: sourceLocation)
        #expect(output.result?.entries.count == 3, sourceLocation: sourceLocation)
    }
}

extension TestSupport {
    /// True if `pid` is a zombie (dead, not yet reaped by its parent).
    static func isZombie(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return true }
        return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
    }
}
