import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Paths, builds and processes shared by the web tests.
enum Web {
    static let repositoryRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The build directory: the test bundle sits next to the executables.
    static let buildDirectory: String = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return (exe as NSString).deletingLastPathComponent
    }()

    static var executable: String { buildDirectory + "/widgethost" }
    static func plugin(_ name: String) -> String { buildDirectory + "/lib\(name)Plugin.so" }

    /// A fresh directory of this run (not under /tmp's data directories the
    /// sandbox maps: the build tree).
    static func temporaryDirectory(_ name: String) -> String {
        let path = buildDirectory + "/web-tests/\(getpid())-\(name)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @discardableResult
    static func shell(_ command: String) -> (status: Int32, output: String) {
        let process = Process()
        // Bounded: a command that hangs fails its test instead of the whole run.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["-k", "10", "1800", "/bin/bash", "-c", command]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do { try process.run() } catch { return (127, "\(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Tests/Fixtures/web/hostile.c built with -DVARIANT=`variant`.
    static func hostile(_ variant: Int = 0) -> String {
        let directory = fixtureDirectory
        let path = directory + "/hostile\(variant).so"
        if !FileManager.default.fileExists(atPath: path) {
            let result = shell(
                "cc -shared -fPIC -std=gnu11 -Wall -Wextra -Werror -I'\(repositoryRoot)/SDK/include' "
                    + "-DVARIANT=\(variant) -o '\(path)' '\(repositoryRoot)/Tests/Fixtures/web/hostile.c'")
            precondition(result.status == 0, "building hostile.c failed:\n\(result.output)")
        }
        return path
    }

    /// Tests/Fixtures/faulty/good.c: a plugin without the templates symbol.
    static let plainFixture: String = {
        let path = fixtureDirectory + "/good.so"
        let result = shell(
            "cc -shared -fPIC -std=gnu11 -I'\(repositoryRoot)/SDK/include' -o '\(path)' "
                + "'\(repositoryRoot)/Tests/Fixtures/faulty/good.c'")
        precondition(result.status == 0, "building good.c failed:\n\(result.output)")
        return path
    }()

    static let fixtureDirectory = temporaryDirectory("fixtures")
}

/// A `widgethost preview` process serving a plugin, read until it prints
/// its URL.
final class PreviewProcess {
    let process = Process()
    let url: String
    let base: String
    let token: String
    private let output = Pipe()

    init(plugin: String, arguments: [String] = []) throws {
        process.executableURL = URL(fileURLWithPath: Web.executable)
        process.arguments = ["preview", plugin, "--port", "0"] + arguments
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // Read lines until the URL (generous: a busy 2-core machine). Each
        // read waits for data with the time left (`availableData` alone
        // blocked past the deadline when the preview printed nothing).
        var seen = ""
        let deadline = Date().addingTimeInterval(60)
        let handle = output.fileHandleForReading
        while !seen.contains("?token=") {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { break }
            var ready = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, Int32(min(left, 1) * 1_000))
            if polled < 0 && errno != EINTR { break }
            guard polled > 0 else { continue }
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = seen.range(of: #"http://127\.0\.0\.1:\d+/\?token=[0-9a-f]+"#, options: .regularExpression)
        else {
            process.terminate()
            throw PreviewFailed(output: seen)
        }
        url = String(seen[range])
        base = String(url[..<url.range(of: "/?token=")!.lowerBound])
        token = String(url[url.range(of: "token=")!.upperBound...])
    }

    struct PreviewFailed: Error, CustomStringConvertible {
        var output: String
        var description: String { "preview did not print its URL; it printed:\n\(output)" }
    }

    /// SIGINT (the preview stops its workers and removes its temporary
    /// data directory), then waits by polling.
    func stop() {
        guard process.isRunning else { return }
        process.interrupt()
        for _ in 0..<400 where process.isRunning { usleep(50_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    deinit { stop() }
}

/// Plain HTTP from the test (URLSession), for the security checks.
enum HTTP {
    struct Answer {
        var status: Int
        var body: String
        var headers: [String: String]
    }

    static func request(
        _ url: String, method: String = "GET", headers: [String: String] = [:], timeout: Double = 60
    ) async throws -> Answer {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.timeoutInterval = timeout
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        return Answer(status: http.statusCode, body: String(decoding: data, as: UTF8.self), headers: fields)
    }
}
