/// Finding users (`GET /users`, `GET /classes/_User`) and reading one (`me`, login, `GET
/// /users/<id>`): Parse Server's `_User` find and get, through the
/// same query parser, compiler and encoder as the classes, over `ParseClassSchema.user` with the
/// fields an app added to it (`BuiltInAppFields`).
extension ParseAPI {
    /// `{"results":[…]}` (and `count`) of the accounts `access` may list: every account for a
    /// user, `email` only on their own row (all of them for the master key), and `where`/`order`
    /// on `email` refused unless with the master key (119, Parse Server's answer for a protected
    /// field: a query on it would tell whose address it is). No session: 209, unless
    /// `public_read`, which lists them as a user sees others (without `email`). Subqueries
    /// (`$inQuery`, `$select`…) and `$relatedTo` read their classes as the caller may read them
    /// (`otherClass`), as in a find of any class.
    func findUsers(items: [(name: String, value: String)], access: ParseAccess) throws -> Result {
        if access.caller == .anonymous, !access.publicRead {
            throw ParseError(
                code: ParseError.Code.invalidSessionToken, message: "Session token required to find users.")
        }
        let schema = try schemas.appFields.schema(of: .user)
        var query = try ParseQuery.find(
            schema, items: items, limits: limits, classes: { try self.otherClass($0, $1, access: access) })
        query.access = access
        // `PUT /parse/schemas/_User`'s permissions: `find`/`count`, then its protected fields
        // (hidden on every row but the caller's own).
        try ParseClass.builtIn(schema).authorize(
            &query, query.count && query.limit == 0 ? .count : .find, builtIns: schemas.builtIns)
        try checkSubqueries(query)
        if !access.caller.isMaster {
            let protected = Set(
                ParseClassSchema.user.fields.filter {
                    if case .selfOnly = $0.source { return true } else { return false }
                }.map(\.name))
            if let name = query.condition.map(Self.fieldNames)?.first(where: protected.contains) {
                throw ParseError.operationForbidden("This user is not allowed to query \(name) on class _User")
            }
        }
        return try findOrExplain(query)
    }

    /// The account `objectId` as `access` may get it, with the fields an app added to `_User`
    /// and `items`' `keys`, `excludeKeys` and `include`; nil when there is none. `checked`:
    /// `_User`'s class-level `get` permission and protected fields apply first (`GET
    /// /users/<id>`); `me` and a login answer the caller's own account whole, as Parse Server's do.
    func account(
        _ objectId: String, items: [(name: String, value: String)] = [], access: ParseAccess, checked: Bool
    ) throws -> [UInt8]? {
        let schema = try schemas.appFields.schema(of: .user)
        var query = try ParseQuery.get(
            schema, objectId: try Self.checkedObjectId(objectId), items: items, limits: limits,
            classes: { try self.otherClass($0, $1, access: access) })
        query.access = access
        if checked { try ParseClass.builtIn(schema).authorize(&query, .get, builtIns: schemas.builtIns) }
        return try object(query)
    }

    /// Every field a condition names.
    static func fieldNames(_ condition: ParseCondition) -> [String] {
        switch condition {
        case .and(let parts), .or(let parts): return parts.flatMap(fieldNames)
        case .not(let inner): return fieldNames(inner)
        case .compare(let field, _, _), .isNull(let field, _), .inList(let field, _, _, _),
            .arrayContainsAll(let field, _),
            .arrayOverlaps(let field, _), .arrayEquals(let field, _), .hasPrefix(let field, _), .regex(let field, _, _),
            .inSubquery(let field, _, _), .arrayContainedBy(let field, _), .inRelation(let field, _, _):
            return [field]
        case .textSearch, .relatedTo: return []
        }
    }
}
