/// A view from the config file (`ViewDefinition`) made ready to serve: a read-only class whose
/// objects are the photos its caller may read, with `objectId`, `createdAt`, `updatedAt` and the
/// view's own fields, each read from a Photo column. Reads run as Photo queries (Photo's access
/// filter, counters and indexes), their names translated (`PhotoView+Query`) and their rows
/// written under the view's names (`PhotoView+Encoding`). Its class-level permissions are its own.
struct PhotoView: Sendable {
    /// One field: its name in the view, the Photo field it reads and what of it.
    struct Field: Sendable {
        /// The name in the view.
        let name: String
        /// The Photo field holding the value.
        let source: ParseField
        /// The value itself, or a file's URL or name.
        let part: ViewDefinition.Part
        /// `"name":`, written once.
        let jsonKey: [UInt8]

        init(name: String, source: ParseField, part: ViewDefinition.Part) {
            self.name = name
            self.source = source
            self.part = part
            var key = ParseJSONWriter(capacity: name.utf8.count + 3)
            key.beginObject()
            key.key(name)
            self.jsonKey = Array(key.bytes.dropFirst())
        }

        /// objectId, createdAt or updatedAt: written as Photo writes them.
        var isDefault: Bool { ParseClassName.defaultFields.contains(name) }

        /// Whether `where` may constrain it beyond `$exists` (a URL is made per request).
        var isComparable: Bool { part == .value && source.isQueryable && source.type != .file }

        /// Whether `order` may name it.
        var isSortable: Bool { part == .value && source.isSortable && source.type != .file }

        /// Its type as `/parse/schemas` shows it.
        var parseType: String {
            guard part == .value else { return "String" }
            switch source.type {
            case .string: return "String"
            case .int, .double: return "Number"
            case .date: return "Date"
            case .stringArray: return "Array"
            case .bool: return "Boolean"
            case .file: return "File"
            case .pointer: return "Pointer"
            case .acl: return "ACL"
            case .json(let name): return name
            }
        }
    }

    /// The view's class name.
    let className: String
    /// objectId, createdAt, updatedAt, then the view's fields by name.
    let fields: [Field]
    /// Who may get, find and count (writes are refused whatever they say).
    let permissions: ClassLevelPermissions
    private let fieldsByName: [String: Int]

    /// The view of `definition` (checked when the config was read) with `permissions`.
    init(_ definition: ViewDefinition, permissions: ClassLevelPermissions) {
        var fields: [Field] = ["objectId", "createdAt", "updatedAt"].compactMap { name in
            ParseClassSchema.photo.field(named: name).map { Field(name: name, source: $0, part: .value) }
        }
        for field in definition.fields {
            guard let resolved = ViewDefinition.resolve(field.path) else { continue }
            fields.append(Field(name: field.name, source: resolved.field, part: resolved.part))
        }
        self.className = definition.className
        self.fields = fields
        self.permissions = permissions
        var byName: [String: Int] = [:]
        for (index, field) in fields.enumerated() { byName[field.name] = index }
        self.fieldsByName = byName
    }

    private init(copying view: PhotoView, permissions: ClassLevelPermissions) {
        self.className = view.className
        self.fields = view.fields
        self.fieldsByName = view.fieldsByName
        self.permissions = permissions
    }

    /// The same view with other permissions.
    func with(permissions: ClassLevelPermissions) -> PhotoView {
        PhotoView(copying: self, permissions: permissions)
    }

    /// The field named `name`, or nil.
    func field(named name: String) -> Field? {
        fieldsByName[name].map { fields[$0] }
    }

    /// A view's permissions until the master key changes them: anyone may get, find and count
    /// (each caller still sees only the photos it may read), no one may write.
    static let defaultPermissions: ClassLevelPermissions = {
        let json = #"{"get":{"*":true},"find":{"*":true},"count":{"*":true}}"#
        // A constant that parses.
        return try! ClassLevelPermissions.parse(try! ParseJSONParser.parse(Array(json.utf8), maxDepth: 4))
    }()

    /// 119 for any write to the view: its objects are Photo's.
    func refuseWrite() -> ParseError {
        ParseError.operationForbidden("\(className) is a read-only view of Photo.")
    }

    /// The view as `/parse/schemas` shows it: its fields with their types (no ACL: its objects
    /// carry none), its class-level permissions, Parse's `_id_` index.
    func writeSchema(into writer: inout ParseJSONWriter) {
        writer.beginObject()
        writer.key("className")
        writer.string(className)
        writer.key("fields")
        writer.beginObject()
        for field in fields {
            writer.key(field.name)
            writer.beginObject()
            writer.key("type")
            writer.string(field.parseType)
            writer.endObject()
        }
        writer.endObject()
        permissions.writeSchemaEnd(into: &writer)
        writer.endObject()
    }
}
