/// Compiles a validated `ParseQuery` into parameterized PostgreSQL. Identifiers come only from
/// `ParseClassSchema`; every client value is a bind (`$n`, cast to its type so the driver may
/// send all values as untyped text). Table aliases: `t` the queried table, `p`/`g` the joined
/// photo/gallery of a GalleryItem, `cp` a Gallery's cover photo.
public enum ParseSQLCompiler {
    /// The statements for `query`.
    public static func compile(_ query: ParseQuery) -> ParseCompiledQuery {
        var select: ParseSQLStatement?
        if query.limit > 0 {
            select = selectStatement(query)
        }
        var count: ParseSQLStatement?
        if query.count {
            count = countStatement(query)
        }
        return ParseCompiledQuery(select: select, count: count, projection: query.projection)
    }

    /// Collects bind values and hands out their placeholders.
    struct Binds {
        var values: [SQLValue] = []
        /// Subqueries made so far: each gets its own table alias (`s1`, `s2`, …).
        var subqueryCount = 0

        mutating func add(_ value: SQLValue, cast: String) -> String {
            values.append(value)
            return "$\(values.count)::\(cast)"
        }
    }

    private static func selectStatement(_ query: ParseQuery) -> ParseSQLStatement {
        let schema = query.schema
        let projection = query.projection
        var binds = Binds()
        // A user's Photo page reads their own rows and the rows shared with them as two ordered
        // branches (ParseSQLCompiler+SharedRows), so each keeps its index; the filter is inside.
        let branches = sharedPhotoBranches(query, binds: &binds)
        let whereSQL = branches == nil ? whereClause(query, binds: &binds) : ""

        var columns: [String] = []
        for field in projection.fields {
            if case .selfOnly(let column) = field.source {
                columns.append(selfOnlyExpression(column, access: query.access, binds: &binds))
                continue
            }
            if let pointers = projection.revealedBy[field.name] {
                columns.append(revealedExpression(field, pointers: pointers, access: query.access, binds: &binds))
                continue
            }
            columns.append(
                selectExpression(field, table: "t", prefix: "", included: projection.includes[field.name] != nil))
        }
        var joins: [String] = []
        for field in schema.fields {
            guard let included = projection.includes[field.name], let alias = field.joinAlias else { continue }
            for includedField in included.fields {
                columns.append(selectExpression(includedField, table: alias, prefix: alias + "__", included: false))
            }
            if field.source == .coverPhoto {
                let coverColumns = included.fields.map { "ph.\(columnName($0))" }.joined(separator: ", ")
                joins.append(
                    "left join lateral (select \(coverColumns) from gallery_items gi join photos ph on ph.object_id = gi.photo_id"
                        + " where gi.gallery_id = t.object_id and ph.deleted_at is null order by gi.position limit 1) \(alias) on true"
                )
            }
        }
        joins.append(contentsOf: targetJoins(query, forCount: false))
        if projection.includesScore, let term = query.searchTerm, let searchColumn = schema.searchColumn {
            let placeholder = binds.add(.text(term), cast: "text")
            columns.append("ts_rank(t.\(searchColumn), websearch_to_tsquery('simple', \(placeholder))) as score")
        }

        var sql = "select " + columns.joined(separator: ", ") + " from " + (branches ?? "\(schema.table) t")
        for join in joins { sql += " " + join }
        if !whereSQL.isEmpty { sql += " where " + whereSQL }
        sql += " order by " + orderClause(query)
        sql += " limit " + binds.add(.int(Int64(query.limit)), cast: "bigint")
        sql += " offset " + binds.add(.int(Int64(query.skip)), cast: "bigint")
        return ParseSQLStatement(sql: sql, binds: binds.values)
    }

