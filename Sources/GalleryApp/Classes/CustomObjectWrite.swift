import Foundation

/// A validated POST or PUT body for a custom class: each field's change as SQL over its typed
/// column, the fields the body names that the class lacks (with the type their value gives them),
/// and the ACL. Codes as Parse Server's: 105 for a name no field may have (and for `objectId`,
/// `createdAt`, `updatedAt`), 111 for a value of the wrong type or an operation a field's type
/// does not take, 106 for a malformed Pointer, 107 for a body that is not a JSON object.
struct CustomObjectWrite: Sendable {
    /// One field's change.
    enum Change: Equatable, Sendable {
        /// The column's new value, bound and cast to the column's type.
        case set(SQLValue, cast: String)
        /// `{"__op":"Delete"}` or `null`: the column cleared.
        case clear
        /// `{"__op":"Increment","amount":n}` on a Number.
        case increment(Double)
        /// `Add`, `AddUnique` or `Remove` on an Array: the objects as a JSON array.
        case add(String)
        case addUnique(String)
        case remove(String)
    }

    /// The changes, by column, in body order.
    let changes: [(column: String, change: Change)]
    /// Fields the body names that the class does not have, with the types their values give them.
    let newFields: [(name: String, type: CustomFieldType)]
    /// The Relation operations: objectIds added to and removed from each join table.
    var relationChanges: [CustomRelationChange] = []

    /// Parses `body` against `custom` (nil: a class the write is about to create).
    static func parse(_ body: [UInt8], className: String, custom: CustomClass?, limits: ParseLimits) throws
        -> CustomObjectWrite
    {
        guard body.count <= limits.maxBodyBytes else {
            throw ParseError.invalidJSON("request body is larger than \(limits.maxBodyBytes) bytes")
        }
        guard case .object(let object) = try ParseJSONParser.parse(body, maxDepth: limits.maxJSONDepth) else {
            throw ParseError.invalidJSON("request body must be a JSON object")
        }
        var changes: [(column: String, change: Change)] = []
        var newFields: [(name: String, type: CustomFieldType)] = []
        var relationChanges: [CustomRelationChange] = []
        for member in object.members {
            let name = member.key
            if name == "objectId" || name == "createdAt" || name == "updatedAt" {
                throw ParseError.invalidKeyName("\(name) is an invalid field name.")
            }
            if name == "ACL" {
                if member.value == .null || isDelete(member.value) {
                    changes.append(("acl", .clear))
                } else {
                    changes.append(("acl", .set(.text(try ParseACL.parse(member.value).json), cast: "jsonb")))
                }
                continue
            }
            guard ParseClassName.isValidFieldName(name) else { throw ParseClassName.invalidFieldNameError(name) }
            guard let field = custom?.field(named: name) else {
                if let type = try CustomFieldType.inferred(from: member.value, className: className) {
                    newFields.append((name, type))
                }
                continue
            }
            guard let column = field.column else {
                relationChanges.append(try CustomRelationChange.parse(member.value, field: field, className: className))
                continue
            }
            changes.append((column, try change(member.value, field: field, className: className)))
        }
        return CustomObjectWrite(changes: changes, newFields: newFields, relationChanges: relationChanges)
    }

    private static func isDelete(_ json: ParseJSONValue) -> Bool {
        if case .object(let object) = json, object["__op"] == .string("Delete"), object.members.count == 1 {
            return true
        }
        return false
    }

