import WidgetHostKit

/// The game's push handler (WidgetKit's `WidgetPushHandler`). On Apple's
/// platforms the app sends the token to its server; here the game shares
/// the plugin's data directory (the App Group container), so the handler
/// writes the token where the game picks it up to register with its server:
/// `push-KIND.json` in the data directory, `{"kind": ..., "token": HEX}`.
/// The server then pushes to the host with it when a hero's health changes
/// (`widgethost push KIND --token HEX`, or `POST /push/KIND` on `run --http`).
struct GamePushHandler: WidgetPushHandler {
    func pushTokenDidChange(_ pushInfo: WidgetPushInfo, widgets: [WidgetInfo]) {
        guard let widget = widgets.first else { return }
        let hex = pushInfo.token.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
        }.joined()
        let document = "{\"kind\":\"\(widget.kind)\",\"token\":\"\(hex)\"}\n"
        let directory = widget.dataDirectory ?? FileManager.default.currentDirectoryPath
        try? Data(document.utf8).write(
            to: URL(fileURLWithPath: directory).appendingPathComponent("push-\(widget.kind).json"), options: .atomic)
    }
}