    private static func countStatement(_ query: ParseQuery) -> ParseSQLStatement {
        let schema = query.schema
        if query.condition == nil, query.hidesTrashed || schema.isCustom, let counter = schema.liveCountName {
            // O(1): the counters the database keeps by trigger (the whole table's; a user's own
            // photos, or the galleries they may read: the public ones plus their own and those
            // granted to them, migrations/0014 and 0015). Names are schema constants. No row answers 0.
            switch query.access.caller {
            case _ where schema.isCustom:
                // A custom class's counter is named by the server (`custom_<n>`), never by a client;
                // the rows the caller's ACLs hide are subtracted.
                return CustomObjectACL.countSQL(table: schema.table, counter: counter, access: query.access)
            case .master:
                return ParseSQLStatement(sql: "select n from row_counts where name = '\(counter)'", binds: [])
            case .anonymous where query.access.publicRead && schema.publicLiveCountName != nil:
                // The public rows.
                return ParseSQLStatement(
                    sql: "select n from row_counts where name = '\(schema.publicLiveCountName!)'", binds: [])
            case .anonymous where !query.access.publicRead:
                // Nothing: no row answers 0.
                return ParseSQLStatement(sql: "select n from row_counts where \(noRowsSQL)", binds: [])
            case .user(let userId)
            where schema.userCountName != nil && (schema.className == "Photo" || query.access.roleNames.isEmpty):
                // (A gallery granted to a user's roles is counted for real below: the counters are
                // per grantee, and one gallery may grant the user and several of their roles.)
                let own =
                    "select n from owner_row_counts where owner_id = $1::text and name = '\(schema.userCountName!)'"
                guard let publicCounter = schema.publicLiveCountName else {
                    // Photo: the user's own, plus the others' photos shared with them (few, on
                    // the partial index of shared photos).
                    let shared =
                        "select count(*) from photos t where t.deleted_at is null and t.readers <> '{}'"
                        + " and t.readers && $2::text[] and t.owner_id is distinct from $1::text"
                    return ParseSQLStatement(
                        sql: "select coalesce((\(own)), 0) + (\(shared))",
                        binds: [.text(userId), .textArray(query.access.principals)])
                }
                return ParseSQLStatement(
                    sql:
                        "select coalesce((select n from row_counts where name = '\(publicCounter)'), 0) + coalesce((\(own)), 0)",
                    binds: [.text(userId)])
            default:
                break  // counted below
            }
        }
        var binds = Binds()
        let whereSQL = whereClause(query, binds: &binds)
        var sql = "select count(*) from \(schema.table) t"
        for join in targetJoins(query, forCount: true) { sql += " " + join }
        if !whereSQL.isEmpty { sql += " where " + whereSQL }
        return ParseSQLStatement(sql: sql, binds: binds.values)
    }

    /// Inner joins to a GalleryItem's photo and gallery: needed to hide items whose targets are
    /// trashed, and to expand them with `include`.
    private static func targetJoins(_ query: ParseQuery, forCount: Bool) -> [String] {
        var joins: [String] = []
        for name in query.schema.hiddenWithTrashedTargets {
            guard let field = query.schema.field(named: name), let alias = field.joinAlias,
                let className = field.pointerClassName, let target = ParseClassSchema.named(className)
            else { continue }
            let included = !forCount && query.projection.includes[name] != nil
            if query.hidesTrashed || included {
                joins.append("join \(target.table) \(alias) on \(alias).object_id = t.\(columnName(field))")
            }
        }
        return joins
    }

    /// The WHERE text (without the keyword): the condition and the implicit trash filter.
    /// `withAccess: false` leaves the access filter to the caller (`sharedPhotoBranches`).
    static func whereClause(_ query: ParseQuery, binds: inout Binds, withAccess: Bool = true) -> String {
        var parts: [String] = []
        if let condition = query.condition {
            parts.append(conditionSQL(condition, schema: query.schema, binds: &binds, access: query.access))
        }
        if withAccess,
            let filter = accessFilter(query.schema, alias: "t", access: query.access, need: .read, binds: &binds)
        {
            parts.append(filter)
        }
        if query.hidesTrashed {
            if query.schema.hasTrash { parts.append("t.deleted_at is null") }
            for name in query.schema.hiddenWithTrashedTargets {
                if let alias = query.schema.field(named: name)?.joinAlias {
                    parts.append("\(alias).deleted_at is null")
                }
            }
        } else {
            parts.append(contentsOf: trashFilter(query, binds: &binds))
        }
        return parts.joined(separator: " and ")
    }

    static func orderClause(_ query: ParseQuery) -> String {
        var terms: [String] = []
        var hasObjectId = false
        var lastDescending = true
        for key in query.order {
            switch key {
            case .score:
                terms.append("score desc")
                lastDescending = true
            case .field(let name, let descending):
                guard let field = query.schema.field(named: name) else { continue }
                if name == "objectId" { hasObjectId = true }
                terms.append("t.\(columnName(field))" + (descending ? " desc" : " asc"))
                lastDescending = descending
            }
        }
        if terms.isEmpty {
            terms.append("t.created_at desc")
            lastDescending = true
        }
        if !hasObjectId {
            // A unique tie-breaker makes pages stable; same direction so one index scan serves.
            terms.append("t.object_id" + (lastDescending ? " desc" : " asc"))
        }
        return terms.joined(separator: ", ")
    }

