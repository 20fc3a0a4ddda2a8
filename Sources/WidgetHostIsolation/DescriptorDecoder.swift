import CWidgetHostSupport
import WidgetHostABI
import WidgetHostModel

/// Decodes a LOADED message into a `PluginDescription` and checks what the
/// runner cannot: unique kind ids, known family bits, parameter names,
/// types and defaults.
enum DescriptorDecoder {
    static func decode(_ reader: inout WireReader, path: String) -> Result<PluginDescription, PluginFailure> {
        let abiVersion = reader.u32()
        let descriptorSize = reader.u32()
        let id = reader.string()
        let name = reader.string()
        let version = reader.string()
        let vendor = reader.string()
        let sdkVersion = reader.string()
        let loadNanoseconds = reader.u64()
        let threads = reader.u32()
        let kindCount = reader.u32()
        // The runner checked the plugin's counts; a LOADED that breaks them
        // was not written by the runner (a plugin writing on the channel).
        func forged(_ detail: String) -> Result<PluginDescription, PluginFailure> {
            .failure(PluginFailure(plugin: path, reason: .protocolViolation("LOADED \(detail)")))
        }
        guard reader.malformed || (1...256).contains(kindCount) else {
            return forged("declares \(kindCount) kinds; the runner sends 1 to 256")
        }
        var kinds: [KindDescription] = []
        for _ in 0..<min(kindCount, 256) where !reader.malformed {
            let kindID = reader.string()
            let displayName = reader.string()
            let summary = reader.string()
            let families = reader.u32()
            let flags = reader.u32()
            let entryBits = reader.u32()
            let parameterCount = reader.u32()
            guard reader.malformed || parameterCount <= 64 else {
                return forged("declares \(parameterCount) parameters for a kind; the runner sends at most 64")
            }
            var parameters: [ParameterDescription] = []
            for _ in 0..<min(parameterCount, 64) where !reader.malformed {
                let parameterName = reader.string()
                let rawType = reader.u32()
                let hasDefault = reader.u32() != 0
                let defaultJSON = reader.string()
                let parameterSummary = reader.string()
                let title = reader.string()
                let parameterFlags = reader.u32()
                let choiceCount = reader.u32()
                guard reader.malformed || choiceCount <= 256 else {
                    return forged("declares \(choiceCount) choices for a parameter; the runner sends at most 256")
                }
                var choices: [ParameterChoice] = []
                for _ in 0..<min(choiceCount, 256) where !reader.malformed {
                    let value = reader.string()
                    let choiceTitle = reader.string()
                    choices.append(ParameterChoice(value: value, title: choiceTitle.isEmpty ? nil : choiceTitle))
                }
                parameters.append(
                    ParameterDescription(
                        name: parameterName, type: ParameterType(rawValue: rawType), rawType: rawType,
                        defaultJSON: hasDefault ? defaultJSON : nil, summary: parameterSummary,
                        title: title.isEmpty ? nil : title, choices: choices,
                        isOptional: parameterFlags & UInt32(WH_PARAMETER_OPTIONAL.rawValue) != 0))
            }
            let entryPoints = EntryPoint.allCases.filter { entryBits & (1 << ($0.rawValue - 1)) != 0 }
            var kind = KindDescription(
                id: kindID, displayName: displayName, summary: summary, familyBits: families,
                needsNetwork: flags & UInt32(WH_KIND_NEEDS_NETWORK.rawValue) != 0,
                entryPoints: entryPoints, parameters: parameters,
                isDeterministic: flags & UInt32(WH_KIND_DETERMINISTIC.rawValue) != 0)
            kind.needsFreshProcess = flags & UInt32(WH_KIND_FRESH_PROCESS.rawValue) != 0
            kind.acceptsPush = flags & UInt32(WH_KIND_PUSH.rawValue) != 0
            kinds.append(kind)
        }
        let hasWarmUp = reader.u32() != 0
        guard !reader.malformed else { return forged("is truncated") }
        let templates: [TemplateDescription]
        switch LoadedSections.decode(&reader, kinds: kinds) {
        case .success(let decoded): templates = decoded
        case .failure(let reason): return .failure(PluginFailure(plugin: path, reason: reason))
        }
        var plugin = PluginDescription(
            path: path, id: id, name: name, version: version, vendor: vendor, sdkVersion: sdkVersion,
            abiVersion: abiVersion, descriptorSize: descriptorSize,
            loadSeconds: Double(loadNanoseconds) / 1e9, threadsAfterLoad: threads, hasWarmUp: hasWarmUp,
            kinds: kinds)
        plugin.templates = templates
        if let problem = check(plugin) {
            return .failure(PluginFailure(plugin: path, reason: problem))
        }
        return .success(plugin)
    }

    static func invalid(_ field: String, _ expected: String, _ found: String, _ detail: String) -> PluginFailure.Reason
    {
        .invalidDescriptor(field: field, expected: expected, found: found, detail: detail)
    }

