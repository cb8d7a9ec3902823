extension ParseSQLCompiler {
    /// The FROM source of a user's Photo page: their own photos and the photos shared with them
    /// (ACL `readers` overlapping `ParseAccess.principals`, migration 0022) as two branches, each
    /// with the query's condition, order and `limit + skip` rows, merged and paged outside:
    ///
    ///     ((select t.* from photos t where <condition> and t.owner_id = $u order by <O> limit N)
    ///      union all
    ///      (select t.* from photos t where <condition> and <shared> and t.owner_id is distinct from $u
    ///       order by <O> limit N)) t
    ///
    /// One `owner = $u or readers && $p` filter would let PostgreSQL pick neither the owner's
    /// ordered index nor the readers' GIN index, and scan every newer row to find a user's 20
    /// oldest photos (138 ms on 100k rows against 0.2 ms: docs/decisions/032-roles-and-object-acls.md).
    /// The rows are the same: the branches are disjoint and together are exactly the filter's.
    /// A `$text` page ordered by its score orders each branch by the rank itself (the score is
    /// computed outside), so the owner's branch keeps `photos_owner_search_idx` (0016).
    /// Nil (one plain statement) for other classes and callers.
    static func sharedPhotoBranches(_ query: ParseQuery, binds: inout Binds) -> String? {
        guard query.schema.className == "Photo", case .user(let userId) = query.access.caller else { return nil }
        let condition = whereClause(query, binds: &binds, withAccess: false)
        let user = binds.add(.text(userId), cast: "text")
        let principals = binds.add(.textArray(query.access.principals), cast: "text[]")
        let rows = binds.add(.int(Int64(query.limit + query.skip)), cast: "bigint")
        var order = orderClause(query)
        if order.contains("score desc"), let term = query.searchTerm, let column = query.schema.searchColumn {
            let placeholder = binds.add(.text(term), cast: "text")
            order = order.replacingOccurrences(
                of: "score desc", with: "ts_rank(t.\(column), websearch_to_tsquery('simple', \(placeholder))) desc")
        }
        let common = condition.isEmpty ? "" : condition + " and "
        let own = "select t.* from photos t where \(common)t.owner_id = \(user) order by \(order) limit \(rows)"
        let shared =
            "select t.* from photos t where \(common)t.readers <> '{}' and t.readers && \(principals)"
            + " and t.owner_id is distinct from \(user) order by \(order) limit \(rows)"
        return "((\(own)) union all (\(shared))) t"
    }
}
