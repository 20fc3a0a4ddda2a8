internal import WidgetHostABI

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Hands a push kind's token to its ``WidgetPushHandler`` (WidgetKit's
/// `pushTokenDidChange(_:widgets:)`).
///
/// The daemon passes the kind's token in every call of a kind that declares
/// `WH_KIND_PUSH` (`wh_context.push_token`, SDK 1.4). The handler runs at
/// the start of a call whose token differs from the one last handed over,
/// which the plugin's data directory remembers (`.widgethost/push-token-KIND`,
/// so a new worker process does not hand the same token over again): once
/// after the token is made, and again only if it changes (a reset state).
/// It runs in the call's sandbox, within its deadline, before the provider.
enum PushTokenDelivery {
    /// The token in a host's context, if its struct has the field (an SDK
    /// 1.0-1.3 host's context ends before it) and the host set one.
    static func token(in context: UnsafePointer<wh_context>) -> String? {
        guard let offset = MemoryLayout<wh_context>.offset(of: \.push_token) else { return nil }
        let size = Int(context.pointee.struct_size)
        guard size >= offset + MemoryLayout<UnsafePointer<CChar>?>.size else { return nil }
        guard let text = UnsafeRawPointer(context).load(fromByteOffset: offset, as: UnsafePointer<CChar>?.self)
        else { return nil }
        let token = String(cString: text)
        return token.isEmpty ? nil : token
    }

    /// Calls `handler` with `token` unless it was handed over before.
    static func deliver(
        _ token: String, to handler: any WidgetPushHandler.Type, kind: WidgetKind, context: TimelineProviderContext
    ) {
        let directory = context.dataDirectoryPath + "/.widgethost"
        let file =
            directory + "/push-token-"
            + String(kind.id.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "_" })
        if let seen = try? String(contentsOfFile: file, encoding: .utf8), seen == token { return }
        let widget = WidgetInfo(
            id: "", kind: kind.id, family: context.family, configuration: context.configuration.json,
            dataDirectory: context.dataDirectoryPath)
        handler.init().pushTokenDidChange(WidgetPushInfo(token: bytes(ofHex: token)), widgets: [widget])
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try? Data(token.utf8).write(to: URL(fileURLWithPath: file), options: .atomic)
    }

    /// The token's bytes: hex decoded (so that the usual APNs idiom,
    /// `token.map { String(format: "%02x", $0) }.joined()`, gives back the
    /// text the host takes), or its UTF-8 if it is not hex.
    static func bytes(ofHex text: String) -> Data {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return Data(text.utf8) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else {
                return Data(text.utf8)
            }
            bytes.append(high << 4 | low)
        }
        return Data(bytes)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension WidgetKind {
    /// The kind, accepting push updates (`WH_KIND_PUSH`): the daemon gives
    /// it a push token, hands it to `handler` (``WidgetPushHandler``) in the
    /// kind's next call, and reloads the kind's widgets, with reason `push`,
    /// when a server pushes with the token.
    ///
    /// ```swift
    /// WidgetKind("com.example.score", displayName: "Score", provider: ScoreProvider())
    ///     .pushHandler(ScorePushHandler.self)
    /// ```
    public func pushHandler(_ handler: any WidgetPushHandler.Type) -> WidgetKind {
        var kind = self
        kind.pushHandler = handler
        return kind
    }
}
