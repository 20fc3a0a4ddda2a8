import WidgetHostJSON
import WidgetHostModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The control protocol between `widgethost run` and its clients (the CLI,
/// `WidgetCenter`, the C client library): one JSON object per line over a
/// Unix stream socket, a request answered by exactly one response, in order.
/// The full reference, with every operation and error code, is
/// docs/control-protocol.md.
///
/// ```text
/// → {"v":2,"id":1,"op":"reload","kind":"org.example.weather","app":"weather"}
/// ← {"v":2,"id":1,"ok":true,"scheduled":["kitchen","desk"]}
/// ```
///
/// Version 2 adds `watch` (a stream of events on its connection),
/// `instances.add` / `instances.remove` / `instances.update` and
/// `instance`. A request says its version in `v`; the answer carries the
/// same `v`, so a version-1 client sees version-1 lines (with fields it
/// does not know, which it ignores).
public enum ControlProtocol {
    /// The newest protocol version this build speaks (what its clients send).
    public static let version = 2
    /// Every version this build answers. A request with another `v` gets an
    /// `unsupported-version` error naming these.
    public static let supportedVersions = [1, 2]
    /// The longest request or response line, in bytes (newline included).
    public static let maximumLineBytes = 4 << 20
    /// Instances in a `status` page when the request gives no `limit`.
    public static let defaultStatusPage = 1000
    /// The bytes of instances a `status` page holds at most: a page stops
    /// early (with `nextCursor`) rather than pass it, far below the frame limit.
    public static let statusPageBytes = 1 << 20
}

/// The operations a client may ask for.
public enum ControlOperation: String, Sendable, Hashable, Codable, CaseIterable {
    /// Server name, protocol version, pid.
    case hello
    /// `reloadTimelines(ofKind:)` (with `kind`) or `reloadAllTimelines()` (without).
    case reload
    /// Something happened: app foreground/background, a session, a system change, an intent.
    case event
    /// An instance became visible or hidden (`instance`, `visible`).
    case view
    /// Every plugin and instance: what it shows, budget, next reload.
    case status
    /// Why an instance has or has not reloaded (`instance`).
    case explain
    /// WidgetCenter's `getCurrentConfigurations` (of `app`, or of every app).
    case configurations
    /// Clears the quarantine of a plugin file (`path`).
    case unquarantine
    /// v2: the event stream (``WatchEvent``), resumable after `lastEventId`.
    case watch
    /// v2: one instance in full (`instance`): ``InstanceDetail``.
    case instance
    /// v2: places a widget at run time (`widget`): a free `instanceAdded` reload.
    case instancesAdd = "instances.add"
    /// v2: removes a widget placed at run time (`instance`).
    case instancesRemove = "instances.remove"
    /// v2: changes a widget placed at run time (`widget`, its `id` and the fields to change).
    case instancesUpdate = "instances.update"
    /// v2: a push for a kind (`kind`, `pushToken`): reloads its instances with reason `push`.
    case push

    /// The protocol version that introduced the operation.
    public var since: Int {
        switch self {
        case .hello, .reload, .event, .view, .status, .explain, .configurations, .unquarantine: 1
        case .watch, .instance, .instancesAdd, .instancesRemove, .instancesUpdate, .push: 2
        }
    }
}

/// The events of `widgethost event` and of the `event` operation.
public enum ControlEvent: String, Sendable, Hashable, Codable, CaseIterable {
    case appForeground = "app-foreground"
    case appBackground = "app-background"
    case sessionStart = "session-start"
    case sessionEnd = "session-end"
    case localeChanged = "locale-changed"
    case accessibilityChanged = "accessibility-changed"
    case timezoneChanged = "timezone-changed"
    case locationChanged = "location-changed"
    case intent

    /// Whether the event names an app (`app`), an instance (`instance`), or nothing.
    public var subject: Subject {
        switch self {
        case .appForeground, .appBackground, .sessionStart, .sessionEnd: .app
        case .intent: .instance
        default: .none
        }
    }

    public enum Subject: Sendable { case app, instance, none }
}

/// One request line. Fields an operation does not use must be absent.
public struct ControlRequest: Sendable, Hashable, Codable {
    /// Protocol version (``ControlProtocol/version``).
    public var v: Int
    /// Echoed in the response; any integer the client likes.
    public var id: Int?
    /// The operation, as text (an unknown one gets an `unknown-operation` error).
    public var op: String
    public var kind: String?
    public var app: String?
    public var instance: String?
    public var event: String?
    /// `audio` or `navigation`, for session events.
    public var session: String?
    public var visible: Bool?
    public var path: String?
    /// `status`: at most this many instances in the answer (1-10,000; default
    /// ``ControlProtocol/defaultStatusPage``); the answer stays under the frame limit whatever it is.
    public var limit: Int?
    /// `status`: continue after this cursor (`status.nextCursor` of the previous page).
    public var after: String?
    /// `status`: only these instances. `watch`: only the events of these
    /// instances (and none of the host's own).
    public var instances: [String]?
    /// `watch`: the id of the last event the client saw; the stream starts
    /// after it (SSE's `Last-Event-ID`). Absent: only new events.
    public var lastEventId: Int64?
    /// `instances.add`, `instances.update`: the widget.
    public var widget: InstanceSpec?
    /// `push`: the kind's push token (``PluginStatus/pushTokens``).
    public var pushToken: String?

    public init(
        _ operation: ControlOperation, id: Int? = nil, kind: String? = nil, app: String? = nil,
        instance: String? = nil, event: ControlEvent? = nil, session: String? = nil, visible: Bool? = nil,
        path: String? = nil, limit: Int? = nil, after: String? = nil
    ) {
        self.limit = limit
        self.after = after
        self.v = ControlProtocol.version
        self.id = id
        self.op = operation.rawValue
        self.kind = kind
        self.app = app
        self.instance = instance
        self.event = event?.rawValue
        self.session = session
        self.visible = visible
        self.path = path
    }
}

/// A protocol line's shape, as far as its numbers go: the fields that take
/// any number (the others take whole numbers within 64 bits), and those
/// that hold another shape. Declared by the type that reads the line, next
/// to its fields, so that ``ControlDecodingError`` can name the number that
/// broke an integer field (`JSONDecoder` names no path for it) without
/// knowing any field itself.
///
/// ```swift
/// extension InstanceSpec: ControlLineShape {
///     public static var fieldsTakingAnyNumber: Set<String> { ["timeout", "configuration"] }
/// }
/// ```
public protocol ControlLineShape {
    /// The fields (coding keys) that take any number, or any JSON value
    /// whose numbers are never an integer field's (a widget's
    /// `configuration`). Empty by default.
    static var fieldsTakingAnyNumber: Set<String> { get }
    /// The fields (coding keys) that hold another shape: an object, or an
    /// array of them. Empty by default; a field not named here is read as
    /// taking whole numbers only.
    static var nestedShapes: [String: any ControlLineShape.Type] { get }
}

extension ControlLineShape {
    public static var fieldsTakingAnyNumber: Set<String> { [] }
    public static var nestedShapes: [String: any ControlLineShape.Type] { [:] }
}

extension ControlRequest: ControlLineShape {
    /// `widget` is an ``InstanceSpec``.
    public static var nestedShapes: [String: any ControlLineShape.Type] {
        [CodingKeys.widget.stringValue: InstanceSpec.self]
    }
}

/// The error codes of a failed request (docs/control-protocol.md).
public enum ControlErrorCode: String, Sendable, Hashable, Codable {
    /// The line is not a JSON object of the request shape.
    case badRequest = "bad-request"
    /// `v` is not a version this daemon speaks.
    case unsupportedVersion = "unsupported-version"
    case unknownOperation = "unknown-operation"
    /// A field the operation needs is absent, or has a bad value.
    case badArgument = "bad-argument"
    case unknownInstance = "unknown-instance"
    case unknownKind = "unknown-kind"
    case unknownPlugin = "unknown-plugin"
    /// The request line is longer than ``ControlProtocol/maximumLineBytes``.
    case tooLarge = "too-large"
    /// The client sent part of a request line and no newline for the
    /// daemon's `requestLineTimeout` (30 s by default): the line is
    /// dropped, this error sent, and the connection closed.
    case requestTimeout = "request-timeout"
    /// The daemon is shutting down.
    case shuttingDown = "shutting-down"
    /// The connecting process belongs to another user.
    case permissionDenied = "permission-denied"
    /// The daemon cannot write its state (disk full, read-only, I/O error):
    /// the request changed nothing; retry later.
    case storageUnavailable = "storage-unavailable"
    /// The daemon holds as many connections as it takes: retry later.
    case tooManyConnections = "too-many-connections"
    /// `instances.add`: an instance with this id exists.
    case instanceExists = "instance-exists"
    /// `instances.update`/`remove` of an instance from the configuration file:
    /// edit the file and send SIGHUP instead.
    case configuredInstance = "configured-instance"
    /// `push`: the token is not the kind's.
    case badPushToken = "bad-push-token"
    case internalError = "internal-error"
}

/// What went wrong with a request.
public struct ControlErrorBody: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    public var code: ControlErrorCode
    public var message: String
    /// The request field at fault, when one is (`widget.family`,
    /// `widget.configuration.city`, `lastEventId`).
    public var field: String?
    public init(_ code: ControlErrorCode, _ message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }
    public var description: String { "\(message) [\(code.rawValue)]" }
}

