import Postgres

/// `include` through pointers that are not joined in the page's statement (a custom class's
/// pointers, dotted paths, `_User` owners): one statement per include and level, never one per
/// row (Parse Server's `includePath` makes one per class and level too).
extension ParseAPI {
    /// The objects `includes` reach from `rows` (read with `projection`), encoded as the answer
    /// writes them (`ParseObjectEncoder.included`). Each level reads the pointed-to objects by id
    /// with the caller's access filter and its class's pointer permissions, so an object a get of
    /// it would refuse the caller is left out, as is a deleted or trashed one.
    func includedObjects<Row: ParseRowSource>(
        _ includes: [ParseInclude], rows: [Row], projection: ParseProjection, access: ParseAccess,
        connection: PostgresConnection
    ) throws -> [String: [String: [UInt8]]] {
        var result: [String: [String: [UInt8]]] = [:]
        guard !rows.isEmpty else { return result }
        for include in includes {
            guard let index = projection.fields.firstIndex(where: { $0.name == include.field }) else { continue }
            var ids: [String] = []
            var seen: Set<String> = []
            for row in rows {
                guard let column = row.column(named: projection.resultColumns[index]), let id = try row.string(column),
                    seen.insert(id).inserted
                else { continue }
                ids.append(id)
            }
            var objects: [String: [UInt8]] = [:]
            if let target = include.schema, !ids.isEmpty {
                let named = ParseCondition.inList(
                    field: "objectId", values: ids.map(SQLValue.text), orNull: false, negated: false)
                var query = ParseQuery(
                    schema: target,
                    condition: include.rows.map { ParseCondition.and([named, $0]) } ?? named,
                    order: [], limit: ids.count, skip: 0, count: false,
                    projection: .all(target).hiding(
                        include.hidden,
                        revealedBy: target.className == ParseClassSchema.user.className
                            ? ParseClass.ownAccountRow(include.hidden) : [:]),
                    hidesTrashed: target.hasTrash || !target.hiddenWithTrashedTargets.isEmpty, searchTerm: nil)
                query.access = access
                if let select = ParseSQLCompiler.compile(query).select {
                    let found = Array(try connection.query(select.sql, select.binds.postgresBinds, retry: .safe))
                    var nested = encoder
                    nested.included = try includedObjects(
                        include.children, rows: found, projection: query.projection, access: access,
                        connection: connection)
                    let idColumn = found.first?.column(named: "object_id")
                    for row in found {
                        guard let idColumn, let id = try row.string(idColumn) else { continue }
                        var writer = ParseJSONWriter(capacity: 512)
                        try nested.write(row, projection: query.projection, into: &writer, asIncluded: true)
                        objects[id] = writer.bytes
                    }
                }
            }
            result[include.field] = objects
        }
        return result
    }
}
