import ArgumentParser
import WidgetHostModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A duration given on the command line: `250ms`, `2s`, `1.5s`, `100us`, `1m`;
/// above 0 and at most 10 years (``Bounds/isDuration(_:)``).
struct DurationArgument: ExpressibleByArgument, Sendable {
    var seconds: Double

    init?(argument: String) {
        let units: [(String, Double)] = [("ms", 1e-3), ("us", 1e-6), ("µs", 1e-6), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, scale) in units where argument.hasSuffix(suffix) {
            guard let value = Double(argument.dropLast(suffix.count)), value > 0, Bounds.isDuration(value * scale)
            else { return nil }
            seconds = value * scale
            return
        }
        guard let value = Double(argument), value > 0, Bounds.isDuration(value) else { return nil }
        seconds = value
    }

    static var defaultCompletionKind: CompletionKind { .default }

    /// How `--help` shows a default: `5.0s`, not the struct.
    var defaultValueDescription: String { Timestamp.duration(seconds) }
}

/// A point in time: ISO 8601 (`2026-11-21T17:00:00Z`), seconds since the
/// epoch, or an offset from now (`+1h`, `-30m`, `+2d`); between 1970 and
/// 9999 (``Bounds/isTime(_:)``, the range a plugin's entry dates must be in).
struct TimeArgument: ExpressibleByArgument, Sendable {
    var seconds: Double

    init?(argument: String) {
        guard let seconds = Self.seconds(argument), Bounds.isTime(seconds) else { return nil }
        self.seconds = seconds
    }

    private static func seconds(_ argument: String) -> Double? {
        if let sign = argument.first, sign == "+" || sign == "-",
            let offset = DurationText.parse(String(argument.dropFirst()))
        {
            return wallClockNow() + (sign == "+" ? offset : -offset)
        }
        if let value = Double(argument) { return value }
        return (try? Date.ISO8601FormatStyle().parse(argument))?.timeIntervalSince1970
    }
}

extension WidgetFamily: ExpressibleByArgument {
    public init?(argument: String) { self.init(name: argument) }
    public static var allValueStrings: [String] { allCases.map(\.name) }
    /// How `--help` shows a default: `systemSmall`, not its raw value.
    public var defaultValueDescription: String { name }
}

/// `--family` of load and the call commands: a family by its WidgetKit name.
/// (A wrapper: ArgumentParser shows the default of a `CaseIterable &
/// RawRepresentable` type by its raw value, `default: 1`.)
struct FamilyArgument: ExpressibleByArgument, Sendable {
    var family: WidgetFamily

    init(_ family: WidgetFamily) { self.family = family }

    init?(argument: String) {
        guard let family = WidgetFamily(name: argument) else { return nil }
        self.family = family
    }

    static var allValueStrings: [String] { WidgetFamily.allCases.map(\.name) }
    static var defaultCompletionKind: CompletionKind { .list(allValueStrings) }
    var defaultValueDescription: String { family.name }
}

extension EntryPoint: ExpressibleByArgument {
    public init?(argument: String) { self.init(name: argument) }
    public static var allValueStrings: [String] { allCases.map(\.description) }
}

/// Parses `--config '{"character":"Panda"}'` into member name → JSON text.
func parseConfiguration(_ text: String?) throws -> [String: String] {
    guard let text else { return [:] }
    let value: JSONValue
    do {
        value = try JSONValue.parse(text)
    } catch {
        throw UsageError(
            "--config is not JSON (\(error.explanation)); pass an object such as '{\"character\":\"Power Panda\"}'")
    }
    guard let members = value.objectMembers else {
        throw UsageError(
            "--config must be a JSON object, got a JSON \(value.typeName); pass an object such as '{\"character\":\"Power Panda\"}'"
        )
    }
    var result: [String: String] = [:]
    for (name, member) in members { result[name] = member.compactText(limit: .max) }
    return result
}

/// The current wall-clock time in seconds since the epoch.
func wallClockNow() -> Double { Date().timeIntervalSince1970 }
