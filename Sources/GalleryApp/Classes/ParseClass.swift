/// A class the class routes serve, resolved once per request: a built-in class (Photo, Gallery,
/// GalleryItem: a fixed schema, rows decided in SQL by `ParseSQLCompiler+Access`, behaviour in
/// `ParseAPI`, class-level permissions in `BuiltInClassPermissions`), an app's custom class (its
/// schema from `custom_classes`, its class-level permissions, then its objects' ACLs in SQL
/// (`CustomObjectACL`), writes in `CustomObjectService`), or a view over photos from the config
/// file (`PhotoView`: read-only, Photo's rows and access, its own class-level permissions).
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

    /// Applies the class-level permissions to a read of `operation` (get, find, count): 119 (or
    /// 101) when refused; else the pointer permissions' condition (only the objects whose
    /// `readUserFields` point to the caller) and the caller's `protectedFields`, left out of the
    /// answer (a `where` or `order` on one is 119, as Parse Server's `denyProtectedFields`). A
    /// built-in class's permissions come from `builtIns` (open by default: its statements carry
    /// the caller's filter either way).
    func authorize(
        _ query: inout ParseQuery, _ operation: ClassLevelPermissions.Operation, builtIns: BuiltInClassPermissions
    ) throws {
        let permissions: ClassLevelPermissions
        switch self {
        case .builtIn(let schema):
            permissions = try builtIns.permissions(of: schema.className)
            if permissions == .builtInDefault { return }
        case .custom(let custom):
            permissions = custom.permissions
        case .view(let view):
            // A view's own permissions, as main has them: no pointer or protected fields.
            try view.permissions.require(
                operation, on: view.className, caller: query.access.caller,
                roles: CustomObjectService.roles(of: query.access))
            return
        }
        let className = schema.className
        let access = query.access
        let roles = CustomObjectService.roles(of: access)
        let grant = try permissions.grant(operation, on: className, caller: access.caller, roles: roles)
        if case .pointedBy(let fields) = grant {
            // Without a session no pointer names the caller: `or []`, no row.
            let user = access.caller.userId
            let pointing = ParseCondition.or(
                user.map { user in fields.map { ParseCondition.compare(field: $0, op: .equal, value: .text(user)) } }
                    ?? [])
            query.condition = query.condition.map { .and([$0, pointing]) } ?? pointing
        }
        let hidden = permissions.hiddenFields(caller: access.caller, roles: roles)
        guard !hidden.isEmpty else { return }
        var named = query.condition?.fieldNames ?? []
        for case .field(let name, _) in query.order { named.insert(name) }
        if let name = named.intersection(hidden).sorted().first {
            throw ParseError.operationForbidden("This user is not allowed to query \(name) on class \(className)")
        }
        query.projection = query.projection.hiding(
            hidden, revealedBy: Self.revealedBy(hidden, permissions, in: schema, caller: access.caller))
    }

    /// The columns that show the caller a `hidden` field on the rows where one of them holds the
    /// caller's id, by field: on `_User`, the account itself (`ownAccountRow`); elsewhere the
    /// `_User` pointers of `protectedFields`' `userField:` entries. Finds and LiveQuery both use it.
    static func revealedBy(
        _ hidden: Set<String>, _ permissions: ClassLevelPermissions, in schema: ParseClassSchema, caller: ParseCaller
    ) -> [String: [String]] {
        guard schema.className != ParseClassSchema.user.className else { return ownAccountRow(hidden) }
        return pointerColumns(permissions.revealingPointers(hidden: hidden, caller: caller), in: schema)
    }

    /// `_User`'s protected fields shown on the caller's own account, as Parse Server's
    /// `filterSensitiveData` shows a user their own row whole.
    static func ownAccountRow(_ hidden: Set<String>) -> [String: [String]] {
        Dictionary(uniqueKeysWithValues: hidden.map { ($0, ["object_id"]) })
    }

    /// `revealing` (field → `userField:` pointer names) as the columns of those pointers that are
    /// `_User` pointers of `schema`, for the plain columns among the fields; a field left with none
    /// stays hidden (a `userField:` entry naming anything else never matches a caller).
    private static func pointerColumns(_ revealing: [String: [String]], in schema: ParseClassSchema) -> [String:
        [String]]
    {
        var columns: [String: [String]] = [:]
        for (name, pointers) in revealing {
            guard case .column? = schema.field(named: name)?.source else { continue }
            let pointerColumns = pointers.compactMap { pointer -> String? in
                guard let field = schema.field(named: pointer), field.type == .pointer("_User"),
                    case .column(let column) = field.source
                else { return nil }
                return column
            }
            if !pointerColumns.isEmpty { columns[name] = pointerColumns }
        }
        return columns
    }
}
