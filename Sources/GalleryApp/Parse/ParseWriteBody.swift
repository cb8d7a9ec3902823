/// A validated POST (create) or PUT (update) body for a class: typed assignments to writable
/// fields. Error codes, following Parse Server where it has one:
/// - body not a JSON object, bad syntax, invalid UTF-8, `\u0000`, lone surrogates → 107
/// - nesting deeper than the limit → 102
/// - `objectId`/`createdAt`/`updatedAt`, unknown fields, and read-only fields → 105
/// - a value of the wrong type (including a Pointer to the wrong class), or an unsupported
///   `__op` → 111 (message "schema mismatch for Class.field; expected … but got …")
/// - a malformed Pointer objectId → 106
/// - right type but invalid value (Gallery `name` empty or over 200 characters after trimming,
///   title/tag too long, negative position) or a required field missing on create → 142
public struct ParseWriteBody: Sendable {
    /// Whether the body creates or updates an object.
    public enum Mode: Sendable {
        /// `POST /classes/<Class>`.
        case create
        /// `PUT /classes/<Class>/<objectId>`.
        case update
    }

    /// A value assigned to a field.
    public enum Value: Equatable, Sendable {
        /// A String field's new value (Gallery names already trimmed).
        case string(String)
        /// A Number field's new value.
        case int(Int64)
        /// An Array field's new value (duplicates removed, order kept).
        case stringArray([String])
        /// A Pointer field's target objectId (class already checked).
        case pointer(String)
        /// A File field's file name (as returned by `POST /files/<name>`).
        case file(String)
        /// `{"__op":"Delete"}` on `deletedAt`: restore the object from the trash.
        case restore
    }

    /// One field assignment.
    public struct Assignment: Equatable, Sendable {
        /// The Parse field name.
        public let field: String
        /// The value.
        public let value: Value
    }

    /// The class written.
    public let schema: ParseClassSchema
    /// Create or update.
    public let mode: Mode
    /// The assignments in body order.
    public let assignments: [Assignment]

    /// The value assigned to `field`, or nil.
    public subscript(field: String) -> Value? {
        assignments.first { $0.field == field }?.value
    }

    /// Whether the body restores the object from the trash.
    public var restores: Bool { self["deletedAt"] == .restore }

    /// Parses and validates a request body.
    public static func parse(
        _ body: [UInt8], schema: ParseClassSchema, mode: Mode, limits: ParseLimits = ParseLimits()
    ) throws -> ParseWriteBody {
        guard body.count <= limits.maxBodyBytes else {
            throw ParseError.invalidJSON("request body is larger than \(limits.maxBodyBytes) bytes")
        }
        guard case .object(let object) = try ParseJSONParser.parse(body, maxDepth: limits.maxJSONDepth) else {
            throw ParseError.invalidJSON("request body must be a JSON object")
        }
        var assignments: [Assignment] = []
        for member in object.members {
            let key = member.key
            if key == "objectId" || key == "createdAt" || key == "updatedAt" {
                throw ParseError.invalidKeyName("\(key) is an invalid field name.")
            }
            guard let field = schema.field(named: key) else {
                throw ParseError.invalidKeyName("invalid field name: \(ParseWhereParser.quoted(key)) for class \(schema.className)")
            }
            let value = try parseValue(field, member.value, schema: schema, mode: mode, limits: limits)
            assignments.append(Assignment(field: field.name, value: value))
        }
        if mode == .create {
            for field in schema.fields where field.isRequiredOnCreate && !assignments.contains(where: { $0.field == field.name }) {
                throw ParseError.validationError("\(field.name) is required.")
            }
        }
        return ParseWriteBody(schema: schema, mode: mode, assignments: assignments)
    }

