import Foundation
import WidgetHostTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A headless Chromium driven through chromedriver (W3C WebDriver over
/// HTTP): Debian's `chromium` and `chromium-driver`, which
/// `scripts/setup --tests` installs.
final class Browser {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static let driver = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    /// Whether both are installed (the browser tests are skipped, saying
    /// so, only when they are not).
    static var available: Bool { chromium != nil && driver != nil }

    private var process = Process()
    private let endpoint: String
    private let session: String

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init() async throws {
        guard let chromium = Self.chromium, let driver = Self.driver else {
            throw Failure(description: "chromium/chromedriver missing: run scripts/setup --tests")
        }
        var port = 0
        var started = false
        for _ in 0..<10 where !started {
            port = Int.random(in: 20_000...45_000)
            process = Process()
            process.executableURL = URL(fileURLWithPath: driver)
            process.arguments = ["--port=\(port)", "--allowed-ips=127.0.0.1"]
            // Chromium's profile directories in this run's scratch
            // directory, removed with it (a session not quit left them in /tmp).
            var environment = ProcessInfo.processInfo.environment
            environment["TMPDIR"] = ScratchDirectory.make("chromium")
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, process.isRunning {
                if (try? await Self.call("GET", "http://127.0.0.1:\(port)/status")) != nil {
                    started = true
                    break
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            if !started { await Self.end(process) }
        }
        guard started else { throw Failure(description: "chromedriver did not start") }
        endpoint = "http://127.0.0.1:\(port)"
        let capabilities: [String: Any] = [
            "capabilities": [
                "alwaysMatch": [
                    "goog:chromeOptions": [
                        "binary": chromium,
                        "args": [
                            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                            "--window-size=1280,1800", "--force-device-scale-factor=1",
                        ],
                    ],
                    "timeouts": ["pageLoad": 120_000, "script": 60_000],
                ]
            ]
        ]
        let answer = try await Self.call("POST", endpoint + "/session", capabilities, timeout: 120)
        guard let value = answer["value"] as? [String: Any], let id = value["sessionId"] as? String else {
            await Self.end(process)
            throw Failure(description: "no WebDriver session: \(answer)")
        }
        session = endpoint + "/session/" + id
    }

    func close() async {
        _ = try? await Self.call("DELETE", session)
        await Self.end(process)
    }

    /// Ends a helper process this test started: SIGKILL, then polls
    /// (Foundation's waitUntilExit spins a run loop).
    static func end(_ process: Process) async {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        for _ in 0..<200 where process.isRunning { try? await Task.sleep(for: .milliseconds(50)) }
    }

    func open(_ url: String) async throws {
        _ = try await Self.call("POST", session + "/url", ["url": url], timeout: 180)
    }

    /// Runs `script` (a function body; `arguments[0]`... are `arguments`) in the page.
    @discardableResult
    func run(_ script: String, _ arguments: [Any] = []) async throws -> Any? {
        let answer = try await Self.call(
            "POST", session + "/execute/sync", ["script": script, "args": arguments], timeout: 120)
        return answer["value"]
    }

    /// Polls `script` until it returns true (generous: a busy machine).
    func waitUntil(_ script: String, timeout: Double = 60) async throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if (try? await run(script)) as? Bool == true { return true }
            try await Task.sleep(for: .milliseconds(250))
        }
        return false
    }

    /// A PNG of the viewport.
    func screenshot() async throws -> Data {
        let answer = try await Self.call("GET", session + "/screenshot", timeout: 120)
        guard let text = answer["value"] as? String, let data = Data(base64Encoded: text) else {
            throw Failure(description: "no screenshot")
        }
        return data
    }

    /// One WebDriver command, through curl (bounded by `timeout`, never hangs).
    static func call(_ method: String, _ url: String, _ body: [String: Any]? = nil, timeout: Double = 30)
        async throws -> [String: Any]
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var arguments = ["curl", "-s", "-m", "\(Int(timeout))", "-X", method, "-w", "\n%{http_code}"]
        if body != nil { arguments += ["-H", "Content-Type: application/json", "--data-binary", "@-"] }
        process.arguments = arguments + [url]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        if let body { input.fileHandleForWriting.write(try JSONSerialization.data(withJSONObject: body)) }
        try input.fileHandleForWriting.close()
        let data = await Task.detached { output.fileHandleForReading.readDataToEndOfFile() }.value
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0, let newline = text.lastIndex(of: "\n") else {
            throw Failure(description: "WebDriver \(method) \(url): curl exited \(process.terminationStatus)")
        }
        let status = Int(text[text.index(after: newline)...]) ?? 0
        let object =
            (try? JSONSerialization.jsonObject(with: Data(text[..<newline].utf8))) as? [String: Any] ?? [:]
        if status >= 400 || status == 0 {
            throw Failure(description: "WebDriver \(method) \(url): \(status) \(object)")
        }
        return object
    }
}

/// A tiny HTTP listener that records every request line: nothing hostile
/// may reach it.
final class Canary {
    let process = Process()
    let port: Int
    let log: String

    init(directory: String) throws {
        port = Int.random(in: 45_001...55_000)
        log = directory + "/canary-\(port).log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-u", "-m", "http.server", "\(port)", "--bind", "127.0.0.1", "--directory", directory,
        ]
        process.standardOutput = FileHandle(forWritingAtPath: log)
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
    }

    var url: String { "http://127.0.0.1:\(port)" }

    /// The hostile requests it saw (every URL the fixture builds has a path
    /// starting /entry- or /template-).
    var requests: [String] {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init).filter {
            $0.contains(" /entry-") || $0.contains(" /template-")
        }
    }

    func waitUntilListening() async throws {
        for _ in 0..<120 {
            if Web.shell("curl -s -m 2 -o /dev/null '\(url)/'").status == 0 { return }
            try await Task.sleep(for: .milliseconds(250))
        }
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        for _ in 0..<200 where process.isRunning { usleep(50_000) }
    }
}
