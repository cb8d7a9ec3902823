/// SQL text with `$1…$n` placeholders and the values bound to them, in order.
public struct ParseSQLStatement: Equatable, Sendable {
    /// The SQL text; it never contains a client-supplied value.
    public var sql: String
    /// The values for `$1…$n`.
    public var binds: [SQLValue]

    /// A statement.
    public init(sql: String, binds: [SQLValue]) {
        self.sql = sql
        self.binds = binds
    }
}
