/// The type of a custom class's field as `/parse/schemas` names it (`{"type":"Pointer",
/// "targetClass":"_User"}`), with its column type and the `ParseFieldType` reads use.
struct CustomFieldType: Equatable, Sendable {
    /// Parse's schema types.
    enum Kind: String, CaseIterable, Sendable {
        case string = "String"
        case number = "Number"
        case boolean = "Boolean"
        case date = "Date"
        case object = "Object"
        case array = "Array"
        case pointer = "Pointer"
        case relation = "Relation"
        case file = "File"
        case geoPoint = "GeoPoint"
        case bytes = "Bytes"
        case acl = "ACL"
    }

    /// The kind.
    let kind: Kind
    /// The class a Pointer or Relation refers to; nil for the other kinds.
    let targetClass: String?

    /// A type without a target class.
    init(_ kind: Kind, targetClass: String? = nil) {
        self.kind = kind
        self.targetClass = targetClass
    }

    /// Parses a field declaration, as Parse Server's `fieldTypeIsInvalid` checks it: 107 for a
    /// value that is not `{"type":…}`, 111 for an unknown type, 135 for a Pointer or Relation
    /// without `targetClass`, 103 for an invalid target class.
    static func parse(_ json: ParseJSONValue, field: String) throws -> CustomFieldType {
        guard case .object(let object) = json, case .string(let name)? = object["type"] else {
            throw ParseError.invalidJSON("invalid JSON: the field \(field.prefix(100)) needs {\"type\":…}")
        }
        guard let kind = Kind(rawValue: name) else {
            throw ParseError.incorrectType("invalid field type: \(name.prefix(100))")
        }
        for member in object.members where !["type", "targetClass", "required", "defaultValue"].contains(member.key) {
            throw ParseError.invalidJSON(
                "invalid JSON: unknown key \(member.key.prefix(100)) in the field \(field.prefix(100))")
        }
        guard kind == .pointer || kind == .relation else {
            guard object["targetClass"] == nil else {
                throw ParseError.invalidJSON("invalid JSON: targetClass on a \(name) field")
            }
            return CustomFieldType(kind)
        }
        guard let target = object["targetClass"] else {
            throw ParseError(code: ParseError.Code.missingTargetClass, message: "type \(name) needs a class name")
        }
        guard case .string(let targetClass) = target else { throw ParseError.invalidJSON("invalid JSON") }
        guard ParseClassName.isValidClassName(targetClass) || ParseClassName.systemClasses.contains(targetClass) else {
            throw ParseClassName.invalidClassNameError(targetClass)
        }
        return CustomFieldType(kind, targetClass: targetClass)
    }

    /// The type a value gives an unknown field when a save adds it (Parse Server's `getType`), or
    /// nil for a value that adds nothing (`null`, `{"__op":"Delete"}`).
    static func inferred(from json: ParseJSONValue, className: String) throws -> CustomFieldType? {
        switch json {
        case .null: return nil
        case .bool: return CustomFieldType(.boolean)
        case .int, .double: return CustomFieldType(.number)
        case .string: return CustomFieldType(.string)
        case .array: return CustomFieldType(.array)
        case .object(let object):
            if case .string(let type)? = object["__type"] {
                switch type {
                case "Date": return CustomFieldType(.date)
                case "File": return CustomFieldType(.file)
                case "GeoPoint": return CustomFieldType(.geoPoint)
                case "Bytes": return CustomFieldType(.bytes)
                case "Pointer":
                    guard case .string(let target)? = object["className"] else {
                        throw ParseError.invalidPointer("invalid Pointer")
                    }
                    return CustomFieldType(.pointer, targetClass: target)
                default: throw ParseError.incorrectType("This is not a valid \(type.prefix(100))")
                }
            }
            if case .string(let op)? = object["__op"] {
                switch op {
                case "Increment": return CustomFieldType(.number)
                case "Add", "AddUnique", "Remove": return CustomFieldType(.array)
                case "AddRelation", "RemoveRelation":
                    // Parse Server's `getType`: a Relation to the first object's class.
                    guard case .array(let objects)? = object["objects"], case .object(let first)? = objects.first,
                        case .string(let target)? = first["className"]
                    else { throw ParseError.invalidJSON("\(op) needs an objects array of pointers") }
                    guard ParseClassName.isValidClassName(target) || ParseClassName.systemClasses.contains(target)
                    else { throw ParseClassName.invalidClassNameError(target) }
                    return CustomFieldType(.relation, targetClass: target)
                case "Batch":
                    guard case .array(let ops)? = object["ops"], let first = ops.first else {
                        throw ParseError.invalidJSON("Batch needs an ops array")
                    }
                    return try inferred(from: first, className: className)
                case "Delete": return nil
                default: throw ParseError.incorrectType("The \(op.prefix(100)) operator is not supported.")
                }
            }
            return CustomFieldType(.object)
        }
    }

    /// The column's PostgreSQL type; nil for a Relation, which has no column.
    var sqlType: String? {
        switch kind {
        case .string, .pointer: return "text"
        case .number: return "double precision"
        case .boolean: return "boolean"
        case .date: return "timestamptz"
        case .object, .array, .file, .geoPoint, .bytes, .acl: return "jsonb"
        case .relation: return nil
        }
    }

    /// How finds read and encode the column; nil for a Relation.
    var readType: ParseFieldType? {
        switch kind {
        case .string: return .string
        case .number: return .double
        case .boolean: return .bool
        case .date: return .date
        case .pointer: return .pointer(targetClass ?? "")
        case .acl: return .acl
        case .object, .array, .file, .geoPoint, .bytes: return .json(kind.rawValue)
        case .relation: return nil
        }
    }

    /// `String`, or `Pointer<_User>` (error messages, as Parse's `typeToString`).
    var description: String {
        targetClass.map { "\(kind.rawValue)<\($0)>" } ?? kind.rawValue
    }

    /// Writes `{"type":"…"}` (with `targetClass`).
    func write(into writer: inout ParseJSONWriter) {
        writer.beginObject()
        writer.key("type")
        writer.string(kind.rawValue)
        if let targetClass {
            writer.key("targetClass")
            writer.string(targetClass)
        }
        writer.endObject()
    }
}
