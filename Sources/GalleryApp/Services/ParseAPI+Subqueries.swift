/// The classes a query's subqueries (`$inQuery`, `$notInQuery`, `$select`, `$dontSelect`) and
/// includes name, resolved and checked for the caller as a find (a subquery) or get (an include)
/// of that class would be: Parse Server runs each as a query with the caller's auth.
extension ParseAPI {
    /// `className` as `access` may read it for `use`: 103 for a name no class may have; 119 for a
    /// class that does not exist (the master key: nil, no rows, as Parse Server finds none) or
    /// whose class-level permissions refuse `find` (subquery) or `get` (include; a `$relatedTo`
    /// owner and the targets of a `where` on a Relation are `refused` instead, so they relate
    /// nothing). Each carries the caller's `protectedFields` and pointer permissions
    /// (`readUserFields`): an include leaves out the protected fields and the objects that do
    /// not point to the caller, as a get of them would (docs/decisions/046).
    func otherClass(_ className: String, _ use: ParseWhereParser.ClassUse, access: ParseAccess) throws
        -> ParseReadableClass?
    {
        let schema: ParseClassSchema
        let permissions: ClassLevelPermissions
        if let builtIn = ParseClassSchema.builtIn(named: className) {
            schema = try schemas.appFields.schema(of: builtIn)
            permissions = try schemas.builtIns.permissions(of: className)
        } else {
            guard ParseClassName.isValidClassName(className) else {
                throw ParseClassName.invalidClassNameError(className)
            }
            guard let custom = try schemas.catalog.lookup(className) else {
                guard access.caller.isMaster else {
                    throw ParseError.operationForbidden(
                        "This user is not allowed to access non-existent class: \(className.prefix(100))")
                }
                return nil
            }
            schema = custom.schema
            permissions = custom.permissions
        }
        let roles = CustomObjectService.roles(of: access)
        let hidden = permissions.hiddenFields(caller: access.caller, roles: roles)
        let grant: ClassLevelPermissions.Grant
        do {
            grant = try permissions.grant(
                use == .subquery ? .find : .get, on: className, caller: access.caller, roles: roles)
        } catch let error as ParseError {
            guard use == .relatedTo else { throw error }
            return ParseReadableClass(schema: schema, refused: true)
        }
        var readable = ParseReadableClass(schema: schema, hidden: hidden)
        if case .pointedBy(let fields) = grant {
            // Without a session no pointer names the caller: `or []`, no row.
            let user = access.caller.userId
            readable.rows = .or(
                user.map { user in fields.map { ParseCondition.compare(field: $0, op: .equal, value: .text(user)) } }
                    ?? [])
        }
        return readable
    }

    /// 119 for a subquery on `_User` constraining a protected field (`email`) without the master
    /// key, as `findUsers` refuses it: its matches would tell whose address it is.
    func checkSubqueries(_ query: ParseQuery) throws {
        guard !query.access.caller.isMaster else { return }
        for subquery in query.subqueries where subquery.schema.className == ParseClassSchema.user.className {
            let names = subquery.condition.map(Self.fieldNames) ?? []
            for name in names {
                guard let field = subquery.schema.field(named: name), case .selfOnly = field.source else { continue }
                throw ParseError.operationForbidden("This user is not allowed to query \(name) on class _User")
            }
        }
    }
}
