/// A class the class routes serve, resolved once per request: a built-in class (Photo, Gallery,
/// GalleryItem: a fixed schema, access decided in SQL by `ParseSQLCompiler+Access`, behaviour in
/// `ParseAPI`) or an app's custom class (its schema from `custom_classes`, access decided by its
/// class-level permissions, writes in `CustomObjectService`).
enum ParseClass: Sendable {
    case builtIn(ParseClassSchema)
    case custom(CustomClass)

    /// What reads compile against.
    var schema: ParseClassSchema {
        switch self {
        case .builtIn(let schema): return schema
        case .custom(let custom): return custom.schema
        }
    }

    /// 119 (or 101, `requiresAuthentication` without a session) unless the caller of `access` may perform
    /// `operation`. Built-in classes answer here for nothing: their statements carry the caller's filter.
    func require(_ operation: ClassLevelPermissions.Operation, access: ParseAccess) throws {
        guard case .custom(let custom) = self else { return }
        try custom.permissions.require(
            operation, on: custom.className, caller: access.caller, roles: CustomObjectService.roles(of: access))
    }
}
