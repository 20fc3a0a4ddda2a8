import WidgetHostIsolation
import WidgetHostModel

/// Human-readable rendering of plugins, calls and failures.
/// Every string a report prints passes `TerminalText.escaped`: a plugin's
/// names, messages, entries and log cannot drive the terminal (issue 14).
enum TextReport {
    static func plugin(_ plugin: PluginDescription, range: ClosedRange<UInt32>) -> String {
        TerminalText.escaped(rawPlugin(plugin, range: range))
    }

    private static func rawPlugin(_ plugin: PluginDescription, range: ClosedRange<UInt32>) -> String {
        var lines: [String] = []
        let vendor = plugin.vendor.isEmpty ? "" : " by \(plugin.vendor)"
        lines.append("Plugin   \(plugin.name) \(plugin.version) (\(plugin.id))\(vendor)")
        lines.append("File     \(plugin.path)")
        lines.append(
            "ABI      v\(plugin.abiVersion) (host offers \(range.lowerBound)..\(range.upperBound)), descriptor \(plugin.descriptorSize) bytes, SDK \(plugin.sdkVersion.isEmpty ? "unknown" : plugin.sdkVersion)"
        )
        let threads =
            plugin.threadsAfterLoad > 1
            ? "\(plugin.threadsAfterLoad) threads after loading (the plugin starts threads while loading: fork() would copy only one, so the fork server calls it with a fresh runner per call instead)"
            : "1 thread after loading (the fork server can fork it per call)"
        lines.append("Loaded   in \(Timestamp.duration(plugin.loadSeconds)) (dlopen + entry function), \(threads)")
        lines.append("Kinds    \(plugin.kinds.count)")
        return lines.joined(separator: "\n")
    }

    static func kindHeader(_ kind: KindDescription) -> String {
        TerminalText.escaped(rawKindHeader(kind))
    }

    private static func rawKindHeader(_ kind: KindDescription) -> String {
        var lines: [String] = []
        lines.append("")
        lines.append("Kind \(kind.id)  \"\(kind.displayName)\"")
        if !kind.summary.isEmpty { lines.append("  \(kind.summary)") }
        lines.append("  Families    \(kind.families.map(\.name).joined(separator: ", "))")
        if kind.parameters.isEmpty {
            lines.append("  Parameters  none")
        } else {
            for (index, parameter) in kind.parameters.enumerated() {
                let label = index == 0 ? "  Parameters  " : "              "
                let type = parameter.type?.description ?? "type \(parameter.rawType)"
                let value =
                    parameter.defaultJSON.map { " = \($0)" } ?? (parameter.isOptional ? " (optional)" : " (required)")
                let summary = parameter.summary.isEmpty ? "" : "  — \(parameter.summary)"
                let title = parameter.title.map { " \"\($0)\"" } ?? ""
                let choices =
                    parameter.choices.isEmpty
                    ? ""
                    : ", one of "
                        + parameter.choices.map { choice in
                            choice.title.map { "\(choice.value) (\($0))" } ?? choice.value
                        }
                        .joined(separator: ", ")
                lines.append("\(label)\(parameter.name)\(title): \(type)\(value)\(choices)\(summary)")
            }
        }
        lines.append("  Network     \(kind.needsNetwork ? "needed" : "not needed")")
        var flags: [String] = []
        if kind.isDeterministic { flags.append("deterministic (identical calls may share one answer)") }
        if kind.needsFreshProcess { flags.append("fresh process per call") }
        if kind.acceptsPush { flags.append("accepts push updates (a push token in daemon calls)") }
        if !flags.isEmpty { lines.append("  Declares    \(flags.joined(separator: "; "))") }
        let missing = EntryPoint.allCases.filter { !kind.entryPoints.contains($0) }
        if !missing.isEmpty {
            lines.append("  Missing     \(missing.map(\.description).joined(separator: ", ")) entry point(s)")
        }
        return lines.joined(separator: "\n")
    }

    /// One call, as a block: a status line, the entries, the policy, warnings,
    /// the failure and (verbose) the log.
    static func call(_ call: PluginCall, _ output: CallOutput, indent: String, verbose: Bool) -> String {
        TerminalText.escaped(rawCall(call, output, indent: indent, verbose: verbose))
    }

