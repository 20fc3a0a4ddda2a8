import Foundation
import Synchronization
import Testing
import WidgetHostABI
import WidgetHostKit
import WidgetHostTestSupport

/// What the handler was given, call by call.
private let handedOver = Mutex<[(token: Data, widgets: [WidgetInfo])]>([])

private struct RecordingPushHandler: WidgetPushHandler {
    func pushTokenDidChange(_ pushInfo: WidgetPushInfo, widgets: [WidgetInfo]) {
        handedOver.withLock { $0.append((pushInfo.token, widgets)) }
    }
}

private struct Constant: TimelineProvider {
    struct Entry: TimelineEntry, Encodable { var date: Date }
    func placeholder(in context: Context) -> Entry { Entry(date: context.date) }
    func getSnapshot(in context: Context, completion: @escaping @Sendable (Entry) -> Void) {
        completion(Entry(date: context.date))
    }
    func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<Entry>) -> Void) {
        completion(Timeline(entries: [Entry(date: context.date)], policy: .never))
    }
}

/// A push kind's token reaches its `WidgetPushHandler` (WidgetKit's
/// `pushTokenDidChange`) through `wh_context.push_token`, once per token.
@Suite("Push handler")
struct PushHandlerTests {
    @Test func theHandlerGetsEachNewTokenOnceAndNothingFromAnOlderHost() async throws {
        let pushed = descriptor(
            PluginInfo(id: "test.push", name: "Push", version: "1.0"),
            kinds: [
                WidgetKind("test.pushed", displayName: "Pushed", provider: Constant())
                    .pushHandler(RecordingPushHandler.self)
            ])
        let kind = kind(pushed, 0)
        #expect(kind.flags & WH_KIND_PUSH.rawValue != 0)
        let directory = ScratchDirectory.path("push-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = String(repeating: "0a", count: 32)
        let second = String(repeating: "ff", count: 32)

        _ = await call(kind, .timeline, dataDirectory: directory, pushToken: first)
        var seen = handedOver.withLock { $0 }
        #expect(seen.count == 1)
        #expect(seen.first?.token == Data(repeating: 0x0a, count: 32))
        #expect(seen.first?.widgets.map(\.kind) == ["test.pushed"])
        #expect(seen.first?.widgets.first?.dataDirectory == directory)

        // The same token again (this process or a new worker): not again.
        _ = await call(kind, .snapshot, dataDirectory: directory, pushToken: first)
        _ = await call(kind, .timeline, dataDirectory: directory)
        #expect(handedOver.withLock { $0.count } == 1)

        // A new token is handed over; an SDK 1.3 host's context (96 bytes)
        // has no push_token, which is never read.
        _ = await call(kind, .timeline, dataDirectory: directory, pushToken: second)
        _ = await call(
            kind, .timeline, dataDirectory: directory, pushToken: String(repeating: "11", count: 32),
            contextSize: 96)
        seen = handedOver.withLock { $0 }
        #expect(seen.map(\.token) == [Data(repeating: 0x0a, count: 32), Data(repeating: 0xff, count: 32)])
        // The provider still answered every call.
        let answer = await call(kind, .timeline, dataDirectory: directory, pushToken: second)
        #expect(answer.status == 0 && answer.entries.count == 1)
    }
}
