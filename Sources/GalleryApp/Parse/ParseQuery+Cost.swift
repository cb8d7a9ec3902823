/// Which query shapes are expensive: those no index bounds, so they may read much of a table.
extension ParseQuery {
    /// A `skip` above this counts as expensive (the database reads and discards every skipped row).
    public static let expensiveSkip = 1_000

    /// Whether the query may scan much of its table: an unanchored `$regex` (an anchored prefix
    /// becomes an index range and is cheap) or a deep `skip`. Such queries run through the
    /// `ExpensiveQueryGate`.
    public var isExpensive: Bool {
        skip > Self.expensiveSkip || (condition.map(Self.scansTable) ?? false)
    }

    static func scansTable(_ condition: ParseCondition) -> Bool {
        switch condition {
        case .regex: return true
        case .and(let parts), .or(let parts): return parts.contains(where: scansTable)
        case .not(let part): return scansTable(part)
        default: return false
        }
    }
}
