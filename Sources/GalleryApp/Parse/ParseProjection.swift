/// Which fields of a class a response carries (from `keys`, `excludeKeys` and `include`), the
/// result columns they are read from, and the expanded pointers. Shared by the SQL compiler
/// (what to select) and the encoder (what to write), so the two cannot disagree.
public struct ParseProjection: Sendable {
    /// The class of these objects.
    public let schema: ParseClassSchema
    /// The fields written, in schema order; objectId, createdAt and updatedAt are always present.
    public let fields: [ParseField]
    /// For each field in `fields`, the result column it is read from (the column name, prefixed
    /// `<alias>__` for a joined object).
    public let resultColumns: [String]
    /// Pointer fields expanded into full objects, by field name (one level deep).
    public let includes: [String: ParseProjection]
    /// Whether the `$text` relevance is written as `score` (selected as the `score` column).
    public let includesScore: Bool
    /// The prefix of this projection's result columns (`""` for the queried class).
    public let columnPrefix: String
    /// The Relation fields written as `{"__type":"Relation","className":…}` (sorted by name): all
    /// of the class's, whatever `keys` and `excludeKeys` say, as Parse Server's storage adapters
    /// write them; only `protectedFields` take one out (`hiding`). They select no column.
    public let relations: [String]
    /// Fields protected from the caller but shown on the rows where one of these `_User` pointer
    /// columns holds the caller's id (`protectedFields` `userField:` entries), by field name.
    public let revealedBy: [String: [String]]

    /// A projection of `fields` of `schema`, with its Relation fields (`relations`: all of them
    /// unless named).
    public init(
        schema: ParseClassSchema, fields: [ParseField], includes: [String: ParseProjection] = [:],
        includesScore: Bool = false,
        columnPrefix: String = "", relations: [String]? = nil, revealedBy: [String: [String]] = [:]
    ) {
        self.schema = schema
        self.fields = fields
        self.resultColumns = fields.map { columnPrefix + $0.column }
        self.includes = includes
        self.includesScore = includesScore
        self.columnPrefix = columnPrefix
        self.relations = relations ?? schema.relations.keys.sorted()
        self.revealedBy = revealedBy
    }

    /// Every field of `schema` but those written only on request (`isOptIn`), nothing expanded.
    public static func all(_ schema: ParseClassSchema, columnPrefix: String = "") -> ParseProjection {
        ParseProjection(schema: schema, fields: schema.fields.filter { !$0.isOptIn }, columnPrefix: columnPrefix)
    }
}
