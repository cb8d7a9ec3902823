import Postgres

/// `users` and `roles` in a `_Role` find, as a `where` on a custom class's Relation
/// (docs/decisions/046): a pointer or `$eq` (the roles whose relation holds it), `$in` (one of
/// them), `$ne` and `$nin` (none of them), `$all` (every one). A child role its ACL hides from
/// the caller is held by no role, so a find never tells that it exists or which roles hold it.
extension RoleQuery {
    /// The condition on `r` that `value` puts on the relation `key` (`users` or `roles`); 102 for
    /// any other shape.
    mutating func relation(_ key: String, _ value: ParseJSONValue) throws -> String {
        let className = key == "users" ? "_User" : "_Role"
        guard case .object(let object) = value, !object.isEmpty else { throw Self.misuse(key, className) }
        if object["__type"] != nil { return holds(key, [try Self.pointer(value, className: className, field: key)]) }
        var parts: [String] = []
        for member in object.members {
            switch member.key {
            case "$eq", "$ne":
                let held = holds(key, [try Self.pointer(member.value, className: className, field: key)])
                parts.append(member.key == "$eq" ? held : "not \(held)")
            case "$in", "$nin", "$all":
                guard case .array(let elements) = member.value, elements.count <= 1_000 else {
                    throw ParseError.invalidQuery("\(member.key) on \(key) takes an array of at most 1000 pointers.")
                }
                var ids: [String] = []
                for element in elements {
                    let id = try Self.pointer(element, className: className, field: key)
                    if !ids.contains(id) { ids.append(id) }
                }
                switch member.key {
                case "$in": parts.append(holds(key, ids))
                case "$nin": parts.append("not \(holds(key, ids))")
                default:
                    parts.append(
                        ids.isEmpty ? "false" : "(" + ids.map { holds(key, [$0]) }.joined(separator: " and ") + ")")
                }
            default:
                throw Self.misuse(key, className)
            }
        }
        return "(" + parts.joined(separator: " and ") + ")"
    }

    private static func misuse(_ key: String, _ className: String) -> ParseError {
        ParseError.invalidQuery("\(key) takes a pointer to \(className), or $eq, $ne, $in, $nin or $all with pointers.")
    }

    /// SQL true when the role `r`'s relation `key` holds one of `ids` that the caller may read.
    private mutating func holds(_ key: String, _ ids: [String]) -> String {
        guard !ids.isEmpty else { return "false" }
        if key == "users" {
            // Every account is readable by whoever may read roles (`_User`'s access filter).
            return "exists (select 1 from role_users ru where ru.role_id = r.object_id and ru.user_id = any("
                + bind(ids) + "::text[]))"
        }
        let list = bind(ids)
        let readable = RoleRepository.filter(access, need: "read", binds: &binds, alias: "c")
        return "exists (select 1 from role_roles rr join roles c on c.object_id = rr.child_id"
            + " where rr.parent_id = r.object_id and rr.child_id = any(\(list)::text[]) and \(readable))"
    }
}
