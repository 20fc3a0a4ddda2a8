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
    /// The entry count the sender claimed (checked against the limit).
    var declaredEntryCount: UInt32 = 0

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
        // The count is the sender's word: read no more entries than the
        // limit (the validator refuses a count above it) and no more than the
        // payload can hold (each entry takes at least 32 bytes).
        let readable = min(count, UInt32(WH_LIMIT_MAX_ENTRIES), UInt32(reader.remaining / 32))
        for _ in 0..<readable where !reader.malformed {
            entries.append(
                Entry(
                    flags: reader.u32(), date: reader.f64(), score: reader.f64(), duration: reader.f64(),
                    content: reader.string()))
        }
        let duplicates = reader.u32()
        return RawResult(
            status: status, policy: policy, policyDate: policyDate, errorCode: errorCode, errorMessage: errorMessage,
            nanoseconds: nanoseconds, completedOnCallingThread: sameThread, entries: entries,
            duplicateCompletions: duplicates, declaredEntryCount: count)
    }
}

/// Checks a provider's answer against the rules of docs/abi.md ("Results"):
/// errors fail the call, warnings are kept with the result.
enum ResultValidator {
    static func validate(_ raw: RawResult, for call: PluginCall) -> Result<ProviderResult, PluginFailure.Reason> {
        switch raw.status {
        case Int32(WH_STATUS_OK.rawValue): break
        case Int32(WH_STATUS_ERROR.rawValue):
            let message = raw.errorMessage.isEmpty ? "(no message)" : TerminalText.bounded(raw.errorMessage)
            return .failure(.pluginError(code: raw.errorCode, message: message))
        default:
            return .failure(
                .malformedResult(what: "status is \(raw.status), expected WH_STATUS_OK (0) or WH_STATUS_ERROR (1)"))
        }
        // The runner checks these limits, but what arrives on the channel may
        // have been written by plugin code: check them again.
        if raw.declaredEntryCount > UInt32(WH_LIMIT_MAX_ENTRIES) {
            return .failure(
                .resultTooLarge(
                    what: "entry_count", found: UInt64(raw.declaredEntryCount), limit: UInt64(WH_LIMIT_MAX_ENTRIES)))
        }
        if raw.entries.count < Int(raw.declaredEntryCount) {
            return .failure(
                .malformedResult(
                    what: "the answer announces \(raw.declaredEntryCount) entries and carries \(raw.entries.count)"))
        }
        let contentBytes = raw.entries.reduce(0) { $0 + $1.content.utf8.count }
        if contentBytes > WidgetHostLimits.maxResultBytes {
            return .failure(
                .resultTooLarge(
                    what: "bytes of entry content", found: UInt64(contentBytes),
                    limit: UInt64(WidgetHostLimits.maxResultBytes)))
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
            guard Bounds.isTime(entry.date) else {
                return .failure(
                    .malformedResult(
                        what:
                            "\(at).date is \(entry.date), expected a time in seconds since 1970 between 1970-01-01 and 9999-12-31"
                    ))
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
                // JSON the host refuses (a duplicate key, a number beyond a
                // double) is not "not JSON": say what it is.
                let what = error.kind == .notJSON ? "is not JSON" : "is JSON the host refuses"
                return .failure(
                    .malformedResult(
                        what: "\(at).content_json \(what) (\(error.explanation)): \(sample.debugDescription)"))
            }
            guard type == "object" else {
                return .failure(.malformedResult(what: "\(at).content_json is a JSON \(type), expected an object"))
            }
            var relevance: Relevance?
            if entry.flags & UInt32(WH_ENTRY_HAS_RELEVANCE.rawValue) != 0 {
                guard entry.score.isFinite, entry.score >= 0, Bounds.isDuration(entry.duration) else {
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
                guard Bounds.isTime(raw.policyDate) else {
                    return .failure(
                        .malformedResult(
                            what:
                                "policy_date is \(raw.policyDate), expected a time between 1970-01-01 and 9999-12-31 for WH_POLICY_AFTER"
                        ))
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
