/// A class that another query reads — a subquery's (`$inQuery`, `$select`…), the owner of a
/// `$relatedTo`, the targets of a `where` on a Relation, an include's target — as the caller may
/// read it. Parse Server runs each of these as a query with the caller's auth, so the same rules
/// apply as to a find of that class: its
/// `protectedFields` may not be queried or selected, its pointer permissions (`readUserFields`)
/// narrow its rows, and the per-object ACLs (`ParseSQLCompiler.accessFilter`) filter them in SQL.
public struct ParseReadableClass: Sendable {
    /// The class's schema.
    public let schema: ParseClassSchema
    /// The fields its `protectedFields` hide from the caller: naming one is 119.
    public var hidden: Set<String> = []
    /// The condition its pointer permissions put on its rows (only those whose `readUserFields`
    /// point to the caller); nil for every row the ACLs let the caller read.
    public var rows: ParseCondition? = nil
    /// Whether its class-level permissions refuse the caller (only answered for a `$relatedTo`
    /// owner and the targets of a `where` on a Relation, which then have no readable object and
    /// relate nothing; other uses answer 119).
    public var refused = false

    /// A class read under `hidden` and `rows`.
    public init(
        schema: ParseClassSchema, hidden: Set<String> = [], rows: ParseCondition? = nil, refused: Bool = false
    ) {
        self.schema = schema
        self.hidden = hidden
        self.rows = rows
        self.refused = refused
    }

    /// 119, Parse Server's `denyProtectedFields` answer, when `names` holds a field hidden from the caller.
    func deny(_ names: Set<String>) throws {
        if let name = names.intersection(hidden).sorted().first {
            throw ParseError.operationForbidden(
                "This user is not allowed to query \(name) on class \(schema.className)")
        }
    }

    /// `condition` narrowed to the rows the caller may read (`rows`).
    func narrowing(_ condition: ParseCondition?) -> ParseCondition? {
        switch (condition, rows) {
        case (nil, let rows): return rows
        case (let condition, nil): return condition
        case (let condition?, let rows?): return .and([condition, rows])
        }
    }
}
