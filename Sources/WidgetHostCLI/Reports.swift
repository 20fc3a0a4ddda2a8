import WidgetHostIsolation
import WidgetHostModel
import WidgetHostStore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The JSON documents the CLI prints with `--json` (schema in docs/cli.md).
/// Every document carries `schemaVersion`; fields are only ever added.
enum JSONReport {
    static let schemaVersion = 1

    struct Failure: Encodable {
        var code: String
        var message: String
        var hint: String

        init(_ failure: PluginFailure) {
            code = failure.code
            message = failure.message
            hint = failure.hint
        }
    }

    /// What `--json` prints when a command ends in an error before its own
    /// document: a bad flag or value (`usage`, exit 2), a host fault
    /// (`hostFault`, exit 3), no daemon to ask (`daemonUnavailable`, exit 1),
    /// or for `bench` a plugin that does not load (the failure's own code).
    struct ErrorDocument: Encodable {
        var schemaVersion = JSONReport.schemaVersion
        var ok = false
        var failure: ErrorFailure

        init(code: String, message: String, hint: String?) {
            failure = ErrorFailure(code: code, message: message, hint: hint)
        }
    }

    /// The `failure` member of an ``ErrorDocument``.
    struct ErrorFailure: Encodable {
        var code: String
        var message: String
        var hint: String?
    }

    struct Entry: Encodable {
        var date: String
        var dateSeconds: Double
        var relevance: Relevance?
        var content: JSONValue
    }

    struct Policy: Encodable {
        var type: String
        var date: String?
        var dateSeconds: Double?

        init(_ policy: ReloadPolicy) {
            switch policy {
            case .atEnd: type = "atEnd"
            case .never: type = "never"
            case .after(let date):
                type = "after"
                self.date = Timestamp.iso8601(date)
                dateSeconds = date
            }
        }
    }

    struct Log: Encodable {
        var stdout: String
        var stderr: String
        var droppedBytes: Int
    }

    struct Call: Encodable {
        var kind: String
        var family: String
        var entryPoint: String
        var isPreview: Bool
        var ok: Bool
        var now: String
        var latencySeconds: Double
        var providerSeconds: Double?
        var entries: [Entry]?
        var policy: Policy?
        var warnings: [String]
        var failure: Failure?
        var log: Log
        var childExit: String
    }

    struct Parameter: Encodable {
        var name: String
        var type: String
        var defaultJSON: String?
        var description: String
        /// SDK 1.3: the title, and the allowed values (an AppEnum's cases).
        var title: String?
        var choices: [ParameterChoice]
        var optional: Bool
    }

    struct Kind: Encodable {
        var id: String
        var displayName: String
        var description: String
        var families: [String]
        var needsNetwork: Bool
        /// `WH_KIND_DETERMINISTIC`, `WH_KIND_FRESH_PROCESS`, `WH_KIND_PUSH`.
        var deterministic: Bool
        var freshProcess: Bool
        var acceptsPush: Bool
        var entryPoints: [String]
        var parameters: [Parameter]
        var calls: [Call]
    }

    struct Plugin: Encodable {
        var path: String
        var id: String
        var name: String
        var version: String
        var vendor: String
        var sdkVersion: String
        var abiVersion: UInt32
        var hostABIRange: String
        var descriptorSize: UInt32
        var loadSeconds: Double
        var threadsAfterLoad: UInt32
        var hasWarmUp: Bool
    }

    /// How the calls were isolated, and what became of the warm-up.
    struct Isolation: Encodable {
        /// fork-server, spawn or in-process.
        var mode: String
        /// Why a fork server called the plugin with a fresh runner per call.
        var fallback: String?
        /// none, ran or failed (fork server only).
        var warmUp: String?
        var warmUpSeconds: Double?
        var warmUpFailure: String?

        init(mode: IsolationMode, fallback: String?, warmUp: WarmUpOutcome?) {
            self.mode = mode.rawValue
            self.fallback = fallback
            self.warmUp = warmUp?.state
            warmUpSeconds = warmUp?.seconds
            warmUpFailure = warmUp?.failure
        }
    }

    struct Load: Encodable {
        var schemaVersion = JSONReport.schemaVersion
        var ok: Bool
        var plugin: Plugin?
        var failure: Failure?
        var kinds: [Kind]
        /// Present when the daemon's state has this file quarantined.
        var quarantine: Quarantine?
        /// Present when calls were made.
        var isolation: Isolation?
    }

    /// The daemon's quarantine of a plugin file.
    struct Quarantine: Encodable {
        var path: String
        var reason: String
        /// ISO 8601, like every date in these documents.
        var since: String
        var sinceSeconds: Double
        var crashCount: Int

        init(_ entry: QuarantineEntry) {
            path = entry.file.path
            reason = entry.reason
            since = Timestamp.iso8601(entry.since)
            sinceSeconds = entry.since
            crashCount = entry.crashCount
        }
    }

    struct Single: Encodable {
        var schemaVersion = JSONReport.schemaVersion
        var plugin: Plugin?
        var call: Call
    }

    /// `widgethost new --json`.
    struct NewProject: Encodable {
        var schemaVersion = JSONReport.schemaVersion
        /// Absolute path of the project.
        var directory: String
        /// swift, c or rust.
        var language: String
        var pluginID: String
        /// The files written, relative to `directory`.
        var files: [String]
        /// The command that builds it, run in `directory`.
        var build: String
        /// Absolute path of the plugin the build makes.
        var library: String
    }

    /// A call's warnings: the host's checks of the result, then the lines
    /// the Swift SDK writes to stderr as `WidgetHostKit warning: ...` (an
    /// entry exported by reflection, docs/swift-sdk.md), without the prefix.
    static func warnings(_ output: CallOutput) -> [String] {
        let prefix = "WidgetHostKit warning: "
        let sdk = output.log.stderr.split(separator: "\n").filter { $0.hasPrefix(prefix) }.map {
            String($0.dropFirst(prefix.count))
        }
        return (output.result?.warnings ?? []) + sdk
    }

    static func call(_ call: PluginCall, _ output: CallOutput) -> Call {
        Call(
            kind: call.kind, family: call.family.name, entryPoint: call.entryPoint.description,
            isPreview: call.isPreview, ok: output.failure == nil, now: Timestamp.iso8601(call.now),
            latencySeconds: output.timing.totalSeconds, providerSeconds: output.timing.providerSeconds,
            entries: output.result?.entries.map {
                Entry(
                    date: Timestamp.iso8601($0.date), dateSeconds: $0.date, relevance: $0.relevance,
                    content: (try? JSONValue.parse($0.contentJSON)) ?? .string($0.contentJSON))
            },
            policy: output.result?.policy.map(Policy.init),
            warnings: warnings(output),
            failure: output.failure.map(Failure.init),
            log: Log(stdout: output.log.stdout, stderr: output.log.stderr, droppedBytes: output.log.droppedBytes),
            childExit: output.childExit)
    }

    static func plugin(_ plugin: PluginDescription, range: ClosedRange<UInt32>) -> Plugin {
        Plugin(
            path: plugin.path, id: plugin.id, name: plugin.name, version: plugin.version,
            vendor: plugin.vendor, sdkVersion: plugin.sdkVersion, abiVersion: plugin.abiVersion,
            hostABIRange: "\(range.lowerBound)..\(range.upperBound)",
            descriptorSize: plugin.descriptorSize, loadSeconds: plugin.loadSeconds,
            threadsAfterLoad: plugin.threadsAfterLoad, hasWarmUp: plugin.hasWarmUp)
    }

    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
