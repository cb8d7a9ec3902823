extension UserRoutes {
    /// At most this many members of a role are matched by one `$relatedTo` (they become an `$in`).
    static let maxRelatedUsers = 1_000

    /// A find's parameters with a top-level `$relatedTo` on a role's `users` relation
    /// (`{"$relatedTo":{"object":<_Role pointer>,"key":"users"}}`, what `ParseRelation.query()`
    /// sends) replaced by `objectId $in` the role's members, and'ed with the rest of the `where`.
    /// The caller must be able to read the role (101 otherwise). Other parameters pass unchanged,
    /// as does a `$relatedTo` whose object is not a role.
    func relatedUsers(
        _ items: [(name: String, value: String)], caller: ParseCaller
    ) throws -> [(name: String, value: String)] {
        // Without a session (and without `public_read`) the find itself answers 209.
        guard caller != .anonymous || publicRead,
            let index = items.firstIndex(where: { $0.name == "where" }), items[index].value.contains("$relatedTo"),
            case .object(var condition) = try ParseJSONParser.parse(items[index].value, maxDepth: maxJSONDepth),
            let related = condition["$relatedTo"]
        else { return items }
        // A relation to users of another class (a custom class's Relation to `_User`) is the
        // classes' own `$relatedTo` (`ParseWhereParser.relatedTo`), which reads its owner's access.
        if case .object(let relation) = related, case .object(let owner)? = relation["object"],
            case .string(let className)? = owner["className"], className != "_Role"
        {
            return items
        }
        guard case .object(let relation) = related, relation["key"] == .string("users"), let object = relation["object"]
        else {
            throw ParseError.invalidQuery("$relatedTo on _User takes {\"object\":<_Role pointer>,\"key\":\"users\"}.")
        }
        let roleId = try RoleQuery.pointer(object, className: "_Role", field: "$relatedTo")
        let access = try authenticator.roles.access(for: caller, publicRead: publicRead)
        let members = try RoleRepository(pool: api.pool).related(
            .users, of: roleId, access: access, limit: Self.maxRelatedUsers)
        condition.members.removeAll { $0.key == "$relatedTo" }
        let inMembers = ParseJSONValue.object(
            ParseJSONObject([
                .init(
                    key: "objectId",
                    value: .object(ParseJSONObject([.init(key: "$in", value: .array(members.map { .string($0) }))])))
            ]))
        let combined =
            condition.isEmpty
            ? inMembers
            : ParseJSONValue.object(
                ParseJSONObject([.init(key: "$and", value: .array([.object(condition), inMembers]))]))
        var writer = ParseJSONWriter()
        writer.value(combined)
        var rewritten = items
        rewritten[index].value = String(decoding: writer.bytes, as: UTF8.self)
        return rewritten
    }
}
