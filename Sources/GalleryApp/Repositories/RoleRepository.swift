import Foundation
import Postgres

/// The `_Role` rows (migration 0022): a role's name, ACL and relations, read and changed with the
/// role's own ACL: a caller reads a role whose ACL grants them read (as themselves, `*` or one of
/// their roles) and changes or deletes one whose ACL grants them write; the master key does all.
/// A role the caller may not read and a missing role are both 101.
struct RoleRepository: Sendable {
    let pool: PostgresPool

    /// One role as a find returns it.
    struct Role: Sendable {
        var objectId: String
        var name: String
        /// The stored, normalized ACL JSON.
        var acl: String
        var createdAt: Date
        var updatedAt: Date
    }

    static let columns = "object_id, name, acl::text, created_at, updated_at"

    /// SQL true for a role row `alias` that `access` may read (`need` "read") or change ("write").
    static func filter(_ access: ParseAccess, need: String, binds: inout [PostgresBindable?], alias: String = "r")
        -> String
    {
        if access.caller.isMaster { return "true" }
        binds.append(access.principals)
        // The ACL's keys granting `need`, tested against the caller's principals.
        return "exists (select 1 from jsonb_each(\(alias).acl) e where e.key = any($\(binds.count)::text[])"
            + " and e.value->>'\(need)' = 'true')"
    }

    /// Creates a role with its relations in one transaction: 137 for a name already taken, 106
    /// for a pointer to no user or role.
    func create(_ write: ParseRoleWrite) throws -> Role {
        let objectId = ParseObjectID.generate()
        return try pool.transaction { connection in
            let rows = try Self.mappingDuplicates {
                try connection.query(
                    "insert into roles (object_id, name, acl) values ($1, $2, $3::jsonb) returning \(Self.columns)",
                    [objectId, write.name ?? "", (write.acl ?? ParseACL(grants: [])).json])
            }
            try Self.apply(write, to: objectId, connection)
            return try Self.role(rows.first!)
        }
    }

    /// Changes a role the caller may write: its ACL and relations. The name is immutable (a name
    /// sent unchanged is accepted, as the SDKs send it back). 101 when missing or not writable.
    func update(_ objectId: String, _ write: ParseRoleWrite, access: ParseAccess) throws -> Date {
        try pool.transaction { connection in
            var binds: [PostgresBindable?] = [objectId]
            let filter = Self.filter(access, need: "write", binds: &binds)
            guard
                let row = try connection.query(
                    "select name from roles r where r.object_id = $1 and \(filter) for update", binds
                ).first
            else { throw ParseError.objectNotFound() }
            if let name = write.name, name != (try row.decode(String.self, 0)) {
                throw ParseError.validationError("A role's name can only be set before it has been saved.")
            }
            if let acl = write.acl {
                try connection.query("update roles set acl = $2::jsonb where object_id = $1", [objectId, acl.json])
            }
            try Self.apply(write, to: objectId, connection)
            return try connection.query(
                "update roles set updated_at = clock_timestamp() where object_id = $1 returning updated_at", [objectId]
            ).first!.decode(Date.self, 0)
        }
    }

    /// Deletes a role the caller may write (its relation rows go with it); 101 otherwise.
    func delete(_ objectId: String, access: ParseAccess) throws {
        var binds: [PostgresBindable?] = [objectId]
        let filter = Self.filter(access, need: "write", binds: &binds)
        guard try pool.query("delete from roles r where r.object_id = $1 and \(filter) returning 1", binds).count == 1
        else {
            throw ParseError.objectNotFound()
        }
    }

    /// The roles matching `conditions` (SQL on `r`, with `binds`) that `access` may read, a page
    /// in `order`, and their count when asked.
    func find(
        conditions: [String], binds: [PostgresBindable?], access: ParseAccess, order: String, limit: Int, skip: Int,
        count: Bool
    ) throws -> (roles: [Role], count: Int64?) {
        var binds = binds
        let readable = Self.filter(access, need: "read", binds: &binds)
        let whereSQL = (conditions + [readable]).joined(separator: " and ")
        return try pool.withConnection { connection in
            var roles: [Role] = []
            if limit > 0 {
                roles = try connection.query(
                    "select \(Self.columns) from roles r where \(whereSQL) order by \(order) limit \(limit) offset \(skip)",
                    binds,
                    retry: .safe
                ).map(Self.role)
            }
            let total =
                count
                ? try connection.query("select count(*) from roles r where \(whereSQL)", binds, retry: .safe).first?
                    .decode(Int64.self, 0)
                : nil
            return (roles, total)
        }
    }

    /// The members of a relation of a role `access` may read (`$relatedTo`), at most `limit`; 101
    /// for a role it may not read.
    func related(_ relation: ParseRoleWrite.Relation, of roleId: String, access: ParseAccess, limit: Int) throws
        -> [String]
    {
        var binds: [PostgresBindable?] = [roleId]
        let readable = Self.filter(access, need: "read", binds: &binds)
        guard
            try pool.query("select 1 from roles r where r.object_id = $1 and \(readable)", binds, retry: .safe).count
                == 1
        else {
            throw ParseError.objectNotFound()
        }
        let sql =
            relation == .users
            ? "select user_id from role_users where role_id = $1 order by user_id limit \(limit + 1)"
            : "select child_id from role_roles where parent_id = $1 order by child_id limit \(limit + 1)"
        let ids = try pool.query(sql, [roleId], retry: .safe).map { try $0.decode(String.self, 0) }
        guard ids.count <= limit else {
            throw ParseError.invalidQuery(
                "$relatedTo: the relation holds more than \(limit) objects; query in smaller steps.")
        }
        return ids
    }

    /// Runs a write's relation changes on role `objectId`: 106 when a pointer names no such object.
    private static func apply(_ write: ParseRoleWrite, to objectId: String, _ connection: PostgresConnection) throws {
        for (relation, change) in [(ParseRoleWrite.Relation.users, write.users), (.roles, write.roles)] {
            let (table, column, targets) =
                relation == .users
                ? ("role_users", "user_id", "users") : ("role_roles", "child_id", "roles")
            let owner = relation == .users ? "role_id" : "parent_id"
            if !change.added.isEmpty {
                let ids = Array(Set(change.added))
                let found = try connection.query(
                    "select count(*) from \(targets) where object_id = any($1::text[])", [ids]
                )
                .first!.decode(Int64.self, 0)
                guard found == Int64(ids.count) else {
                    throw ParseError.invalidPointer(
                        "\(relation.rawValue) names a \(relation.targetClass) that does not exist.")
                }
                try connection.query(
                    "insert into \(table) (\(owner), \(column)) select $1, unnest($2::text[]) on conflict do nothing",
                    [objectId, ids])
            }
            if !change.removed.isEmpty {
                try connection.query(
                    "delete from \(table) where \(owner) = $1 and \(column) = any($2::text[])",
                    [objectId, change.removed])
            }
        }
    }

    private static func role(_ row: PostgresRow) throws -> Role {
        Role(
            objectId: try row.decode(String.self, 0), name: try row.decode(String.self, 1),
            acl: try row.decode(String.self, 2),
            createdAt: try row.decode(Date.self, 3), updatedAt: try row.decode(Date.self, 4))
    }

    /// 137 (Parse Server's duplicate value) for a name another role has.
    private static func mappingDuplicates<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresError {
            if case .server(let state, _, _, _) = error, state == .uniqueViolation {
                throw ParseError.duplicateValue(
                    "A duplicate value for a field with unique values was provided: a role with this name exists.")
            }
            throw error
        }
    }
}
