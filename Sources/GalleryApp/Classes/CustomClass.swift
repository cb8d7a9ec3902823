/// A class an app defined (`custom_classes`, migration 0021): its fields with the server-named
/// columns that hold them, its class-level permissions and indexes, and the `ParseClassSchema`
/// finds and gets compile against. Immutable: a change makes a new value.
struct CustomClass: Sendable {
    /// One field: its Parse name and type, and its column (`c<N>`; none for a Relation, whose
    /// pairs are rows of its join table `custom_<n>_r<k>`, Parse Server's `_Join:<field>:<class>`).
    struct Field: Equatable, Sendable {
        let name: String
        let type: CustomFieldType
        let column: String?
        var joinTable: String? = nil
    }

    /// One index: its Parse name, its fields with directions (1 or -1) and its SQL name.
    struct Index: Equatable, Sendable {
        let name: String
        let keys: [(field: String, direction: Int)]
        let sqlName: String

        static func == (a: Index, b: Index) -> Bool {
            a.name == b.name && a.sqlName == b.sqlName && a.keys.elementsEqual(b.keys) { $0 == $1 }
        }
    }

    /// The Parse class name.
    let className: String
    /// The number naming the table (`custom_<tableId>`), its counter and its indexes.
    let tableId: Int64
    /// The app's fields, in the order they were added.
    let fields: [Field]
    /// The number of the next column.
    let nextColumn: Int
    /// Who may do what.
    let permissions: ClassLevelPermissions
    /// The app's indexes.
    let indexes: [Index]
    /// What reads compile against.
    let schema: ParseClassSchema

    /// A class as stored.
    init(
        className: String, tableId: Int64, fields: [Field], nextColumn: Int, permissions: ClassLevelPermissions,
        indexes: [Index]
    ) {
        self.className = className
        self.tableId = tableId
        self.fields = fields
        self.nextColumn = nextColumn
        self.permissions = permissions
        self.indexes = indexes
        self.schema = Self.makeSchema(className: className, table: Self.table(tableId), fields: fields)
    }

    /// The change sequence of a class's rows, schema and permissions (migration 0025): what its
    /// finds' tags are made from.
    static func changeScope(_ className: String) -> String { "Custom:" + className }

    /// The table's name: server-made, never from a client.
    static func table(_ tableId: Int64) -> String { "custom_\(tableId)" }
    /// The table's name.
    var table: String { Self.table(tableId) }
    /// The `row_counts` name of its O(1) count.
    var counterName: String { "custom_\(tableId)" }

    /// The same class with other permissions.
    func with(permissions: ClassLevelPermissions) -> CustomClass {
        CustomClass(
            className: className, tableId: tableId, fields: fields, nextColumn: nextColumn, permissions: permissions,
            indexes: indexes)
    }

    /// The field named `name`, or nil.
    func field(named name: String) -> Field? { fields.first { $0.name == name } }

    private static func makeSchema(className: String, table: String, fields: [Field]) -> ParseClassSchema {
        var parseFields = [
            ParseField("objectId", "object_id", .string),
            ParseField("createdAt", "created_at", .date, builtInDate: true),
            ParseField("updatedAt", "updated_at", .date, builtInDate: true),
            ParseField("ACL", "acl", .acl, queryable: false, sortable: false),
        ]
        for field in fields {
            guard let column = field.column, let type = field.type.readType else { continue }
            let plain: Bool
            switch type {
            case .acl, .json: plain = false
            default: plain = true
            }
            // An Array takes `$exists` and `$containedBy` (ParseWhereParser+Subqueries).
            parseFields.append(
                ParseField(field.name, column, type, queryable: plain || type == .json("Array"), sortable: plain))
        }
        var relations: [String: ParseRelationField] = [:]
        for field in fields {
            guard let joinTable = field.joinTable, let target = field.type.targetClass else { continue }
            relations[field.name] = ParseRelationField(joinTable: joinTable, targetClass: target)
        }
        return ParseClassSchema(
            className: className, table: table, fields: parseFields, hasTrash: false, liveCountName: table,
            isCustom: true, relations: relations)
    }