    static func columnName(_ field: ParseField) -> String {
        if case .column(let column) = field.source { return column }
        return field.column
    }

    /// The select-list entry of a `selfOnly` column of `t`: the value for the master key, on the
    /// caller's own row for a user, never without a session.
    private static func selfOnlyExpression(_ column: String, access: ParseAccess, binds: inout Binds) -> String {
        switch access.caller {
        case .master:
            return "t.\(column)"
        case .user(let userId):
            return "case when t.object_id = \(binds.add(.text(userId), cast: "text")) then t.\(column) end as \(column)"
        case .anonymous:
            return "null::text as \(column)"
        }
    }

    /// The select-list entry for `field` of the row aliased `table`.
    static func selectExpression(_ field: ParseField, table: String, prefix: String, included: Bool) -> String {
        switch field.source {
        case .column(let column), .selfOnly(let column):
            return prefix.isEmpty ? "\(table).\(column)" : "\(table).\(column) as \(prefix)\(column)"
        case .displaySizes:
            // What `ParseObjectEncoder` needs to write every size: id, preview key and size.
            return
                "concat_ws(' ', \(table).object_id, \(table).preview_key, \(table).preview_width, \(table).preview_height)"
                + " as \(prefix)\(field.column)"
        case .coverPhoto:
            if included, let alias = field.joinAlias {
                return "\(alias).object_id as \(prefix)\(field.column)"
            }
            return "(select gi.photo_id from gallery_items gi join photos ph on ph.object_id = gi.photo_id"
                + " where gi.gallery_id = \(table).object_id and ph.deleted_at is null order by gi.position limit 1)"
                + " as \(prefix)\(field.column)"
        }
    }

    /// SQL for a condition on the table aliased `alias` (`t`, the queried table; `s<n>` inside a
    /// subquery, whose rows are those `access` may read).
    static func conditionSQL(
        _ condition: ParseCondition, schema: ParseClassSchema, binds: inout Binds, alias: String = "t",
        access: ParseAccess
    ) -> String {
        func column(_ name: String) -> String {
            // The parser only produces known, queryable fields.
            guard let field = schema.field(named: name) else { return "null" }
            return "\(alias).\(columnName(field))"
        }
        func inner(_ part: ParseCondition) -> String {
            conditionSQL(part, schema: schema, binds: &binds, alias: alias, access: access)
        }
        switch condition {
        case .and(let parts):
            if parts.isEmpty { return "true" }
            return "(" + parts.map(inner).joined(separator: " and ") + ")"
        case .or(let parts):
            if parts.isEmpty { return "false" }
            if let keyset = keysetComparison(parts) {
                // `(a, b) < ($1, $2)`: the same rows, but one index range on (a, b) instead of a
                // filter that reads every row before the cursor.
                return "(\(column(keyset.first)), \(column(keyset.second))) \(keyset.op.rawValue) ("
                    + binds.add(keyset.firstValue, cast: keyset.firstValue.sqlCast) + ", "
                    + binds.add(keyset.secondValue, cast: keyset.secondValue.sqlCast) + ")"
            }
            return "(" + parts.map(inner).joined(separator: " or ") + ")"
        case .not(let part):
            return "not (" + inner(part) + ")"
        case .compare(let field, let op, let value):
            return "\(column(field)) \(op.rawValue) " + binds.add(value, cast: value.sqlCast)
        case .isNull(let field, let isNull):
            return "\(column(field)) is " + (isNull ? "null" : "not null")
        case .inList(let field, let values, let orNull, let negated):
            let hasDouble = values.contains { if case .double = $0 { return true } else { return false } }
            let cast = hasDouble ? "float8" : (schema.field(named: field)?.type.sqlCast ?? "text")
            var array = binds.add(.textArray(values.map(\.arrayElementText)), cast: "text[]")
            if cast != "text" { array += "::\(cast)[]" }
            let any = "\(column(field)) = any(\(array))"
            switch (negated, orNull) {
            case (false, false): return any
            case (false, true): return "(\(any) or \(column(field)) is null)"
            case (true, false): return "(\(column(field)) is null or not \(any))"
            case (true, true): return "(\(column(field)) is not null and not \(any))"
            }
        case .arrayContainsAll(let field, let strings):
            return "\(column(field)) @> " + binds.add(.textArray(strings), cast: "text[]")
        case .arrayOverlaps(let field, let strings):
            return "\(column(field)) && " + binds.add(.textArray(strings), cast: "text[]")
        case .arrayEquals(let field, let strings):
            return "\(column(field)) = " + binds.add(.textArray(strings), cast: "text[]")
        case .hasPrefix(let field, let prefix):
            // A range with the `text_pattern_ops` operators rather than `LIKE $1`: the statement is
            // prepared once, and a generic plan cannot turn a LIKE parameter into an index range.
            if prefix.isEmpty { return "\(column(field)) is not null" }
            let lower = "\(column(field)) ~>=~ " + binds.add(.text(prefix), cast: "text")
            guard let upper = ParseRegex.prefixUpperBound(prefix) else { return lower }
            return "(\(lower) and \(column(field)) ~<~ " + binds.add(.text(upper), cast: "text") + ")"
        case .regex(let field, let pattern, let caseInsensitive):
            return "\(column(field)) \(caseInsensitive ? "~*" : "~") " + binds.add(.text(pattern), cast: "text")
        case .textSearch(let term):
            let searchColumn = schema.searchColumn ?? "search"
            return "\(alias).\(searchColumn) @@ websearch_to_tsquery('simple', " + binds.add(.text(term), cast: "text")
                + ")"
        case .inSubquery(let field, let subquery, let negated):
            return subquerySQL(column(field), subquery, negated: negated, binds: &binds, access: access)
        case .relatedTo(let joinTable, let owningId, let owner):
            // The join table is named by the server (`ParseRelationField`). The pairs are read by the
            // owner's id itself (the join table's index); the owner, read as a subquery of its class
            // with its access filter, is a test of constants the planner runs once: an owner the
            // caller may not read relates nothing (docs/decisions/043).
            let id = binds.add(.text(owningId), cast: "text")
            return "\(alias).object_id in (select r.related_id from \(joinTable) r where r.owning_id = \(id) and "
                + subquerySQL(id, owner, negated: false, binds: &binds, access: access) + ")"
        case .inRelation(_, let joinTable, let targets):
            return relationSQL(alias, joinTable: joinTable, targets: targets, binds: &binds, access: access)
        case .arrayContainedBy(let field, let values):
            let cast = schema.field(named: field)?.type == .stringArray ? "text[]" : "jsonb"
            return "\(column(field)) <@ " + binds.add(values, cast: cast)
        }
    }
}

