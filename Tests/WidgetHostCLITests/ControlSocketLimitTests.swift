import Foundation
import Testing
import WidgetHostControl

/// The control socket against clients that stop mid-line or end their input
/// without a newline, and the connection limit changed by SIGHUP.
extension DaemonHostFaultTests {
    /// The quiet configuration with `daemon` settings.
    static func quiet(daemon settings: String) -> String {
        """
        {
          "plugins": [{ "name": "countdown", "path": "@BUILD@/libCountdownPlugin.so" }],
          "daemon": { \(settings) },
          "instances": [
            { "id": "new-year", "plugin": "countdown", "kind": "com.widgethost.countdown", "app": "com.example.calendar" }
          ]
        }
        """
    }

    /// A connection whose reads give up after `seconds` (a missing answer
    /// fails the test instead of hanging it).
    static func connect(_ daemon: DaemonProcess, readTimeout seconds: Int = 30) throws -> LineSocket {
        let socket = try LineSocket.connect(to: daemon.socket)
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(
            socket.descriptor.rawValue, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return socket
    }

    static func response(_ socket: inout LineSocket) throws -> ControlResponse {
        let line = try #require(try socket.readLine(), "the daemon closed the connection without an answer")
        return try ControlCoding.decode(ControlResponse.self, from: line)
    }

    /// A client that sends part of a request line and then nothing is
    /// answered `request-timeout` after `requestLineTimeout` and closed (it
    /// was held forever); a client that holds no partial line is kept
    /// however long it is idle, and others are served meanwhile.
    @Test func aPartialRequestLineTimesOutAndOthersAreServed() throws {
        let daemon = try DaemonProcess(
            "partial-line", configuration: Self.quiet(daemon: #""requestLineTimeout": "1s""#))
        try daemon.start()
        var idle = try Self.connect(daemon)
        defer { idle.close() }
        var partial = try Self.connect(daemon)
        defer { partial.close() }
        try partial.write(Array(#"{"v":2,"id":1,"op":"hel"#.utf8))
        // After a complete line: it is answered, then the rest waits its time.
        var pipelined = try Self.connect(daemon)
        defer { pipelined.close() }
        try pipelined.write(Array((#"{"v":2,"id":2,"op":"hello"}"# + "\n" + #"{"v":2,"op""#).utf8))
        #expect(try daemon.hello().ok, "another client is served while a line is pending")

        let timedOut = try Self.response(&partial)
        #expect(timedOut.error?.code == .requestTimeout, "\(timedOut)")
        #expect(timedOut.error?.message.contains("23 bytes and no newline for 1.0s") == true, "\(timedOut)")
        #expect(try partial.readLine() == nil, "the connection is closed after the answer")

        let first = try Self.response(&pipelined)
        #expect(first.ok && first.id == 2)
        #expect(try Self.response(&pipelined).error?.code == .requestTimeout)
        #expect(try pipelined.readLine() == nil)

        // The idle connection (nothing sent, idle longer than the timeout) is still served.
        try idle.write(Array((#"{"v":2,"id":3,"op":"hello"}"# + "\n").utf8))
        let answer = try Self.response(&idle)
        #expect(answer.ok && answer.id == 3, "\(answer)")
        #expect(daemon.logText.contains("sent 23 bytes of a request line and no newline for 1.0s"))
        #expect(daemon.stop() == 0)
    }

    /// A last request line without its newline, then the end of input
    /// (`shutdown(SHUT_WR)`), is answered as a complete line (it got no
    /// answer), then the connection is closed.
    @Test func aLastLineEndedByTheEndOfInputIsAnswered() throws {
        let daemon = try DaemonProcess("eof-line", configuration: quietConfiguration)
        try daemon.start()
        var single = try Self.connect(daemon)
        defer { single.close() }
        try single.write(Array(#"{"v":2,"id":7,"op":"hello"}"#.utf8))
        shutdown(single.descriptor.rawValue, Int32(SHUT_WR))
        let answer = try Self.response(&single)
        #expect(answer.ok && answer.id == 7, "\(answer)")
        #expect(try single.readLine() == nil)

        var two = try Self.connect(daemon)
        defer { two.close() }
        try two.write(Array((#"{"v":2,"id":8,"op":"hello"}"# + "\n" + #"{"v":2,"id":9,"op":"status"}"#).utf8))
        shutdown(two.descriptor.rawValue, Int32(SHUT_WR))
        #expect(try Self.response(&two).id == 8)
        let status = try Self.response(&two)
        #expect(status.id == 9 && status.status != nil, "\(status)")
        #expect(try two.readLine() == nil)
        #expect(daemon.stop() == 0)
    }

    /// SIGHUP applies `daemon.maximumConnections` (it applied only at the
    /// next start): lowered below the connections open, it refuses new
    /// ones and closes none; raised, new ones are accepted again.
    @Test func sighupAppliesTheConnectionLimit() throws {
        let daemon = try DaemonProcess("sighup-limit", configuration: Self.quiet(daemon: #""maximumConnections": 3"#))
        let process = try daemon.start()
        var held: [LineSocket] = []
        defer { for socket in held { socket.close() } }
        for id in 1...2 {
            var socket = try Self.connect(daemon)
            try socket.write(Array((#"{"v":2,"op":"hello","id":"# + "\(id)}\n").utf8))
            #expect(try Self.response(&socket).ok)
            held.append(socket)
        }
        func reloads() -> Int { daemon.logText.components(separatedBy: "SIGHUP: configuration reloaded").count - 1 }
        func sighup(limit: Int) throws {
            let before = reloads()
            try Self.quiet(daemon: "\"maximumConnections\": \(limit)")
                .replacingOccurrences(of: "@BUILD@", with: CLI.buildDirectory)
                .write(toFile: daemon.config, atomically: true, encoding: .utf8)
            kill(process.processIdentifier, SIGHUP)
            try waitUntil("the configuration is reloaded", showing: daemon) { reloads() > before }
        }

        try sighup(limit: 1)
        // Refused at once, before any request (nothing is written: the daemon may have closed it).
        var refused = try Self.connect(daemon)
        defer { refused.close() }
        let refusal = try Self.response(&refused)
        #expect(refusal.error?.code == .tooManyConnections, "\(refusal)")
        #expect(refusal.error?.message.contains("connections, the most it takes") == true, "\(refusal)")
        // The two open before are kept and served.
        for index in held.indices {
            try held[index].write(Array((#"{"v":2,"op":"hello","id":"# + "\(10 + index)}\n").utf8))
            let answer = try Self.response(&held[index])
            #expect(answer.ok && answer.id == 10 + index, "\(answer)")
        }

        try sighup(limit: 10)
        try waitUntil("a new client is accepted again", showing: daemon) { (try? daemon.hello())?.ok == true }
        #expect(daemon.stop() == 0)
    }
}
