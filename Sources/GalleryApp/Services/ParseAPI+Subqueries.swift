/// The classes a query's subqueries (`$inQuery`, `$notInQuery`, `$select`, `$dontSelect`) and
/// includes name, resolved and checked for the caller as a find (a subquery) or get (an include)
/// of that class would be: Parse Server runs each as a query with the caller's auth.
extension ParseAPI {
    /// The schema of `className` for `use` by `access`: 103 for a name no class may have; 119 for
    /// a class that does not exist (the master key: nil, no rows, as Parse Server finds none) or
    /// whose class-level permissions refuse `find` (subquery) or `get` (include).
    func otherClass(_ className: String, _ use: ParseWhereParser.ClassUse, access: ParseAccess) throws
        -> ParseClassSchema?
    {
        let operation: ClassLevelPermissions.Operation = use == .subquery ? .find : .get
        if className == ParseClassSchema.user.className { return ParseClassSchema.user }
        if let schema = ParseClassSchema.named(className) {
            try requireBuiltIn(operation, className, access)
            return schema
        }
        guard ParseClassName.isValidClassName(className) else { throw ParseClassName.invalidClassNameError(className) }
        guard let custom = try schemas.catalog.lookup(className) else {
            guard access.caller.isMaster else {
                throw ParseError.operationForbidden(
                    "This user is not allowed to access non-existent class: \(className.prefix(100))")
            }
            return nil
        }
        try custom.permissions.require(
            operation, on: className, caller: access.caller, roles: CustomObjectService.roles(of: access))
        return custom.schema
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
