/// `/parse/schemas` for the views over photos: shown like any class, their class-level
/// permissions changed by PUT; their fields come from the config file, so nothing else changes.
extension SchemaRoutes {
    /// The view's schema, or nil when `className` is no view.
    static func renderView(_ className: String, _ views: ViewCatalog) throws -> [UInt8]? {
        guard let view = try views.view(named: className) else { return nil }
        var writer = ParseJSONWriter()
        view.writeSchema(into: &writer)
        return writer.bytes
    }

    /// `PUT /schemas/<View>`: only `classLevelPermissions` (and the view's own `className`); a view
    /// is read-only, so granting a write is 119 too. The new permissions replace the old.
    static func updateView(_ view: PhotoView, _ body: ParseJSONObject, _ views: ViewCatalog) throws -> [UInt8] {
        for member in body.members where !["className", "classLevelPermissions"].contains(member.key) {
            throw ParseError.operationForbidden(
                "\(view.className) is a view of Photo: only its classLevelPermissions change "
                    + "(its fields are [[views]] in the config file), not \(member.key.prefix(100)).")
        }
        guard let json = body["classLevelPermissions"] else { return try renderView(view.className, views) ?? [] }
        let permissions = try ClassLevelPermissions.parse(json)
        for operation in [ClassLevelPermissions.Operation.create, .update, .delete, .addField]
        where !(permissions.entries[operation] ?? []).isEmpty {
            throw ParseError.operationForbidden(
                "\(view.className) is a read-only view: \(operation.rawValue) cannot be granted.")
        }
        guard permissions.protectedFields.isEmpty else {
            throw ParseError.operationForbidden(
                "\(view.className) is a view: leave a field out of [views.fields] rather than protect it.")
        }
        try views.store(permissions, for: view.className)
        return try renderView(view.className, views) ?? []
    }
}
