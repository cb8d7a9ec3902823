/// `$inQuery`, `$notInQuery`, `$select`, `$dontSelect` and a `where` on a Relation field as SQL
/// subqueries of the one statement (Parse Server runs each subquery first and sends its results
/// back as an `$in` list; here the planner joins them, so a subquery matching a million rows
/// costs no list and no round trip).
extension ParseSQLCompiler {
    /// `outer in (select key from … where …)`, or for `negated` `outer is null or not exists (…)`
    /// (a null field matches, as with `$nin`). The subquery reads only the rows `access` may
    /// read of its class (`accessFilter`) and no trashed row (nor a GalleryItem whose photo or
    /// gallery is trashed).
    static func subquerySQL(
        _ outer: String, _ subquery: ParseSubquery, negated: Bool, binds: inout Binds, access: ParseAccess
    ) -> String {
        binds.subqueryCount += 1
        let alias = "s\(binds.subqueryCount)"
        let schema = subquery.schema
        var terms: [String] = []
        if let condition = subquery.condition {
            terms.append(conditionSQL(condition, schema: schema, binds: &binds, alias: alias, access: access))
        }
        if let filter = accessFilter(schema, alias: alias, access: access, need: .read, binds: &binds) {
            terms.append(filter)
        }
        if schema.hasTrash { terms.append("\(alias).deleted_at is null") }
        for name in schema.hiddenWithTrashedTargets {
            guard let field = schema.field(named: name), let className = field.pointerClassName,
                let target = ParseClassSchema.named(className), target.hasTrash
            else { continue }
            terms.append(
                "exists (select 1 from \(target.table) x where x.object_id = \(alias).\(columnName(field))"
                    + " and x.deleted_at is null)")
        }
        let key = schema.field(named: subquery.key).map { "\(alias).\(columnName($0))" } ?? "null"
        if negated {
            terms.append("\(key) = \(outer)")
            return "(\(outer) is null or not exists (select 1 from \(schema.table) \(alias) where "
                + terms.joined(separator: " and ") + "))"
        }
        let filter = terms.isEmpty ? "" : " where " + terms.joined(separator: " and ")
        return "\(outer) in (select \(key) from \(schema.table) \(alias)\(filter))"
    }

    /// `alias.object_id in (select owning_id from <join> where related_id in (<targets>))`: the
    /// object's relation holds one of the targets. The pairs are read by `related_id` (the join
    /// table's `(related_id, owning_id)` index); the targets are a subquery of their class with its
    /// access filter, so a target the caller may not read is held by no object
    /// (docs/decisions/046). The join table is named by the server (`ParseRelationField`).
    static func relationSQL(
        _ alias: String, joinTable: String, targets: ParseSubquery, binds: inout Binds, access: ParseAccess
    ) -> String {
        binds.subqueryCount += 1
        let pairs = "j\(binds.subqueryCount)"
        let head = "\(alias).object_id in (select \(pairs).owning_id from \(joinTable) \(pairs) where "
        if let id = singleTarget(targets.condition) {
            // One object (`{"likes":<pointer>}`, `$ne`): its pairs read by the id itself, and the
            // target tested with constants only, run once, as `$relatedTo`'s owner (043); the
            // `in (…)` semi-join below hid the id from the planner (a page 15× slower, 046).
            let placeholder = binds.add(.text(id), cast: "text")
            return head + "\(pairs).related_id = \(placeholder) and "
                + subquerySQL(placeholder, targets, negated: false, binds: &binds, access: access) + ")"
        }
        return head + subquerySQL("\(pairs).related_id", targets, negated: false, binds: &binds, access: access) + ")"
    }

    /// The objectId a relation's targets name when they name one (alone or narrowed by pointer permissions).
    private static func singleTarget(_ condition: ParseCondition?) -> String? {
        switch condition {
        case .compare("objectId", .equal, .text(let id))?: return id
        case .and(let parts)?: return parts.first.flatMap { singleTarget($0) }
        default: return nil
        }
    }
}