    /// The first semantic problem of a descriptor, if any.
    static func check(_ plugin: PluginDescription) -> PluginFailure.Reason? {
        if plugin.id.isEmpty {
            return invalid(
                "id", "a reverse-DNS id such as \"com.example.weather\"", "an empty string or NULL",
                "every plugin needs an id")
        }
        var seen: Set<String> = []
        for (index, kind) in plugin.kinds.enumerated() {
            let at = "kinds[\(index)]"
            if !seen.insert(kind.id).inserted {
                return invalid(
                    "\(at).id", "a kind id unique in the plugin", "\"\(kind.id)\" a second time",
                    "two kinds share an id")
            }
            if kind.familyBits == 0 {
                return invalid(
                    "\(at).families", "at least one WH_FAMILY_* bit", "0", "kind \(kind.id) supports no family")
            }
            if kind.familyBits & ~WidgetFamily.allBits != 0 {
                return invalid(
                    "\(at).families", "only bits of WH_FAMILY_ALL_V1 (0x7f)",
                    "0x" + String(kind.familyBits, radix: 16), "kind \(kind.id) sets family bits ABI v1 does not define"
                )
            }
            var names: Set<String> = []
            for (parameterIndex, parameter) in kind.parameters.enumerated() {
                let field = "\(at).parameters[\(parameterIndex)]"
                if !isIdentifier(parameter.name) {
                    return invalid(
                        "\(field).name", "an identifier ([A-Za-z_][A-Za-z0-9_]*)", "\"\(parameter.name)\"",
                        "kind \(kind.id)")
                }
                if !names.insert(parameter.name).inserted {
                    return invalid(
                        "\(field).name", "a name unique in the kind", "\"\(parameter.name)\" twice", "kind \(kind.id)")
                }
                guard let type = parameter.type else {
                    return invalid(
                        "\(field).type", "WH_PARAM_STRING, _INTEGER, _NUMBER or _BOOLEAN (1-4)", "\(parameter.rawType)",
                        "kind \(kind.id), parameter \(parameter.name)")
                }
                if !parameter.choices.isEmpty {
                    if type != .string {
                        return invalid(
                            "\(field).choices", "no choices (only WH_PARAM_STRING parameters have them)",
                            "\(parameter.choices.count) choices on a \(type) parameter",
                            "kind \(kind.id), parameter \(parameter.name)")
                    }
                    var values: Set<String> = []
                    for choice in parameter.choices where !values.insert(choice.value).inserted {
                        return invalid(
                            "\(field).choices", "distinct values", "\"\(choice.value)\" twice",
                            "kind \(kind.id), parameter \(parameter.name)")
                    }
                }
                if let defaultJSON = parameter.defaultJSON {
                    if let problem = ConfigurationBuilder.check(json: defaultJSON, against: parameter) {
                        return invalid(
                            "\(field).default_json",
                            parameter.choices.isEmpty ? "a JSON \(type)" : "one of the parameter's choices",
                            "\(defaultJSON)", "kind \(kind.id), parameter \(parameter.name): \(problem)")
                    }
                }
            }
        }
        return nil
    }

    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic)
        else { return false }
        return name.unicodeScalars.allSatisfy {
            $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)))
        }
    }
}

/// Builds an instance's configuration JSON from the kind's parameters.
public enum ConfigurationBuilder {
    /// The configuration object: every declared default, with `overrides`
    /// (member name to JSON text) applied. Fails on an unknown parameter, a
    /// value of the wrong type, or a required parameter with no value.
    public static func build(kind: KindDescription, overrides: [String: String]) -> Result<String, ConfigurationProblem>
    {
        for name in overrides.keys.sorted() where !kind.parameters.contains(where: { $0.name == name }) {
            let known = kind.parameters.map(\.name)
            return .failure(
                ConfigurationProblem(
                    "kind \(kind.id) has no parameter \"\(name)\"; it has: \(known.isEmpty ? "none" : known.joined(separator: ", "))"
                ))
        }
        for parameter in kind.parameters {
            guard let value = overrides[parameter.name] ?? parameter.defaultJSON else {
                if parameter.isOptional { continue }
                return .failure(
                    ConfigurationProblem(
                        "parameter \"\(parameter.name)\" of kind \(kind.id) is required and has no default"))
            }
            if let type = parameter.type, let problem = check(json: value, against: parameter) {
                let expected =
                    parameter.choices.isEmpty
                    ? "a \(type)" : "one of " + parameter.choices.map { jsonQuoted($0.value) }.joined(separator: ", ")
                return .failure(
                    ConfigurationProblem(
                        "parameter \"\(parameter.name)\" (\(parameter.label)) of kind \(kind.id): expected \(expected), got \(value) (\(problem))"
                    ))
            }
        }
        return .success(kind.configurationJSON(overrides: overrides))
    }

    /// Why `json` is not a value of `parameter` (its type and, when it has
    /// choices, one of them), or nil if it is.
    static func check(json: String, against parameter: ParameterDescription) -> String? {
        guard let type = parameter.type else { return nil }
        if let problem = check(json: json, against: type) { return problem }
        guard !parameter.choices.isEmpty else { return nil }
        guard case .string(let text)? = try? JSONValue.parse(json) else { return nil }
        return parameter.choices.contains(where: { $0.value == text })
            ? nil : "not one of its \(parameter.choices.count) choices"
    }

    private static func jsonQuoted(_ text: String) -> String { JSONValue.string(text).compactText(limit: .max) }

    /// Why `json` is not a value of `type`, or nil if it is.
    static func check(json: String, against type: ParameterType) -> String? {
        let value: JSONValue
        do { value = try JSONValue.parse(json) } catch { return "not JSON: \(error.explanation)" }
        switch (type, value) {
        case (.string, .string), (.boolean, .bool), (.number, .number): return nil
        case (.integer, .number(let number)):
            return number.rounded() == number ? nil : "\(number) is not an integer"
        default: return "a JSON \(value.typeName)"
        }
    }
}

/// Why an instance configuration does not fit its kind.
public struct ConfigurationProblem: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