    /// The stored form of `fields`.
    static func fieldsJSON(_ fields: [Field]) -> String {
        var writer = ParseJSONWriter()
        writer.beginArray()
        for field in fields {
            writer.beginObject()
            writer.key("name")
            writer.string(field.name)
            writer.key("type")
            writer.string(field.type.kind.rawValue)
            if let target = field.type.targetClass {
                writer.key("targetClass")
                writer.string(target)
            }
            if let column = field.column {
                writer.key("column")
                writer.string(column)
            }
            if let joinTable = field.joinTable {
                writer.key("join")
                writer.string(joinTable)
            }
            writer.endObject()
        }
        writer.endArray()
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The stored form of `indexes`.
    static func indexesJSON(_ indexes: [Index]) -> String {
        var writer = ParseJSONWriter()
        writer.beginArray()
        for index in indexes {
            writer.beginObject()
            writer.key("name")
            writer.string(index.name)
            writer.key("sqlName")
            writer.string(index.sqlName)
            writer.key("keys")
            writer.beginArray()
            for key in index.keys {
                writer.beginObject()
                writer.key("field")
                writer.string(key.field)
                writer.key("direction")
                writer.int(Int64(key.direction))
                writer.endObject()
            }
            writer.endArray()
            writer.endObject()
        }
        writer.endArray()
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// A class from its stored row's values (the server's own JSON).
    static func decode(
        className: String, tableId: Int64, fieldsJSON: String, nextColumn: Int, clpJSON: String, indexesJSON: String
    ) throws -> CustomClass {
        func parse(_ text: String) throws -> ParseJSONValue {
            try ParseJSONParser.parse(Array(text.utf8), maxDepth: 16)
        }
        var fields: [Field] = []
        if case .array(let elements) = try parse(fieldsJSON) {
            for case .object(let object) in elements {
                guard case .string(let name)? = object["name"], case .string(let kind)? = object["type"],
                    let type = CustomFieldType.Kind(rawValue: kind)
                else { throw ParseError.internalServerError("custom_classes.fields of \(className) unreadable") }
                fields.append(
                    Field(
                        name: name, type: CustomFieldType(type, targetClass: object["targetClass"]?.stringValue),
                        column: object["column"]?.stringValue, joinTable: object["join"]?.stringValue))
            }
        }
        var indexes: [Index] = []
        if case .array(let elements) = try parse(indexesJSON) {
            for case .object(let object) in elements {
                guard case .string(let name)? = object["name"], case .string(let sqlName)? = object["sqlName"],
                    case .array(let keys)? = object["keys"]
                else { continue }
                let parsed = keys.compactMap { json -> (field: String, direction: Int)? in
                    guard case .object(let key) = json, case .string(let field)? = key["field"],
                        case .int(let direction)? = key["direction"]
                    else { return nil }
                    return (field: field, direction: Int(direction))
                }
                indexes.append(Index(name: name, keys: parsed, sqlName: sqlName))
            }
        }
        return CustomClass(
            className: className, tableId: tableId, fields: fields, nextColumn: nextColumn,
            permissions: try ClassLevelPermissions.parse(try parse(clpJSON), base: .masterOnly), indexes: indexes)
    }

    /// Writes the class as `/parse/schemas` shows it: `className`, `fields` (the default ones
    /// first), `classLevelPermissions` and `indexes` (with Parse's `_id_`).
    func write(into writer: inout ParseJSONWriter) {
        writer.beginObject()
        writer.key("className")
        writer.string(className)
        writer.key("fields")
        writer.beginObject()
        for (name, type) in [("objectId", "String"), ("createdAt", "Date"), ("updatedAt", "Date"), ("ACL", "ACL")] {
            writer.key(name)
            writer.beginObject()
            writer.key("type")
            writer.string(type)
            writer.endObject()
        }
        for field in fields {
            writer.key(field.name)
            field.type.write(into: &writer)
        }
        writer.endObject()
        permissions.writeSchemaEnd(indexes: indexes, into: &writer)
        writer.endObject()
    }
}
