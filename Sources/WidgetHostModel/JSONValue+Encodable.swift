/// JSON values are written back as they were read (objects with their
/// members sorted by name), so that protocol types can carry a JSON object
/// as an object: an instance's configuration, an entry's content.
extension JSONValue: Encodable {
    private struct MemberKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .number(let value):
            var container = encoder.singleValueContainer()
            // Whole numbers as integers (`3`, not `3.0`), as `compactText` writes them.
            if let exact = Bounds.exactInt(value) {
                try container.encode(exact)
            } else {
                try container.encode(value)
            }
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .array(let items):
            var container = encoder.unkeyedContainer()
            for item in items { try container.encode(item) }
        case .object(let members):
            var container = encoder.container(keyedBy: MemberKey.self)
            for (name, value) in members { try container.encode(value, forKey: MemberKey(stringValue: name)) }
        }
    }
}
