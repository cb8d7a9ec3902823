import Postgres

/// A find on `_Role` as the SDKs send it, compiled to conditions on the `roles` row `r`: `where`
/// on `objectId` and `name` (equality, `$in`, `$ne`), `users` or `roles` holding a pointer (the
/// roles whose relation holds it: `ParseQuery<ParseRole>.where("users" == user)`; also `$eq`,
/// `$in`, `$nin`, `$ne`, `$all`, as a where on a custom class's Relation), `$relatedTo` (the roles
/// in another role's `roles` relation); `order` on `name`, `createdAt`, `updatedAt`; `limit`,
/// `skip`, `count`. Anything else is 102. Values are binds, never SQL text.
struct RoleQuery {
    var conditions: [String] = []
    var binds: [PostgresBindable?] = []
    var order = "r.created_at, r.object_id"
    var limit = 100
    var skip = 0
    var count = false
    /// The caller: the targets of `users` and `roles` are those they may read.
    var access = ParseAccess.master

    /// Parses the query parameters of `access`'s find.
    static func parse(_ items: [(name: String, value: String)], maxDepth: Int, access: ParseAccess = .master) throws
        -> RoleQuery
    {
        var query = RoleQuery()
        query.access = access
        for item in items {
            switch item.name {
            case "where":
                guard case .object(let object) = try ParseJSONParser.parse(item.value, maxDepth: maxDepth) else {
                    throw ParseError.invalidJSON("where must be a JSON object.")
                }
                try query.add(object)
            case "limit":
                guard let limit = Int(item.value), (0...1000).contains(limit) else {
                    throw ParseError.invalidQuery("limit must be 0 to 1000.")
                }
                query.limit = limit
            case "skip":
                guard let skip = Int(item.value), (0...100_000).contains(skip) else {
                    throw ParseError.invalidQuery("skip must be 0 to 100000.")
                }
                query.skip = skip
            case "count":
                query.count = item.value == "1" || item.value == "true"
            case "order":
                query.order = try order(item.value)
            case "keys", "include", "excludeKeys":
                continue  // a role has few fields: all are returned
            default:
                throw ParseError.invalidQuery(
                    "Invalid parameter for query: \(ParseWhereParser.quoted(String(item.name.prefix(50)))).")
            }
        }
        return query
    }

    private static func order(_ text: String) throws -> String {
        let columns = try text.split(separator: ",").map { key -> String in
            let descending = key.hasPrefix("-")
            let name = descending ? key.dropFirst() : key[...]
            let column: String
            switch name {
            case "name": column = "r.name"
            case "createdAt": column = "r.created_at"
            case "updatedAt": column = "r.updated_at"
            case "objectId": column = "r.object_id"
            default: throw ParseError.invalidQuery("_Role can be ordered by name, createdAt, updatedAt or objectId.")
            }
            return column + (descending ? " desc" : "")
        }
        guard !columns.isEmpty else { throw ParseError.invalidQuery("order names no field.") }
        return columns.joined(separator: ", ") + ", r.object_id"
    }

    /// Appends `value` to the binds; its placeholder (`$n`).
    mutating func bind(_ value: PostgresBindable) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }

    private mutating func add(_ object: ParseJSONObject) throws {
        for member in object.members {
            switch member.key {
            case "objectId", "name":
                let column = member.key == "name" ? "r.name" : "r.object_id"
                try addScalar(column, member.key, member.value)
            case "users", "roles":
                conditions.append(try relation(member.key, member.value))
            case "$relatedTo":
                guard case .object(let related) = member.value, related["key"] == .string("roles"),
                    let object = related["object"]
                else {
                    throw ParseError.invalidQuery(
                        "$relatedTo on _Role takes {\"object\":<_Role pointer>,\"key\":\"roles\"}.")
                }
                let id = try Self.pointer(object, className: "_Role", field: "$relatedTo")
                conditions.append(
                    "exists (select 1 from role_roles rr where rr.parent_id = \(bind(id))::text and rr.child_id = r.object_id)"
                )
            default:
                throw ParseError.invalidQuery("_Role can be queried on objectId, name, users, roles and $relatedTo.")
            }
        }
    }

    private mutating func addScalar(_ column: String, _ field: String, _ value: ParseJSONValue) throws {
        switch value {
        case .string(let text):
            conditions.append("\(column) = \(bind(text))::text")
        case .object(let operators):
            for op in operators.members {
                switch (op.key, op.value) {
                case ("$eq", .string(let text)):
                    conditions.append("\(column) = \(bind(text))::text")
                case ("$ne", .string(let text)):
                    conditions.append("\(column) <> \(bind(text))::text")
                case ("$in", .array(let values)), ("$nin", .array(let values)):
                    let texts = try values.map { value -> String in
                        guard case .string(let text) = value else {
                            throw ParseError.invalidQuery("\(op.key) on \(field) takes strings.")
                        }
                        return text
                    }
                    let test = "\(column) = any(\(bind(texts))::text[])"
                    conditions.append(op.key == "$in" ? test : "not (\(test))")
                default:
                    throw ParseError.invalidQuery("\(field) takes a string, $eq, $ne, $in or $nin.")
                }
            }
        default:
            throw ParseError.invalidQuery("\(field) takes a string, $eq, $ne, $in or $nin.")
        }
    }

    /// The objectId of a pointer to `className` (102 for anything else).
    static func pointer(_ value: ParseJSONValue, className: String, field: String) throws -> String {
        guard case .object(let pointer) = value, pointer["__type"] == .string("Pointer"),
            pointer["className"] == .string(className), case .string(let id)? = pointer["objectId"],
            ParseObjectID.isPlausible(id)
        else { throw ParseError.invalidQuery("\(field) takes a pointer to \(className).") }
        return id
    }
}
