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
    /// Nil (one plain statement) for other classes and callers, and for a `$text` page ordered by
    /// its score (computed outside the branches).
    static func sharedPhotoBranches(_ query: ParseQuery, binds: inout Binds) -> String? {
        guard query.schema.className == "Photo", case .user(let userId) = query.access.caller,
            !query.order.contains(where: { if case .score = $0 { return true } else { return false } })
        else { return nil }
        let condition = whereClause(query, binds: &binds, withAccess: false)
        let user = binds.add(.text(userId), cast: "text")
        let principals = binds.add(.textArray(query.access.principals), cast: "text[]")
        let rows = binds.add(.int(Int64(query.limit + query.skip)), cast: "bigint")
        let order = orderClause(query)
        let common = condition.isEmpty ? "" : condition + " and "
        let own = "select t.* from photos t where \(common)t.owner_id = \(user) order by \(order) limit \(rows)"
        let shared = "select t.* from photos t where \(common)t.readers <> '{}' and t.readers && \(principals)"
            + " and t.owner_id is distinct from \(user) order by \(order) limit \(rows)"
        return "((\(own)) union all (\(shared))) t"
    }
}