/// One response line: `ok` with the operation's fields, or `error`.
public struct ControlResponse: Sendable, Hashable, Codable {
    public var v: Int
    public var id: Int?
    public var ok: Bool
    public var error: ControlErrorBody?
    /// `hello`.
    public var server: ServerInfo?
    /// `reload`, `event`, `view`: the instances that got a reload request.
    public var scheduled: [String]?
    /// `status`.
    public var status: HostStatus?
    /// `explain`.
    public var explanation: InstanceExplanation?
    /// `configurations`.
    public var configurations: [WidgetConfiguration]?
    /// A sentence for people (`event`, `view`, `unquarantine`).
    public var message: String?
    /// `instance`, `instances.add`, `instances.update`.
    public var instance: InstanceDetail?
    /// `watch`: where the stream starts (the first line only).
    public var watch: WatchStart?
    /// `watch`: one event (every line after the first).
    public var event: WatchEvent?

    public init(id: Int?, ok: Bool = true) {
        self.v = ControlProtocol.version
        self.id = id
        self.ok = ok
    }

    /// A failed response.
    public static func failure(id: Int?, _ code: ControlErrorCode, _ message: String, field: String? = nil)
        -> ControlResponse
    {
        var response = ControlResponse(id: id, ok: false)
        response.error = ControlErrorBody(code, message, field: field)
        return response
    }
}

