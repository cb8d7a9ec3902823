/// The query inside `$inQuery`, `$notInQuery`, `$select` or `$dontSelect`: a class, its validated
/// `where` and the key whose values the outer field is compared with. Compiled into the outer
/// statement as a SQL subquery (never run on its own), over the rows the caller may read of that
/// class (`ParseSQLCompiler.accessFilter`), without trashed rows.
public struct ParseSubquery: Equatable, Sendable {
    /// The subquery's class.
    public let schema: ParseClassSchema
    /// Its `where`, nil for every row.
    public let condition: ParseCondition?
    /// The field whose values are selected (`objectId` for `$inQuery`).
    public let key: String

    /// A subquery over `schema`.
    public init(schema: ParseClassSchema, condition: ParseCondition?, key: String) {
        self.schema = schema
        self.condition = condition
        self.key = key
    }

    public static func == (a: ParseSubquery, b: ParseSubquery) -> Bool {
        a.schema.table == b.schema.table && a.condition == b.condition && a.key == b.key
    }
}
