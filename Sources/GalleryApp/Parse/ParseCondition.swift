/// A validated, typed `where` condition. Field names are known fields of the query's class and
/// every value already has its field's type, so compiling to SQL cannot fail.
public indirect enum ParseCondition: Equatable, Sendable {
    /// All of the conditions.
    case and([ParseCondition])
    /// Any of the conditions.
    case or([ParseCondition])
    /// The negation of a condition.
    case not(ParseCondition)
    /// `field <op> value` (`!=` is null-safe: a null field differs from any value, as in Parse).
    case compare(field: String, op: ParseComparison, value: SQLValue)
    /// `field IS NULL` (`true`) or `IS NOT NULL` (`false`).
    case isNull(field: String, Bool)
    /// `field` is one of `values` (or null when `orNull`); `negated` flips it, keeping Parse's
    /// rule that `$nin` matches rows where the field is null unless the list has null.
    case inList(field: String, values: [SQLValue], orNull: Bool, negated: Bool)
    /// An array field contains every one of the strings (`@>`).
    case arrayContainsAll(field: String, [String])
    /// An array field shares at least one string with the list (`&&`).
    case arrayOverlaps(field: String, [String])
    /// An array field equals the list exactly.
    case arrayEquals(field: String, [String])
    /// A text field starts with the literal prefix (a byte-order range, index friendly).
    case hasPrefix(field: String, String)
    /// A text field matches a PostgreSQL ARE pattern translated from the client's `$regex`.
    case regex(field: String, pattern: String, caseInsensitive: Bool)
    /// The class's full-text search column matches the search term.
    case textSearch(term: String)
    /// `field` holds (`negated`: does not hold; a null field then matches, as `$nin`) a value of
    /// the subquery's key: `$inQuery`/`$notInQuery` (the key is `objectId`), `$select`/`$dontSelect`.
    case inSubquery(field: String, ParseSubquery, negated: Bool)
    /// An array field holds nothing but values of the list (`$containedBy`): a `text[]` field's
    /// strings (`.textArray`), or a custom Array field's JSON array (`.text`, compared as jsonb).
    case arrayContainedBy(field: String, SQLValue)
    /// `$relatedTo`: the object is in the Relation whose pairs are in `joinTable`, of the object
    /// `owningId`, when `owner` finds it (narrowed to what the caller may read of the owning class).
    case relatedTo(joinTable: String, owningId: String, owner: ParseSubquery)
    /// A `where` on the Relation `field` (Parse Server's `reduceInRelation`): the object's relation,
    /// whose pairs are in `joinTable`, holds one of `targets`' objects (the ids named, narrowed to
    /// what the caller may read of the target class). `$ne`/`$nin` are its negation.
    case inRelation(field: String, joinTable: String, targets: ParseSubquery)
}

/// A comparison operator of `ParseCondition.compare`.
public enum ParseComparison: String, Equatable, Sendable {
    /// `$eq` / plain equality.
    case equal = "="
    /// `$ne`.
    case notEqual = "is distinct from"
    /// `$lt`.
    case lessThan = "<"
    /// `$lte`.
    case lessThanOrEqual = "<="
    /// `$gt`.
    case greaterThan = ">"
    /// `$gte`.
    case greaterThanOrEqual = ">="
}