    private static func rawCall(_ call: PluginCall, _ output: CallOutput, indent: String, verbose: Bool) -> String {
        var lines: [String] = []
        let name = call.entryPoint.description + (call.isPreview ? " (preview)" : "")
        let padded = name.padding(toLength: 22)
        let latency = Timestamp.duration(output.timing.totalSeconds)
        if let failure = output.failure {
            lines.append("\(indent)\(padded)FAILED  \(latency)  [\(failure.code)]")
            lines.append("\(indent)  error: \(failure.message)")
            lines.append("\(indent)  hint:  \(failure.hint)")
        } else if let result = output.result {
            var summary = "\(result.entries.count) entr\(result.entries.count == 1 ? "y" : "ies")"
            if let policy = result.policy {
                summary += ", policy \(policyText(policy, now: call.now, entries: result.entries))"
            }
            lines.append("\(indent)\(padded)ok      \(latency)  \(summary)")
            for entry in result.entries.prefix(verbose ? result.entries.count : 12) {
                let when = Timestamp.relative(entry.date, to: call.now).padding(toLength: 12)
                let relevance =
                    entry.relevance.map {
                        "relevance \(trim($0.score))\($0.duration > 0 ? " for \(Timestamp.duration($0.duration))" : "")  "
                    } ?? ""
                let content = shortContent(entry.contentJSON)
                lines.append("\(indent)    \(when)\(relevance)\(content)")
            }
            if !verbose && result.entries.count > 12 {
                lines.append("\(indent)    … \(result.entries.count - 12) more (--verbose shows all)")
            }
            for warning in JSONReport.warnings(output) { lines.append("\(indent)  warning: \(warning)") }
        }
        if verbose {
            var timing = "total \(latency)"
            if let load = output.timing.loadSeconds { timing += ", load \(Timestamp.duration(load))" }
            if let provider = output.timing.providerSeconds { timing += ", provider \(Timestamp.duration(provider))" }
            lines.append("\(indent)  timing: \(timing); child \(output.childExit)")
            lines.append(contentsOf: logLines(output.log, indent: indent + "  "))
        }
        return lines.joined(separator: "\n")
    }

    /// The content as compact JSON, without the `date` member the SDKs add
    /// (the entry's date is already on the line), cut at 80 characters.
    static func shortContent(_ json: String) -> String {
        guard let value = try? JSONValue.parse(json) else { return json }
        if case .object(let members) = value {
            return JSONValue.object(members.filter { $0.0 != "date" }).compactText(limit: 80)
        }
        return value.compactText(limit: 80)
    }

    static func logLines(_ log: CapturedLog, indent: String) -> [String] {
        rawLogLines(log, indent: indent).map(TerminalText.escaped)
    }

    private static func rawLogLines(_ log: CapturedLog, indent: String) -> [String] {
        var lines: [String] = []
        for (name, text) in [("stdout", log.stdout), ("stderr", log.stderr)] where !text.isEmpty {
            for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast(
                text.hasSuffix("\n") ? 1 : 0)
            {
                lines.append("\(indent)\(name) | \(line)")
            }
        }
        if log.droppedBytes > 0 { lines.append("\(indent)(\(log.droppedBytes) more bytes of output not kept)") }
        return lines
    }

    static func policyText(_ policy: ReloadPolicy, now: Double, entries: [EntryRecord]) -> String {
        switch policy {
        case .atEnd:
            guard let last = entries.last else { return "atEnd" }
            return "atEnd (next timeline \(Timestamp.relative(last.date, to: now)))"
        case .after(let date):
            return "after(\(Timestamp.iso8601(date))) (\(Timestamp.relative(date, to: now)))"
        case .never:
            return "never (only an explicit reload asks again)"
        }
    }

    static func trim(_ value: Double) -> String {
        value.rounded() == value ? String(Int(value)) : String(value)
    }

    static func failure(_ failure: PluginFailure) -> String {
        TerminalText.escaped(rawFailure(failure))
    }

    private static func rawFailure(_ failure: PluginFailure) -> String {
        "error: \(failure.message)\nhint:  \(failure.hint)"
    }
}

extension String {
    func padding(toLength length: Int) -> String {
        count >= length ? self + " " : self + String(repeating: " ", count: length - count)
    }
}