/// The `hello` answer.
public struct ServerInfo: Sendable, Hashable, Codable {
    public var name: String
    public var protocolVersions: [Int]
    public var pid: Int32
    public var configuration: String
    public var state: String
    public var startedAt: Double
    public init(
        name: String, protocolVersions: [Int], pid: Int32, configuration: String, state: String, startedAt: Double
    ) {
        self.name = name
        self.protocolVersions = protocolVersions
        self.pid = pid
        self.configuration = configuration
        self.state = state
        self.startedAt = startedAt
    }
}

/// One placed widget, as WidgetCenter's `getCurrentConfigurations` reports it.
public struct WidgetConfiguration: Sendable, Hashable, Codable {
    public var id: String
    public var kind: String
    public var family: String
    public var app: String
    public var plugin: String
    /// The instance's configuration (parameter values) as JSON text.
    public var configuration: String
    /// The plugin's data directory: the container an app writes new data
    /// into before asking for a reload (seed 003's shared-container flow).
    public var dataDirectory: String?
    public init(
        id: String, kind: String, family: String, app: String, plugin: String, configuration: String,
        dataDirectory: String? = nil
    ) {
        self.dataDirectory = dataDirectory
        self.id = id
        self.kind = kind
        self.family = family
        self.app = app
        self.plugin = plugin
        self.configuration = configuration
    }
}

/// JSON coding of protocol lines: compact, sorted keys, no escaped slashes.
public enum ControlCoding {
    /// A protocol line: `value` as JSON and a newline. Written by
    /// `JSONTextEncoder` (the bytes `JSONEncoder` writes; answering with
    /// `JSONEncoder` was a tenth of the daemon's loop under load), or by
    /// `JSONEncoder` for what it does not handle, so the bytes are the same
    /// either way.
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        var bytes: [UInt8]
        do {
            bytes = try JSONTextEncoder.encode(value)
        } catch {
            // Unsupported, or an error the value throws: JSONEncoder's is the one reported.
            bytes = Array(try foundationEncoder.encode(value))
        }
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// The encoder `JSONTextEncoder` matches (thread-safe once configured).
    private static let foundationEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Decodes one line; throws `JSONNesting.TooDeep` for a line nested
    /// deeper than `JSONDecoder` can take without trapping,
    /// `JSONValue.ParseError` for a member name twice in one object or a
    /// number beyond `Double`'s range (`JSONDecoder` takes the last of
    /// duplicate names), and ``ControlDecodingError`` (naming the field, the
    /// type expected and the type found) for a line of the wrong shape.
    public static func decode<T: Decodable>(_ type: T.Type, from line: [UInt8]) throws -> T {
        try JSONNesting.check(line)
        try JSONValue.refuseAmbiguous(line)
        do {
            return try JSONDecoder().decode(type, from: Data(line))
        } catch let error as DecodingError {
            throw ControlDecodingError(error, line: line, shape: T.self as? any ControlLineShape.Type)
        }
    }
}