    private static func parseValue(
        _ field: ParseField, _ json: ParseJSONValue, schema: ParseClassSchema, mode: Mode, limits: ParseLimits
    ) throws -> Value {
        func mismatch() -> ParseError {
            ParseError.incorrectType(
                "schema mismatch for \(schema.className).\(field.name); expected \(field.type.parseName) but got \(describe(json))")
        }
        if case .object(let object) = json, let op = object["__op"] {
            guard field.isRestorable, mode == .update, op == .string("Delete"), object.members.count == 1 else {
                if !field.isRestorable && !(mode == .create ? field.isCreatable : field.isUpdatable) {
                    throw ParseError.invalidKeyName("\(field.name) is read-only.")
                }
                throw ParseError.incorrectType("unsupported operation on \(schema.className).\(field.name)")
            }
            return .restore
        }
        if field.isRestorable {
            throw ParseError.incorrectType(
                "\(field.name) can only be {\"__op\":\"Delete\"} (restore); DELETE the object to move it to the trash")
        }
        guard mode == .create ? field.isCreatable : field.isUpdatable else {
            throw ParseError.invalidKeyName("\(field.name) is read-only.")
        }
        switch field.type {
        case .string:
            guard case .string(var text) = json else { throw mismatch() }
            if schema.className == "Gallery" && field.name == "name" {
                text = text.trimmingWhitespace()
                let length = text.count
                guard length >= 1, length <= limits.maxGalleryNameLength else {
                    throw ParseError.validationError("name must be 1 to \(limits.maxGalleryNameLength) characters.")
                }
            } else if field.name == "title" {
                guard text.count <= limits.maxTitleLength else {
                    throw ParseError.validationError("title must be at most \(limits.maxTitleLength) characters.")
                }
            }
            return .string(text)
        case .int:
            let number: Int64
            switch json {
            case .int(let int): number = int
            case .double(let double) where double == double.rounded() && abs(double) < 9.0e18: number = Int64(double)
            default: throw mismatch()
            }
            if field.name == "position" {
                guard number >= 0, number <= Int64(limits.maxPosition) else {
                    throw ParseError.validationError("position must be between 0 and \(limits.maxPosition).")
                }
            }
            return .int(number)
        case .stringArray:
            guard case .array(let elements) = json else { throw mismatch() }
            guard elements.count <= limits.maxTagCount else {
                throw ParseError.validationError("\(field.name) may hold at most \(limits.maxTagCount) values.")
            }
            var strings: [String] = []
            var seen: Set<String> = []
            for element in elements {
                guard case .string(let text) = element else { throw mismatch() }
                let count = text.count
                guard count >= 1, count <= limits.maxTagLength else {
                    throw ParseError.validationError("each of \(field.name) must be 1 to \(limits.maxTagLength) characters.")
                }
                if seen.insert(text).inserted { strings.append(text) }
            }
            return .stringArray(strings)
        case .pointer(let className):
            guard case .object(let object) = json, object["__type"] == .string("Pointer") else { throw mismatch() }
            guard case .string(let pointerClass)? = object["className"], pointerClass == className else { throw mismatch() }
            guard case .string(let objectId)? = object["objectId"], ParseObjectID.isPlausible(objectId) else {
                throw ParseError.invalidPointer("invalid Pointer objectId for \(schema.className).\(field.name)")
            }
            return .pointer(objectId)
        case .file:
            guard case .object(let object) = json, object["__type"] == .string("File"),
                case .string(let name)? = object["name"]
            else { throw mismatch() }
            guard !name.isEmpty, name.utf8.count <= 255, !name.contains("/"), !name.hasPrefix(".") else {
                throw ParseError.validationError("invalid file name for \(schema.className).\(field.name).")
            }
            return .file(name)
        case .double, .date, .bool:
            throw mismatch()  // no writable field of these types
        }
    }

    private static func describe(_ value: ParseJSONValue) -> String {
        switch value {
        case .object(let object):
            if case .string(let type)? = object["__type"] {
                if type == "Pointer", case .string(let className)? = object["className"] {
                    return "Pointer<\(ParseWhereParser.quoted(className).dropFirst().dropLast())>"
                }
                return ParseWhereParser.quoted(type)
            }
            return "Object"
        case .array: return "Array"
        case .string: return "String"
        case .int, .double: return "Number"
        case .bool: return "Boolean"
        case .null: return "null"
        }
    }
}

extension String {
    /// The string without leading and trailing whitespace and newlines (Unicode-aware).
    fileprivate func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[start...end])
    }
}
