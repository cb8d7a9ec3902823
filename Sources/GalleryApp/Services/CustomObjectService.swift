import Foundation
import Postgres

/// Creates, updates and deletes the objects of custom classes: the class-level permissions
/// first, then, in one transaction, any class or fields the body adds (`SchemaService`) and the
/// row itself, so a refused or failed write leaves the schema as it was.
struct CustomObjectService: Sendable {
    /// The schema changes a write may make.
    let schemas: SchemaService
    /// Query and body limits.
    let limits: ParseLimits
    /// Whether a caller without the master key may create a class by saving to it
    /// (`allow_client_class_creation`; such a class is open to everyone, as on Parse Server).
    let allowClientClassCreation: Bool

    /// The roles the caller of `access` holds (with inheritance), for the class-level permissions:
    /// resolved once per request by `ParseRoleResolver` into `ParseAccess.roleNames`.
    static func roles(of access: ParseAccess) -> Set<String> { Set(access.roleNames) }

    /// `POST /classes/<Class>` for a custom class (or one the save creates): the new objectId and createdAt.
    func create(_ className: String, body: [UInt8], access: ParseAccess) throws -> (objectId: String, createdAt: Date) {
        let caller = access.caller
        let custom = try schemas.catalog.lookup(className)
        if let custom {
            try custom.permissions.require(.create, on: className, caller: caller, roles: Self.roles(of: access))
        } else {
            guard ParseClassName.isValidClassName(className) else {
                throw ParseClassName.invalidClassNameError(className)
            }
            guard caller.isMaster || allowClientClassCreation else {
                throw ParseError.operationForbidden(
                    "This user is not allowed to access non-existent class: \(className)")
            }
        }
        let write = try CustomObjectWrite.parse(body, className: className, custom: custom, limits: limits)
        if let custom, !write.newFields.isEmpty {
            try custom.permissions.require(.addField, on: className, caller: caller, roles: Self.roles(of: access))
        }
        let objectId = ParseObjectID.generate()
        return try schemas.changing(className) { connection in
            var current = custom
            var final = write
            if current == nil || !write.newFields.isEmpty {
                let locked = try withNewFields(on: connection, className, write.newFields, caller: caller)
                current = locked
                final = try CustomObjectWrite.parse(body, className: className, custom: locked, limits: limits)
            }
            var binds = ParseSQLCompiler.Binds()
            var columns = ["object_id"]
            var values = [binds.add(.text(objectId), cast: "text")]
            for (column, change) in final.changes {
                columns.append(column)
                values.append(CustomObjectWrite.expression(change, column: nil, binds: &binds))
            }
            let sql =
                "insert into \(current!.table) (\(columns.joined(separator: ", "))) values (\(values.joined(separator: ", "))) returning created_at"
            let createdAt = try connection.query(sql, binds.values.postgresBinds).first!.decode(Date.self, 0)
            for relation in final.relationChanges { try relation.run(on: connection, owningId: objectId) }
            return (objectId, createdAt)
        }
    }

    /// `PUT /classes/<Class>/<objectId>`: the new updatedAt (101 when there is no such object).
    func update(_ custom: CustomClass, objectId: String, body: [UInt8], access: ParseAccess) throws -> Date {
        let caller = access.caller
        let grant = try custom.permissions.grant(
            .update, on: custom.className, caller: caller, roles: Self.roles(of: access))
        let write = try CustomObjectWrite.parse(body, className: custom.className, custom: custom, limits: limits)
        if !write.newFields.isEmpty {
            try custom.permissions.require(
                .addField, on: custom.className, caller: caller, roles: Self.roles(of: access))
        }
        return try schemas.changing(custom.className) { connection in
            var final = write
            var current = custom
            if !write.newFields.isEmpty {
                let locked = try withNewFields(on: connection, custom.className, write.newFields, caller: caller)
                current = locked
                final = try CustomObjectWrite.parse(body, className: custom.className, custom: locked, limits: limits)
            }
            var binds = ParseSQLCompiler.Binds()
            var sets = ["updated_at = now()"]
            for (column, change) in final.changes {
                sets.append("\(column) = " + CustomObjectWrite.expression(change, column: column, binds: &binds))
            }
            let id = binds.add(.text(objectId), cast: "text")
            let writable = CustomObjectACL.writableSQL(current, grant: grant, access: access, binds: &binds)
            let sql =
                "update \(current.table) set \(sets.joined(separator: ", ")) where object_id = \(id)\(writable) returning updated_at"
            guard let row = try connection.query(sql, binds.values.postgresBinds).first else {
                throw ParseError.objectNotFound()
            }
            for relation in final.relationChanges { try relation.run(on: connection, owningId: objectId) }
            return try row.decode(Date.self, 0)
        }
    }

    /// `DELETE /classes/<Class>/<objectId>` (101 when there is no such object).
    func delete(_ custom: CustomClass, objectId: String, access: ParseAccess) throws {
        let grant = try custom.permissions.grant(
            .delete, on: custom.className, caller: access.caller, roles: Self.roles(of: access))
        var binds = ParseSQLCompiler.Binds()
        let id = binds.add(.text(objectId), cast: "text")
        let writable = CustomObjectACL.writableSQL(custom, grant: grant, access: access, binds: &binds)
        let deleted = try schemas.pool.query(
            "delete from \(custom.table) where object_id = \(id)\(writable) returning 1", binds.values.postgresBinds)
        guard deleted.count == 1 else { throw ParseError.objectNotFound() }
    }

    /// The class locked (created first when it does not exist), with `fields` added: 111 for a
    /// field another write added meanwhile with another type.
    private func withNewFields(
        on connection: PostgresConnection, _ className: String, _ fields: [(name: String, type: CustomFieldType)],
        caller: ParseCaller
    ) throws -> CustomClass {
        var changed = false
        var custom: CustomClass
        if let locked = try schemas.lock(on: connection, className) {
            custom = locked
        } else {
            custom = try schemas.createClass(
                on: connection, className, permissions: caller.isMaster ? .masterOnly : .public, ifAbsent: true)
            changed = true
        }
        for (name, type) in fields {
            if let existing = custom.field(named: name) {
                guard existing.type == type else {
                    throw ParseError.incorrectType(
                        "schema mismatch for \(className).\(name); expected \(existing.type.description) but got \(type.description)"
                    )
                }
                continue
            }
            custom = try schemas.addField(on: connection, custom, name, type)
            changed = true
        }
        if changed { try schemas.store(on: connection, custom) }
        return custom
    }
}
