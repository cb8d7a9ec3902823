/// A validated POST (create) or PUT (update) body for a class: typed assignments to writable
/// fields. Error codes, following Parse Server where it has one:
/// - body not a JSON object, bad syntax, invalid UTF-8, `\u0000`, lone surrogates → 107
/// - nesting deeper than the limit → 102
/// - `objectId`/`createdAt`/`updatedAt`, unknown fields, and read-only fields → 105; on update a
///   read-only field sent with a value of its type (what `save()` of a fetched object sends) is
///   an `Expectation` instead: a no-op while the field still holds that value, 105 otherwise
/// - `{"__op":"Add"|"AddUnique"|"Remove","objects":[…]}` on an Array field: applied atomically in
///   SQL on update (tags stay free of duplicates, so Add adds only what is missing, as AddUnique);
///   on create Add/AddUnique set the array and Remove leaves it empty
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
        /// An ACL, validated and normalized (`ParseACL`).
        case acl(ParseACL)
        /// `Add`/`AddUnique`/`Remove` on an Array field (update only; duplicates removed, order kept).
        case arrayOperation(ArrayOperation, [String])
    }

    /// An atomic operation on an Array field.
    public enum ArrayOperation: String, Equatable, Sendable {
        /// `Add` and `AddUnique`: append the objects the array does not hold yet.
        case addUnique
        /// `Remove`: drop every occurrence of the objects.
        case remove
    }

    /// A read-only field sent back with a value: the update goes ahead only while the field holds
    /// exactly this value (compared by the statement that locks the row), otherwise 105.
    public struct Expectation: Equatable, Sendable {
        /// The Parse field name.
        public let field: String
        /// The value the client holds: `.null`, or the field's value in SQL terms (a File's
        /// name, a Pointer's objectId, a Date as a timestamp).
        public let value: SQLValue
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
    /// The read-only fields sent with the value the client read (update only).
    public var expectations: [Expectation] = []

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
        var expectations: [Expectation] = []
        for member in object.members {
            let key = member.key
            if key == "objectId" || key == "createdAt" || key == "updatedAt" {
                throw ParseError.invalidKeyName("\(key) is an invalid field name.")
            }
            guard let field = schema.field(named: key) else {
                throw ParseError.invalidKeyName(
                    "invalid field name: \(ParseWhereParser.quoted(key)) for class \(schema.className)")
            }
            if mode == .update, !field.isUpdatable, !field.isRestorable,
                let expected = expectedValue(field, member.value)
            {
                expectations.append(Expectation(field: field.name, value: expected))
                continue
            }
            let value = try parseValue(field, member.value, schema: schema, mode: mode, limits: limits)
            assignments.append(Assignment(field: field.name, value: value))
        }
        if mode == .create {
            for field in schema.fields
            where field.isRequiredOnCreate && !assignments.contains(where: { $0.field == field.name }) {
                throw ParseError.validationError("\(field.name) is required.")
            }
        }
        var body = ParseWriteBody(schema: schema, mode: mode, assignments: assignments)
        body.expectations = expectations
        return body
    }

    /// A read-only field's value as a client that fetched the object sends it back, in SQL terms;
    /// nil when `json` is no value of the field's type (then it stays 105, or 111 for an operation).
    static func expectedValue(_ field: ParseField, _ json: ParseJSONValue) -> SQLValue? {
        if json == .null { return .null }
        switch field.type {
        case .string:
            if case .string(let text) = json { return .text(text) }
        case .int:
            switch json {
            case .int(let int): return .int(int)
            case .double(let double) where double == double.rounded() && abs(double) < 9.0e18:
                return .int(Int64(double))
            default: break
            }
        case .double:
            switch json {
            case .int(let int): return .double(Double(int))
            case .double(let double): return .double(double)
            default: break
            }
        case .bool:
            if case .bool(let bool) = json { return .bool(bool) }
        case .date:
            guard case .object(let object) = json, object["__type"] == .string("Date"),
                case .string(let iso)? = object["iso"],
                let date = ParseDate.parse(iso)
            else { break }
            return .timestamp(date)
        case .stringArray:
            guard case .array(let elements) = json else { break }
            var strings: [String] = []
            for element in elements {
                guard case .string(let text) = element else { return nil }
                strings.append(text)
            }
            return .textArray(strings)
        case .pointer(let className):
            // A pointer, or the whole object when the client fetched it with `include`.
            guard case .object(let object) = json,
                object["__type"] == .string("Pointer") || object["__type"] == .string("Object"),
                object["className"] == .string(className), case .string(let objectId)? = object["objectId"]
            else { break }
            return .text(objectId)
        case .file:
            guard case .object(let object) = json, object["__type"] == .string("File"),
                case .string(let name)? = object["name"]
            else { break }
            return .text(name)
        case .acl, .json:
            break  // updatable, or no built-in class has one: never an expectation
        }
        return nil
    }

    private static func parseValue(
        _ field: ParseField, _ json: ParseJSONValue, schema: ParseClassSchema, mode: Mode, limits: ParseLimits
    ) throws -> Value {
        func mismatch() -> ParseError {
            ParseError.incorrectType(
                "schema mismatch for \(schema.className).\(field.name); expected \(field.type.parseName) but got \(describe(json))"
            )
        }
        if case .object(let object) = json, case .string(let name)? = object["__op"], field.type == .stringArray,
            field.isUpdatable || (mode == .create && field.isCreatable)
        {
            let operation: ArrayOperation
            switch name {
            case "Add", "AddUnique": operation = .addUnique
            case "Remove": operation = .remove
            default:
                throw ParseError.incorrectType(
                    "unsupported operation \(ParseWhereParser.quoted(name)) on \(schema.className).\(field.name)")
            }
            guard case .array(let elements)? = object["objects"], object.members.count == 2 else {
                throw ParseError.invalidJSON("\(name) on \(field.name) needs objects, an array")
            }
            let strings = try validatedStrings(field, elements, limits: limits, mismatch: mismatch)
            if mode == .create { return .stringArray(operation == .remove ? [] : strings) }
            return .arrayOperation(operation, strings)
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
            return .stringArray(try validatedStrings(field, elements, limits: limits, mismatch: mismatch))
        case .pointer(let className):
            guard case .object(let object) = json, object["__type"] == .string("Pointer") else { throw mismatch() }
            guard case .string(let pointerClass)? = object["className"], pointerClass == className else {
                throw mismatch()
            }
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
        case .acl:
            return .acl(try ParseACL.parse(json))
        case .double, .date, .bool, .json:
            throw mismatch()  // no writable built-in field of these types
        }
    }

    /// The strings of an Array field's value or operation: at most `maxTagCount`, each 1 to
    /// `maxTagLength` characters, duplicates removed with the order kept.
    private static func validatedStrings(
        _ field: ParseField, _ elements: [ParseJSONValue], limits: ParseLimits, mismatch: () -> ParseError
    ) throws -> [String] {
        guard elements.count <= limits.maxTagCount else {
            throw ParseError.validationError("\(field.name) may hold at most \(limits.maxTagCount) values.")
        }
        var strings: [String] = []
        var seen: Set<String> = []
        for element in elements {
            guard case .string(let text) = element else { throw mismatch() }
            let count = text.count
            guard count >= 1, count <= limits.maxTagLength else {
                throw ParseError.validationError(
                    "each of \(field.name) must be 1 to \(limits.maxTagLength) characters.")
            }
            if seen.insert(text).inserted { strings.append(text) }
        }
        return strings
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
