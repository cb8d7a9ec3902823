/// A parsed JSON value that keeps what `JSONSerialization` loses: integers apart from doubles,
/// booleans apart from numbers, and object members in their order.
public enum ParseJSONValue: Equatable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent that fits in 64 bits.
    case int(Int64)
    /// Any other finite number.
    case double(Double)
    /// A string (always valid Unicode).
    case string(String)
    /// An array.
    case array([ParseJSONValue])
    /// An object, members in document order (keys are unique: the parser rejects duplicates).
    case object(ParseJSONObject)

    /// A short name of the value's JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int, .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// The object, if this is one.
    public var objectValue: ParseJSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }
}

/// A JSON object's members in document order, with lookup by key.
public struct ParseJSONObject: Equatable, Sendable {
    /// One `"key": value` member.
    public struct Member: Equatable, Sendable {
        /// The member's key.
        public var key: String
        /// The member's value.
        public var value: ParseJSONValue
    }

    /// The members in document order.
    public var members: [Member]

    /// An object with the given members.
    public init(_ members: [Member] = []) {
        self.members = members
    }

    /// The value for `key`, or nil when absent.
    public subscript(key: String) -> ParseJSONValue? {
        for member in members where member.key == key { return member.value }
        return nil
    }

    /// The keys in document order.
    public var keys: [String] { members.map(\.key) }

    /// Whether the object has no members.
    public var isEmpty: Bool { members.isEmpty }
}