    /// The change a value makes to a field of a known type.
    private static func change(_ json: ParseJSONValue, field: CustomClass.Field, className: String) throws -> Change {
        let mismatch = {
            ParseError.incorrectType(
                "schema mismatch for \(className).\(field.name); expected \(field.type.description) but got \(describe(json))"
            )
        }
        if json == .null || isDelete(json) { return .clear }
        if case .object(let object) = json, case .string(let op)? = object["__op"] {
            switch (op, field.type.kind) {
            case ("Increment", .number):
                switch object["amount"] {
                case .int(let amount)?: return .increment(Double(amount))
                case .double(let amount)?: return .increment(amount)
                default: throw ParseError.invalidJSON("Increment needs a number amount")
                }
            case ("Add", .array), ("AddUnique", .array), ("Remove", .array):
                guard case .array? = object["objects"], let objects = object["objects"] else {
                    throw ParseError.invalidJSON("\(op) needs an objects array")
                }
                let text = jsonText(objects)
                return op == "Add" ? .add(text) : op == "AddUnique" ? .addUnique(text) : .remove(text)
            default:
                throw mismatch()
            }
        }
        switch field.type.kind {
        case .string:
            guard case .string(let text) = json else { throw mismatch() }
            return .set(.text(text), cast: "text")
        case .number:
            switch json {
            case .int(let number): return .set(.double(Double(number)), cast: "float8")
            case .double(let number): return .set(.double(number), cast: "float8")
            default: throw mismatch()
            }
        case .boolean:
            guard case .bool(let flag) = json else { throw mismatch() }
            return .set(.bool(flag), cast: "boolean")
        case .date:
            guard case .object(let object) = json, object["__type"] == .string("Date") else { throw mismatch() }
            guard case .string(let iso)? = object["iso"], let date = ParseDate.parse(iso) else {
                throw ParseError.incorrectType(
                    "invalid Date for \(field.name): expected {\"__type\":\"Date\",\"iso\":\"…\"}")
            }
            return .set(.timestamp(date), cast: "timestamptz")
        case .pointer:
            guard case .object(let object) = json,
                object["__type"] == .string("Pointer") || object["__type"] == .string("Object"),
                object["className"] == .string(field.type.targetClass ?? "")
            else { throw mismatch() }
            guard case .string(let objectId)? = object["objectId"], ParseObjectID.isPlausible(objectId) else {
                throw ParseError.invalidPointer("invalid Pointer objectId for \(className).\(field.name)")
            }
            return .set(.text(objectId), cast: "text")
        case .object:
            guard case .object(let object) = json, object["__type"] == nil else { throw mismatch() }
            return .set(.text(jsonText(json)), cast: "jsonb")
        case .array:
            guard case .array = json else { throw mismatch() }
            return .set(.text(jsonText(json)), cast: "jsonb")
        case .file:
            guard case .object(let object) = json, object["__type"] == .string("File"),
                case .string(let name)? = object["name"],
                !name.isEmpty, name.utf8.count <= 255
            else { throw mismatch() }
            var file = ParseJSONWriter()
            file.beginObject()
            file.key("__type")
            file.string("File")
            file.key("name")
            file.string(name)
            if case .string(let url)? = object["url"] {
                file.key("url")
                file.string(url)
            }
            file.endObject()
            return .set(.text(String(decoding: file.bytes, as: UTF8.self)), cast: "jsonb")
        case .geoPoint:
            guard case .object(let object) = json, object["__type"] == .string("GeoPoint"),
                let latitude = number(object["latitude"]), let longitude = number(object["longitude"])
            else { throw mismatch() }
            guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
                throw ParseError(
                    code: 107, message: "GeoPoint latitude must be within -90 and 90, longitude within -180 and 180")
            }
            return .set(
                .text(#"{"__type":"GeoPoint","latitude":\#(latitude),"longitude":\#(longitude)}"#), cast: "jsonb")
        case .bytes:
            guard case .object(let object) = json, object["__type"] == .string("Bytes"),
                case .string(let base64)? = object["base64"],
                Data(base64Encoded: base64) != nil
            else { throw mismatch() }
            return .set(.text(jsonText(json)), cast: "jsonb")
        case .acl:
            return .set(.text(try ParseACL.parse(json).json), cast: "jsonb")
        case .relation:
            throw mismatch()
        }
    }

    private static func number(_ json: ParseJSONValue?) -> Double? {
        switch json {
        case .int(let value)?: return Double(value)
        case .double(let value)?: return value.isFinite ? value : nil
        default: return nil
        }
    }

    private static func jsonText(_ json: ParseJSONValue) -> String {
        var writer = ParseJSONWriter()
        writer.value(json)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    private static func describe(_ json: ParseJSONValue) -> String {
        switch json {
        case .object(let object):
            if case .string(let type)? = object["__type"] { return type.count <= 20 ? type : "Object" }
            return "Object"
        case .array: return "Array"
        case .string: return "String"
        case .int, .double: return "Number"
        case .bool: return "Boolean"
        case .null: return "null"
        }
    }

    /// The SQL expression giving `column` its new value (nil: on create, where it holds none;
    /// `binds` collects the values).
    static func expression(_ change: Change, column: String?, binds: inout ParseSQLCompiler.Binds) -> String {
        let array = column.map { "coalesce(\($0), '[]'::jsonb)" } ?? "'[]'::jsonb"
        switch change {
        case .set(let value, let cast): return binds.add(value, cast: cast)
        case .clear: return "null"
        case .increment(let amount):
            return (column.map { "coalesce(\($0), 0)" } ?? "0") + " + " + binds.add(.double(amount), cast: "float8")
        case .add(let objects): return "\(array) || " + binds.add(.text(objects), cast: "jsonb")
        case .addUnique(let objects):
            // The objects not held yet, each once, in the order sent.
            let list = binds.add(.text(objects), cast: "jsonb")
            return "\(array) || coalesce((select jsonb_agg(e order by ord) from (select distinct on (e) e, ord"
                + " from jsonb_array_elements(\(list)) with ordinality x(e, ord) where e <> all(array(select jsonb_array_elements(\(array))))"
                + " order by e, ord) d), '[]'::jsonb)"
        case .remove(let objects):
            let list = binds.add(.text(objects), cast: "jsonb")
            return
                "coalesce((select jsonb_agg(e order by ord) from jsonb_array_elements(\(array)) with ordinality x(e, ord)"
                + " where e <> all(array(select jsonb_array_elements(\(list))))), '[]'::jsonb)"
        }
    }
}
