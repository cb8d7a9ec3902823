/// `PUT /parse/schemas/<Class>` on a built-in class (Photo, Gallery, GalleryItem, `_User`): its
/// `classLevelPermissions` change, and fields of an app's own (`BuiltInAppFields`) are added or
/// deleted (`{"__op":"Delete"}`); its fixed fields cannot be deleted (136, as Parse Server
/// answers for a default field) nor redefined (255), and its indexes are the server's (119).
/// The body is checked whole before anything is stored, so a refused one changes nothing; the
/// fields change in one transaction.
enum BuiltInSchemaChange {
    /// Checks `body` against the built-in class `className`, then changes its fields and stores
    /// its permissions (if any).
    static func apply(_ body: ParseJSONObject, to className: String, _ schemas: SchemaService) throws {
        guard let schema = ParseClassSchema.builtIn(named: className) else { return }
        for member in body.members
        where !["className", "fields", "classLevelPermissions", "indexes"].contains(member.key) {
            throw ParseError.invalidJSON("unknown key \(member.key.prefix(100)) in a schema")
        }
        var additions: [(name: String, type: CustomFieldType)] = []
        var deletions: [String] = []
        if let fields = body["fields"] {
            guard case .object(let object) = fields else { throw ParseError.invalidJSON("fields must be an object") }
            for member in object.members {
                let name = String(member.key.prefix(100))
                let isDelete: Bool
                if case .object(let change) = member.value, change["__op"] == .string("Delete") {
                    isDelete = true
                } else {
                    isDelete = false
                }
                switch (schema.field(named: member.key) != nil, isDelete) {
                case (true, true):
                    throw ParseError(
                        code: ParseError.Code.changedImmutableField, message: "field \(name) cannot be changed")
                case (true, false):
                    throw ParseError(
                        code: ParseError.Code.schemaConflict, message: "Field \(name) exists, cannot update.")
                case (false, true):
                    deletions.append(member.key)
                case (false, false):
                    guard ParseClassName.isValidFieldName(member.key) else {
                        throw ParseClassName.invalidFieldNameError(member.key)
                    }
                    additions.append((member.key, try CustomFieldType.parse(member.value, field: member.key)))
                }
            }
        }
        if let indexes = body["indexes"], indexes != .object(ParseJSONObject()) {
            throw ParseError.operationForbidden("\(className) is built in: its indexes are the server's.")
        }
        let permissions = body["classLevelPermissions"]
        if let permissions { _ = try BuiltInClassPermissions.parse(permissions, of: className) }
        if !additions.isEmpty || !deletions.isEmpty {
            let appFields = schemas.appFields
            try appFields.changing { connection in
                var current = try appFields.lock(on: connection, schema)
                // Deletions first, as Parse Server does them, then additions.
                for name in deletions { current = try appFields.deleteField(on: connection, schema, current, name) }
                for (name, type) in additions {
                    current = try appFields.addField(on: connection, schema, current, name, type)
                }
                try appFields.store(on: connection, current)
            }
        }
        if let permissions {
            _ = try schemas.builtIns.set(className, permissions)
        }
    }
}
