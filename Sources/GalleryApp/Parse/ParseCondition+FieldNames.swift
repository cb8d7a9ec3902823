extension ParseCondition {
    /// Every field the condition tests, at any depth (for the class-level permissions'
    /// `protectedFields`: a caller may not query a field hidden from them).
    var fieldNames: Set<String> {
        switch self {
        case .and(let parts), .or(let parts):
            return parts.reduce(into: Set<String>()) { $0.formUnion($1.fieldNames) }
        case .not(let inner):
            return inner.fieldNames
        case .compare(let field, _, _), .isNull(let field, _), .inList(let field, _, _, _),
            .arrayContainsAll(let field, _), .arrayOverlaps(let field, _), .arrayEquals(let field, _),
            .hasPrefix(let field, _), .regex(let field, _, _), .inSubquery(let field, _, _),
            .arrayContainedBy(let field, _), .inRelation(let field, _, _):
            return [field]
        case .textSearch, .relatedTo:
            return []
        }
    }
}
