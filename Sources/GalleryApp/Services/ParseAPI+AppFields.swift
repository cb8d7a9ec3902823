import Foundation
import Postgres

/// Saves of a built-in class's fields of an app's own (`BuiltInAppFields`, docs/decisions/042):
/// a body is split into the members its fixed schema knows, which `ParseWriteBody` checks as
/// before, and the others, which are parsed as a custom class's fields are (111 for a value of
/// the wrong type, 105 for a bad name). A field the body names that the class lacks is added
/// first, as Parse Server's save adds it, when the master key or the class's `addField`
/// permission allows (119 otherwise; built-in classes grant it to no one by default).
extension ParseAPI {
    /// The app fields' changes of one write: the new value of each `app_<n>` column.
    typealias AppFieldChanges = [(column: String, change: CustomObjectWrite.Change)]

    /// `body` of a write to the built-in class `schema` split in two: the members its fixed
    /// schema knows (with `objectId`, `createdAt`, `updatedAt` and `deletedAt`, which
    /// `ParseWriteBody` answers: the trash is no app field, even on GalleryItem) and, when
    /// there are any, the others. A body that is no JSON object is left whole
    /// for `ParseWriteBody` to refuse.
    func splitAppFields(_ body: [UInt8], of schema: ParseClassSchema) throws -> (fixed: [UInt8], app: [UInt8]?) {
        guard body.count <= limits.maxBodyBytes,
            case .object(let object) = try ParseJSONParser.parse(body, maxDepth: limits.maxJSONDepth)
        else { return (body, nil) }
        // An ACL is no app field: on a class without one (GalleryItem, whose items are seen by
        // whoever may read their gallery) it is refused here, before anything is written, rather
        // than taken for a column the table lacks.
        if object["ACL"] != nil, schema.field(named: "ACL") == nil {
            throw ParseError.invalidKeyName(
                "invalid field name: \"ACL\" for class \(schema.className): its objects have no ACL of their own"
                    + (schema.className == "GalleryItem" ? " (an item is visible to whoever may read its gallery)" : "")
            )
        }
        let isFixed = { (name: String) in
            schema.field(named: name) != nil || ["objectId", "createdAt", "updatedAt", "deletedAt"].contains(name)
        }
        let app = object.members.filter { !isFixed($0.key) }
        guard !app.isEmpty else { return (body, nil) }
        func json(_ members: [ParseJSONObject.Member]) -> [UInt8] {
            var writer = ParseJSONWriter()
            writer.value(.object(ParseJSONObject(members)))
            return writer.bytes
        }
        return (json(object.members.filter { isFixed($0.key) }), json(app))
    }

    /// The changes `appBody` (from `splitAppFields`) makes to the app fields of `schema`, once
    /// the fields it names that the class lacks are added (with the type their values give
    /// them): nil without a body.
    func appFieldChanges(_ appBody: [UInt8]?, of schema: ParseClassSchema, access: ParseAccess) throws
        -> AppFieldChanges?
    {
        guard let appBody else { return nil }
        let appFields = schemas.appFields
        let write = try CustomObjectWrite.parse(
            appBody, className: schema.className, custom: try appFields.fields(of: schema), limits: limits)
        guard !write.newFields.isEmpty else { return write.changes }
        try requireBuiltIn(.addField, schema.className, access)
        let added = try appFields.changing { connection -> CustomClass in
            var current = try appFields.lock(on: connection, schema)
            for (name, type) in write.newFields {
                if let existing = current.field(named: name), existing.type != type {
                    // Another save added it meanwhile, with another type.
                    throw ParseError.incorrectType(
                        "schema mismatch for \(schema.className).\(name); expected \(existing.type.description) but got \(type.description)"
                    )
                }
                current = try appFields.addField(on: connection, schema, current, name, type)
            }
            try appFields.store(on: connection, current)
            return current
        }
        return try CustomObjectWrite.parse(appBody, className: schema.className, custom: added, limits: limits).changes
    }

    /// Writes `changes` to the object `objectId` of `table` and moves its updatedAt; the new
    /// updatedAt (nil when there is no such row).
    static func applyAppFields(
        _ changes: AppFieldChanges, table: String, objectId: String, on connection: PostgresConnection
    ) throws -> Date? {
        var binds = ParseSQLCompiler.Binds()
        var sets = ["updated_at = now()"]
        for (column, change) in changes {
            sets.append("\(column) = " + CustomObjectWrite.expression(change, column: column, binds: &binds))
        }
        let id = binds.add(.text(objectId), cast: "text")
        return try connection.query(
            "update \(table) set \(sets.joined(separator: ", ")) where object_id = \(id) returning updated_at",
            binds.values.postgresBinds
        ).first?.decode(Date.self, 0)
    }

    /// `applyAppFields` on a pooled connection, after a create or an item's move.
    func applyAppFields(_ changes: AppFieldChanges?, _ schema: ParseClassSchema, objectId: String) throws -> Date? {
        guard let changes, !changes.isEmpty else { return nil }
        return try pool.withConnection {
            try Self.applyAppFields(changes, table: schema.table, objectId: objectId, on: $0)
        }
    }
}
