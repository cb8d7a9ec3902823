/// What one Parse query runs: the page of rows, the count, and how to write the rows.
public struct ParseCompiledQuery: Sendable {
    /// The statement selecting the page of rows; nil when `limit=0` (nothing to fetch).
    public let select: ParseSQLStatement?
    /// The statement counting all matching rows (one row, one bigint column); nil unless
    /// `count` was asked for.
    public let count: ParseSQLStatement?
    /// What each row holds and how to encode it (pass to `ParseObjectEncoder`).
    public let projection: ParseProjection
}
