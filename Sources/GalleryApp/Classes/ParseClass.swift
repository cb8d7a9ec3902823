/// A class the class routes serve, resolved once per request: a built-in class (Photo, Gallery,
/// GalleryItem: a fixed schema, access decided in SQL by `ParseSQLCompiler+Access`, behaviour in
/// `ParseAPI`), an app's custom class (its schema from `custom_classes`, access decided by its
/// class-level permissions, writes in `CustomObjectService`), or a view over photos from the
/// config file (`PhotoView`: read-only, Photo's rows and access, its own class-level permissions).
enum ParseClass: Sendable {
    case builtIn(ParseClassSchema)
    case custom(CustomClass)
    case view(PhotoView)

    /// What reads compile against (a view's: its source, Photo).
    var schema: ParseClassSchema {
        switch self {
        case .builtIn(let schema): return schema
        case .custom(let custom): return custom.schema
        case .view: return .photo
        }
    }

    /// 119 (or 101, `requiresAuthentication` without a session) unless the caller of `access` may perform
    /// `operation`. Built-in classes answer here for nothing: their statements carry the caller's filter.
    func require(_ operation: ClassLevelPermissions.Operation, access: ParseAccess) throws {
        switch self {
        case .builtIn:
            return
        case .custom(let custom):
            try custom.permissions.require(
                operation, on: custom.className, caller: access.caller, roles: CustomObjectService.roles(of: access))
        case .view(let view):
            try view.permissions.require(
                operation, on: view.className, caller: access.caller, roles: CustomObjectService.roles(of: access))
        }
    }
}
