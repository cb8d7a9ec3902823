/// `PUT /parse/schemas/<Class>` on a built-in class (Photo, Gallery, GalleryItem): its
/// `classLevelPermissions` change; its fixed fields cannot be deleted (136, as Parse Server
/// answers for a default field), and fields and indexes of an app's own cannot be added yet (119).
/// The body is checked whole before anything is stored, so a refused one changes nothing.
enum BuiltInSchemaChange {
    /// Checks `body` against the built-in class `className`, then stores its permissions (if any).
    static func apply(_ body: ParseJSONObject, to className: String, _ builtIns: BuiltInClassPermissions) throws {
        guard let schema = ParseClassSchema.named(className) else { return }
        for member in body.members
        where !["className", "fields", "classLevelPermissions", "indexes"].contains(member.key) {
            throw ParseError.invalidJSON("unknown key \(member.key.prefix(100)) in a schema")
        }
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
                    throw ParseError(
                        code: ParseError.Code.schemaConflict, message: "Field \(name) does not exist, cannot delete.")
                case (false, false):
                    throw ParseError.operationForbidden(
                        "\(className) is built in: fields of an app's own cannot be added to it yet.")
                }
            }
        }
        if let indexes = body["indexes"], indexes != .object(ParseJSONObject()) {
            throw ParseError.operationForbidden("\(className) is built in: its indexes are the server's.")
        }
        if let permissions = body["classLevelPermissions"] {
            _ = try builtIns.set(className, permissions)
        }
    }
}
