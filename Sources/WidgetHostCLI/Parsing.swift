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

/// `--locale`: a BCP 47 tag (`en-US`, `zh-Hans-CN`, `de-DE-u-co-phonebk`)
/// or a POSIX locale name (`en_US.UTF-8`, `sr_RS@latin`, `C`): a letter,
/// then letters and digits in parts joined by `-` or `_`, optionally a
/// `.codeset` and a `@modifier`; at most ``maximumLength`` bytes. The
/// plugin gets it as given; anything else (a space, a quote, a control
/// character, 10 KB) is a usage error.
enum LocaleCheck {
    /// The longest locale accepted, in bytes.
    static let maximumLength = 64

    /// Whether `locale` has that form.
    static func isValid(_ locale: String) -> Bool {
        let bytes = Array(locale.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumLength, isLetter(bytes[0]) else { return false }
        var modifier: ArraySlice<UInt8> = []
        var rest = bytes[...]
        if let at = rest.firstIndex(of: UInt8(ascii: "@")) {
            modifier = rest[(at + 1)...]
            rest = rest[..<at]
            guard !modifier.isEmpty, modifier.allSatisfy(isAlphanumeric) else { return false }
        }
        if let dot = rest.firstIndex(of: UInt8(ascii: ".")) {
            let codeset = rest[(dot + 1)...]
            rest = rest[..<dot]
            guard !codeset.isEmpty, codeset.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "-") }) else {
                return false
            }
        }
        // Parts joined by single `-` or `_`, none empty.
        let parts = rest.split(
            omittingEmptySubsequences: false, whereSeparator: { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") })
        return parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(isAlphanumeric) }
    }

    /// Throws a usage error (exit status 2) naming `flag` unless `locale` is valid.
    static func validate(_ locale: String, flag: String = "--locale") throws {
        guard !isValid(locale) else { return }
        let shown = locale.utf8.count > maximumLength ? "\(locale.utf8.count) bytes" : JSONValue.quote(locale)
        throw ValidationError(
            "\(flag) must be a locale such as en-US, zh-Hans-CN or en_US.UTF-8 (letters and digits in parts joined by - or _, then optionally .codeset and @modifier; at most \(maximumLength) bytes), got \(TerminalText.escaped(shown))"
        )
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

/// The current wall-clock time in seconds since the epoch.
func wallClockNow() -> Double { Date().timeIntervalSince1970 }