/// A protocol line that is JSON but not of the shape expected: names the
/// field, the type expected and the type found.
///
/// ```text
/// field "limit": expected an integer, found a string ("10")
/// ```
public struct ControlDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The field at fault as a path (`v`, `widget.family`, `instances[2]`);
    /// empty for the line itself.
    public var field: String
    /// What the field takes (`an integer`, `a string`).
    public var expected: String
    /// What the line has there (`a string ("10")`, `nothing`).
    public var found: String

    /// Creates the error.
    public init(field: String, expected: String, found: String) {
        self.field = field
        self.expected = expected
        self.found = found
    }

    /// `field "limit": expected an integer, found a string ("10")`.
    public var description: String {
        field.isEmpty
            ? "expected \(expected), found \(found)" : "field \"\(field)\": expected \(expected), found \(found)"
    }

    /// The error `JSONDecoder` threw, told in the line's terms: the path from
    /// its coding path, what the line holds there from the line itself. A
    /// number that broke an integer field is found with `shape`, the
    /// type's ``ControlLineShape`` (nil: every number is taken as an
    /// integer field's).
    init(_ error: DecodingError, line: [UInt8], shape: (any ControlLineShape.Type)?) {
        let root = try? JSONValue.parse(String(decoding: line, as: UTF8.self))
        func path(_ keys: [any CodingKey]) -> String {
            var text = ""
            for key in keys {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += text.isEmpty ? key.stringValue : "." + key.stringValue
                }
            }
            return text
        }
        func value(at keys: [any CodingKey]) -> JSONValue? {
            var current = root
            for key in keys {
                switch current {
                case .object(let members)?:
                    current = members.first(where: { $0.0 == key.stringValue })?.1
                case .array(let items)?:
                    guard let index = key.intValue, items.indices.contains(index) else { return nil }
                    current = items[index]
                default: return nil
                }
            }
            return current
        }
        func found(at keys: [any CodingKey]) -> String {
            guard let value = value(at: keys) else { return "nothing" }
            switch value {
            case .null: return "null"
            case .object: return "an object"
            case .array: return "an array"
            default: return "a \(value.typeName) (\(value.compactText(limit: 40)))"
            }
        }
        switch error {
        case .typeMismatch(let type, let context):
            self.init(
                field: path(context.codingPath), expected: Self.describe(type), found: found(at: context.codingPath))
        case .valueNotFound(let type, let context):
            self.init(
                field: path(context.codingPath), expected: Self.describe(type), found: found(at: context.codingPath))
        case .keyNotFound(let key, let context):
            self.init(field: path(context.codingPath + [key]), expected: "a value (it is required)", found: "nothing")
        case .dataCorrupted(let context):
            // A number that does not fit its integer field (`1.5`, `1e20`):
            // JSONDecoder calls the line "not valid JSON" and names no path.
            // The first such number of the line (outside the fields its shape
            // says take any number) is the one.
            if context.codingPath.isEmpty, let root, let (at, number) = Self.firstNonInteger(in: root, shape: shape) {
                self.init(
                    field: at, expected: "a whole number that fits in 64 bits",
                    found: "a number (\(JSONValue.number(number).compactText(limit: 40)))")
            } else {
                self.init(
                    field: path(context.codingPath), expected: "a valid value",
                    found: "\(found(at: context.codingPath)): \(context.debugDescription)")
            }
        @unknown default:
            self.init(field: "", expected: "a request object", found: "\(error)")
        }
    }

    /// The path and value of the first number in `value` (depth first)
    /// that is not a whole number within 64 bits, passing over the fields
    /// that `shape` says take any number.
    private static func firstNonInteger(
        in value: JSONValue, shape: (any ControlLineShape.Type)?, at path: String = ""
    ) -> (String, Double)? {
        switch value {
        case .number(let number):
            return Bounds.exactInt(number) == nil ? (path, number) : nil
        case .object(let members):
            for (name, member) in members where shape?.fieldsTakingAnyNumber.contains(name) != true {
                let field = path.isEmpty ? name : path + "." + name
                if let found = firstNonInteger(in: member, shape: shape?.nestedShapes[name], at: field) {
                    return found
                }
            }
        case .array(let items):
            for (index, item) in items.enumerated() {
                if let found = firstNonInteger(in: item, shape: shape, at: path + "[\(index)]") { return found }
            }
        default: break
        }
        return nil
    }

    /// A Swift type as the JSON it reads.
    private static func describe(_ type: Any.Type) -> String {
        let name = "\(type)"
        if ["Int", "Int64", "Int32", "UInt64", "UInt32", "UInt"].contains(name) { return "an integer" }
        if name == "Double" || name == "Float" { return "a number" }
        if name == "String" { return "a string" }
        if name == "Bool" { return "true or false" }
        if name.hasPrefix("Array") || name.hasPrefix("[") { return "an array" }
        return "an object"
    }
}
