#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Exports an entry that is not `Encodable` as JSON, by reflection (`Mirror`)
/// of its stored properties (see ``TimelineEntry`` for the rules).
///
/// Keys are sorted, as `CompletionSink`'s JSONEncoder sorts them, so an
/// entry made `Codable` later keeps the same JSON for the same properties.
/// Nothing here throws or traps: what cannot be represented is written as
/// its description, nesting deeper than ``maximumDepth`` too, and a class
/// reached again through its own properties as `"<cycle: Type>"`.
enum ReflectionEncoder {
    /// The deepest nesting written as JSON containers.
    static let maximumDepth = 32

    /// The JSON object of `entry`.
    static func encode(_ entry: Any) -> [UInt8] {
        var output = ""
        var visiting: Set<ObjectIdentifier> = []
        write(entry, into: &output, depth: 0, visiting: &visiting, topLevel: true)
        return Array(output.utf8)
    }

    /// The line written to stderr for every call that reflects an entry;
    /// `widgethost load` shows it as a warning.
    static func warning(for type: Any.Type) -> String {
        "WidgetHostKit warning: \(type) is not Encodable, so its stored properties were exported by reflection; "
            + "make it Codable (and use CodingKeys or encode(to:)) to choose its JSON (docs/swift-sdk.md, \"Entries\")"
    }

    /// Writes ``warning(for:)`` to stderr.
    static func warn(for type: Any.Type) {
        let line = warning(for: type) + "\n"
        _ = line.withCString { Glibc.write(2, $0, strlen($0)) }
    }

    private static func write(
        _ value: Any, into output: inout String, depth: Int, visiting: inout Set<ObjectIdentifier>,
        topLevel: Bool = false
    ) {
        if let scalar = scalarJSON(value) {
            output += scalar
            return
        }
        if let error = value as? any Error {
            output += jsonStringLiteral(error.localizedDescription)
            return
        }
        if !topLevel, let encodable = value as? any Encodable, let bytes = try? CompletionSink.encode(entry: encodable)
        {
            output += String(decoding: bytes, as: UTF8.self)
            return
        }
        let mirror = Mirror(reflecting: value)
        if depth >= maximumDepth {
            output += jsonStringLiteral(String(describing: value))
            return
        }
        var identity: ObjectIdentifier?
        if mirror.displayStyle == .class {
            let object = ObjectIdentifier(value as AnyObject)
            if visiting.contains(object) {
                output += jsonStringLiteral("<cycle: \(type(of: value))>")
                return
            }
            visiting.insert(object)
            identity = object
        }
        defer { if let identity { visiting.remove(identity) } }
        switch mirror.displayStyle {
        case .optional:
            if let wrapped = mirror.children.first?.value {
                write(wrapped, into: &output, depth: depth, visiting: &visiting, topLevel: topLevel)
            } else {
                output += topLevel ? "{}" : "null"
            }
        case .collection, .set:
            output += "["
            for (index, child) in mirror.children.enumerated() {
                if index > 0 { output += "," }
                write(child.value, into: &output, depth: depth + 1, visiting: &visiting)
            }
            output += "]"
        case .dictionary:
            var members: [(String, Any)] = []
            for child in mirror.children {
                let pair = Array(Mirror(reflecting: child.value).children)
                guard pair.count == 2 else { continue }
                let key = pair[0].value as? String ?? String(describing: pair[0].value)
                members.append((key, pair[1].value))
            }
            writeObject(members, into: &output, depth: depth, visiting: &visiting)
        case .enum:
            if let payload = mirror.children.first {
                let label = payload.label ?? String(describing: value)
                writeObject([(label, payload.value)], into: &output, depth: depth, visiting: &visiting)
            } else {
                let name = jsonStringLiteral(String(describing: value))
                output += topLevel ? "{\"case\":\(name)}" : name
            }
        case .tuple:
            let children = Array(mirror.children)
            if children.allSatisfy({ $0.label?.hasPrefix(".") ?? true }) {
                output += "["
                for (index, child) in children.enumerated() {
                    if index > 0 { output += "," }
                    write(child.value, into: &output, depth: depth + 1, visiting: &visiting)
                }
                output += "]"
            } else {
                writeObject(
                    children.map { ($0.label ?? "", $0.value) }, into: &output, depth: depth, visiting: &visiting)
            }
        case .struct, .class:
            writeObject(storedProperties(mirror), into: &output, depth: depth, visiting: &visiting)
        default:
            if mirror.children.isEmpty {
                let text = jsonStringLiteral(String(describing: value))
                output += topLevel ? "{\"value\":\(text)}" : text
            } else {
                writeObject(storedProperties(mirror), into: &output, depth: depth, visiting: &visiting)
            }
        }
    }

    /// The labeled children of a struct or class, superclasses' first; a
    /// later property of the same name wins.
    private static func storedProperties(_ mirror: Mirror) -> [(String, Any)] {
        var levels: [[(String, Any)]] = []
        var current: Mirror? = mirror
        while let level = current {
            levels.append(level.children.compactMap { child in child.label.map { ($0, child.value) } })
            current = level.superclassMirror
        }
        return levels.reversed().flatMap { $0 }
    }

    private static func writeObject(
        _ members: [(String, Any)], into output: inout String, depth: Int, visiting: inout Set<ObjectIdentifier>
    ) {
        var unique: [String: Any] = [:]
        for (key, value) in members {
            // An intent's `@Parameter var city` is stored as `_city`: export `city` and its value.
            if let parameter = value as? any _AnyIntentParameter {
                unique[key.hasPrefix("_") ? String(key.dropFirst()) : key] = parameter._reflectedValue
            } else {
                unique[key] = value
            }
        }
        output += "{"
        for (index, key) in unique.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
            if index > 0 { output += "," }
            output += jsonStringLiteral(key) + ":"
            write(unique[key]!, into: &output, depth: depth + 1, visiting: &visiting)
        }
        output += "}"
    }

    /// The JSON of a value of a scalar type, or `nil` for other types.
    private static func scalarJSON(_ value: Any) -> String? {
        switch value {
        case let text as String: return jsonStringLiteral(text)
        case let text as Substring: return jsonStringLiteral(String(text))
        case let character as Character: return jsonStringLiteral(String(character))
        case let flag as Bool: return flag ? "true" : "false"
        case let number as Int: return String(number)
        case let number as Int8: return String(number)
        case let number as Int16: return String(number)
        case let number as Int32: return String(number)
        case let number as Int64: return String(number)
        case let number as UInt: return String(number)
        case let number as UInt8: return String(number)
        case let number as UInt16: return String(number)
        case let number as UInt32: return String(number)
        case let number as UInt64: return String(number)
        case let number as Double: return number.isFinite ? jsonDouble(number) : "null"
        case let number as Float: return number.isFinite ? jsonDouble(Double(number)) : "null"
        case let number as CGFloat: return number.isFinite ? jsonDouble(Double(number)) : "null"
        case let number as Decimal: return number.isFinite ? number.description : "null"
        case let date as Date: return jsonStringLiteral(date.formatted(.iso8601))
        case let url as URL: return jsonStringLiteral(url.absoluteString)
        case let uuid as UUID: return jsonStringLiteral(uuid.uuidString)
        case let data as Data: return jsonStringLiteral(data.base64EncodedString())
        default: return nil
        }
    }

    /// A finite double as JSONEncoder writes it (`1`, `0.5`, `1e-07`).
    private static func jsonDouble(_ number: Double) -> String {
        var text = number.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }
}
