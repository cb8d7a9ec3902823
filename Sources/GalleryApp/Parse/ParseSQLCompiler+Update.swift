/// The write side of the compiler: a PUT body's plain assignments as one `UPDATE`, and the row
/// lock a write takes first.
extension ParseSQLCompiler {
    /// `UPDATE … SET … WHERE object_id = $n RETURNING updated_at` for a PUT body's plain
    /// assignments (strings, numbers, arrays and array operations, whose new length is returned as
    /// `<column>_count`; `restore` clears `deleted_at`), or nil when the
    /// body assigns nothing. Pointer/File assignments and GalleryItem `position` (which must keep
    /// positions contiguous) are left to the domain services and skipped here.
    public static func update(_ body: ParseWriteBody, objectId: String) -> ParseSQLStatement? {
        var binds = Binds()
        var sets: [String] = []
        var returning = ["updated_at"]
        for assignment in body.assignments {
            guard let field = body.schema.field(named: assignment.field), case .column(let column) = field.source else {
                continue
            }
            if body.schema.className == "GalleryItem" && field.name == "position" { continue }
            switch assignment.value {
            case .string(let text): sets.append("\(column) = " + binds.add(.text(text), cast: "text"))
            case .int(let number): sets.append("\(column) = " + binds.add(.int(number), cast: field.type.sqlCast))
            case .stringArray(let strings): sets.append("\(column) = " + binds.add(.textArray(strings), cast: "text[]"))
            case .restore: sets.append("\(column) = null")
            case .acl(let acl): sets.append("\(column) = " + binds.add(.text(acl.json), cast: "jsonb"))
            case .arrayOperation(let operation, let strings):
                // Computed from the row's current value inside the UPDATE, so two clients adding
                // at once both land (the second re-reads the row the first committed).
                let objects = binds.add(.textArray(strings), cast: "text[]")
                switch operation {
                case .addUnique:
                    sets.append(
                        "\(column) = \(column) || array(select u.x from unnest(\(objects)) with ordinality u(x, i)"
                            + " where u.x <> all(\(column)) order by u.i)")
                case .remove:
                    sets.append(
                        "\(column) = array(select u.x from unnest(\(column)) with ordinality u(x, i)"
                            + " where u.x <> all(\(objects)) order by u.i)")
                }
                returning.append("cardinality(\(column)) as \(column)_count")
            case .pointer, .file: continue
            }
        }
        guard !sets.isEmpty else { return nil }
        sets.append("updated_at = date_trunc('milliseconds', now())")  // Parse dates carry milliseconds
        let id = binds.add(.text(objectId), cast: "text")
        return ParseSQLStatement(
            sql: "update \(body.schema.table) set " + sets.joined(separator: ", ")
                + " where object_id = \(id) returning "
                + returning.joined(separator: ", "),
            binds: binds.values)
    }

    /// `SELECT … FOR UPDATE` of the row a PUT changes: `deleted_at` (for classes with a trash),
    /// `updated_at`, and `unchanged`, whether every read-only field the body sent back still
    /// holds the value sent. Comparing in the statement that locks the row means a concurrent
    /// change is seen, never masked by an earlier read. Fields are compared as the encoder
    /// writes them: dates to the millisecond, files by name (the key's last segment).
    public static func lockForUpdate(
        _ body: ParseWriteBody, objectId: String, access: ParseAccess = .master, need: ParseAccessNeed = .edit
    ) -> ParseSQLStatement {
        let schema = body.schema
        var binds = Binds()
        let id = binds.add(.text(objectId), cast: "text")
        let filter =
            accessFilter(schema, alias: "t", access: access, need: need, binds: &binds).map { " and " + $0 } ?? ""
        var checks: [String] = []
        for expectation in body.expectations {
            guard let field = schema.field(named: expectation.field) else { continue }
            let current: String
            switch field.source {
            case .column(let column), .selfOnly(let column):
                switch field.type {
                case .date: current = "date_trunc('milliseconds', t.\(column))"
                case .file: current = "substring(t.\(column) from '[^/]*$')"
                default: current = "t.\(column)"
                }
            case .coverPhoto, .displaySizes:
                // The select-list expression without its trailing ` as <column>`.
                let expression = selectExpression(field, table: "t", prefix: "", included: false)
                current = String(expression.dropLast(" as \(field.column)".count))
            }
            if expectation.value == .null {
                checks.append("\(current) is null")
            } else {
                let cast = field.type == .double ? "float8" : expectation.value.sqlCast
                checks.append("\(current) is not distinct from " + binds.add(expectation.value, cast: cast))
            }
        }
        let unchanged = checks.isEmpty ? "true" : checks.joined(separator: " and ")
        let deletedAt = schema.hasTrash ? "t.deleted_at, " : ""
        return ParseSQLStatement(
            sql:
                "select \(deletedAt)t.updated_at, (\(unchanged)) as unchanged from \(schema.table) t where t.object_id = \(id)\(filter) for update of t",
            binds: binds.values)
    }
}
