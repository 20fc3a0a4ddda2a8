import CWidgetHostSupport
import WidgetHostABI
import WidgetHostModel

/// A RESULT message as the runner sent it, before any check.
struct RawResult {
    struct Entry {
        var flags: UInt32
        var date: Double
        var score: Double
        var duration: Double
        var content: String
    }

    var status: Int32
    var policy: UInt32
    var policyDate: Double
    var errorCode: Int32
    var errorMessage: String
    var nanoseconds: UInt64
    var completedOnCallingThread: Bool
    var entries: [Entry]
    var duplicateCompletions: UInt32

    static func decode(_ reader: inout WireReader) -> RawResult {
        let status = reader.i32()
        let policy = reader.u32()
        let policyDate = reader.f64()
        let errorCode = reader.i32()
        let errorMessage = reader.string()
        let nanoseconds = reader.u64()
        let sameThread = reader.u32() != 0
        let count = reader.u32()
        var entries: [Entry] = []
        for _ in 0..<min(count, UInt32(WH_LIMIT_MAX_ENTRIES)) where !reader.malformed {
            entries.append(
                Entry(
                    flags: reader.u32(), date: reader.f64(), score: reader.f64(), duration: reader.f64(),
                    content: reader.string()))
        }
        let duplicates = reader.u32()
        return RawResult(
            status: status, policy: policy, policyDate: policyDate, errorCode: errorCode, errorMessage: errorMessage,
            nanoseconds: nanoseconds, completedOnCallingThread: sameThread, entries: entries,
            duplicateCompletions: duplicates)
    }
}

/// Checks a provider's answer against the rules of docs/abi.md ("Results"):
/// errors fail the call, warnings are kept with the result.
enum ResultValidator {
    static func validate(_ raw: RawResult, for call: PluginCall) -> Result<ProviderResult, PluginFailure.Reason> {
        switch raw.status {
        case Int32(WH_STATUS_OK.rawValue): break
        case Int32(WH_STATUS_ERROR.rawValue):
            return .failure(
                .pluginError(code: raw.errorCode, message: raw.errorMessage.isEmpty ? "(no message)" : raw.errorMessage)
            )
        default:
            return .failure(
                .malformedResult(what: "status is \(raw.status), expected WH_STATUS_OK (0) or WH_STATUS_ERROR (1)"))
        }
        var warnings: [String] = []
        if raw.entries.isEmpty {
            let expected = call.entryPoint == .timeline ? "at least one entry" : "exactly one entry"
            return .failure(.malformedResult(what: "entry_count is 0, expected \(expected)"))
        }
        if call.entryPoint != .timeline && raw.entries.count > 1 {
            warnings.append(
                "\(call.entryPoint) returned \(raw.entries.count) entries; only the first is used (return exactly one)")
        }
        var entries: [EntryRecord] = []
        var closest: (gap: Double, index: Int)?
        for (index, entry) in raw.entries.enumerated() {
            // Only an error message names the entry: nothing is formatted for a good one.
            var at: String { "entries[\(index)]" }
            guard entry.date.isFinite else {
                return .failure(
                    .malformedResult(
                        what: "\(at).date is \(entry.date), expected a finite time in seconds since the epoch"))
            }
            if let previous = entries.last {
                if entry.date < previous.date {
                    return .failure(
                        .malformedResult(
                            what:
                                "\(at).date (\(Timestamp.iso8601(entry.date))) is before entries[\(index - 1)].date (\(Timestamp.iso8601(previous.date))): entries must be sorted by date"
                        ))
                }
                let gap = entry.date - previous.date
                if gap < WidgetHostLimits.minimumEntrySpacing, closest.map({ gap < $0.gap }) ?? true {
                    closest = (gap, index)
                }
            }
            let type: String
            do {
                type = try JSONValue.typeName(of: entry.content)
            } catch {
                let sample = entry.content.count > 40 ? String(entry.content.prefix(40)) + "…" : entry.content
                return .failure(
                    .malformedResult(
                        what: "\(at).content_json is not JSON (\(error.explanation)): \(sample.debugDescription)"))
            }
            guard type == "object" else {
                return .failure(.malformedResult(what: "\(at).content_json is a JSON \(type), expected an object"))
            }
            var relevance: Relevance?
            if entry.flags & UInt32(WH_ENTRY_HAS_RELEVANCE.rawValue) != 0 {
                guard entry.score.isFinite, entry.score >= 0, entry.duration.isFinite, entry.duration >= 0 else {
                    return .failure(
                        .malformedResult(
                            what:
                                "\(at) relevance (score \(entry.score), duration \(entry.duration)) must be finite and not negative"
                        ))
                }
                relevance = Relevance(score: entry.score, duration: entry.duration)
            }
            entries.append(EntryRecord(date: entry.date, relevance: relevance, contentJSON: entry.content))
        }
        if let closest, call.entryPoint == .timeline {
            warnings.append(
                "entries[\(closest.index)] is \(Timestamp.duration(closest.gap)) after the previous entry; keep entries at least 5 minutes apart (WidgetKit's guidance), the display may not update more often"
            )
        }
        var policy: ReloadPolicy?
        if call.entryPoint == .timeline {
            switch raw.policy {
            case UInt32(WH_POLICY_AT_END.rawValue): policy = .atEnd
            case UInt32(WH_POLICY_NEVER.rawValue): policy = .never
            case UInt32(WH_POLICY_AFTER.rawValue):
                guard raw.policyDate.isFinite else {
                    return .failure(
                        .malformedResult(
                            what: "policy_date is \(raw.policyDate), expected a finite time for WH_POLICY_AFTER"))
                }
                policy = .after(raw.policyDate)
                if raw.policyDate < call.now {
                    warnings.append(
                        "policy after(\(Timestamp.iso8601(raw.policyDate))) is \(Timestamp.duration(call.now - raw.policyDate)) in the past; the host treats it as due now, within its rate limits"
                    )
                }
            default:
                return .failure(
                    .malformedResult(
                        what:
                            "policy is \(raw.policy), expected WH_POLICY_AT_END (1), WH_POLICY_AFTER (2) or WH_POLICY_NEVER (3)"
                    ))
            }
        }
        if raw.duplicateCompletions > 0 {
            warnings.append(
                "the completion was called \(raw.duplicateCompletions + 1) times; call it exactly once (extra calls are ignored)"
            )
        }
        return .success(ProviderResult(entries: entries, policy: policy, warnings: warnings))
    }
}