extension ParseSQLCompiler {
    /// A keyset-pagination cursor written as Parse clients can: `{"$or":[{"a":{"$lt":x}},
    /// {"a":x,"b":{"$lt":y}}]}` (or `$gt`, branches in either order), which is exactly the row
    /// comparison `(a, b) < (x, y)`. Nil for any other `$or`.
    struct KeysetComparison: Equatable {
        var first: String
        var second: String
        var op: ParseComparison
        var firstValue: SQLValue
        var secondValue: SQLValue
    }

    static func keysetComparison(_ parts: [ParseCondition]) -> KeysetComparison? {
        guard parts.count == 2 else { return nil }
        for (strict, tie) in [(parts[0], parts[1]), (parts[1], parts[0])] {
            guard case .compare(let first, let op, let firstValue) = strict, op == .lessThan || op == .greaterThan,
                firstValue != .null, case .and(let tieParts) = tie, tieParts.count == 2
            else { continue }
            for (equal, next) in [(tieParts[0], tieParts[1]), (tieParts[1], tieParts[0])] {
                guard case .compare(let equalField, .equal, let equalValue) = equal, equalField == first,
                    equalValue == firstValue, case .compare(let second, let secondOp, let secondValue) = next,
                    secondOp == op, second != first, secondValue != .null
                else { continue }
                return KeysetComparison(
                    first: first, second: second, op: op, firstValue: firstValue, secondValue: secondValue)
            }
        }
        return nil
    }
}

extension SQLValue {
    /// The PostgreSQL type a placeholder holding this value is cast to.
    var sqlCast: String {
        switch self {
        case .null, .text: return "text"
        case .int: return "bigint"
        case .double: return "float8"
        case .bool: return "boolean"
        case .timestamp: return "timestamptz"
        case .textArray: return "text[]"
        }
    }

    /// The value as text inside a PostgreSQL array literal element (input syntax of its type).
    var arrayElementText: String {
        switch self {
        case .null: return ""
        case .text(let text): return text
        case .int(let int): return String(int)
        case .double(let double): return double.description
        case .bool(let bool): return bool ? "true" : "false"
        case .timestamp(let date): return ParseDate.format(date)
        case .textArray(let strings): return strings.joined(separator: ",")
        }
    }
}
