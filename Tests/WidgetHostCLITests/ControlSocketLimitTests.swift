import Foundation
import Testing
import WidgetHostControl

/// The control socket against clients that stop mid-line or end their input
/// without a newline.
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
}
