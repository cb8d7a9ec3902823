/// Which query shapes are expensive: those no index bounds, so they may read much of a table.
extension ParseQuery {
    /// A `skip` above this counts as expensive (the database reads and discards every skipped row).
    public static let expensiveSkip = 1_000

    /// Whether the query may scan much of its table: an unanchored `$regex` (an anchored prefix
    /// becomes an index range and is cheap), a deep `skip`, or a counted scan (a Photo count whose
    /// filter no index narrows: it reads every live row, where an unfiltered count reads the row
    /// counter). Such queries run through the `ExpensiveQueryGate`.
    public var isExpensive: Bool {
        skip > Self.expensiveSkip || (condition.map(Self.scansTable) ?? false) || isCountedScan
    }

    /// A count over Photo (the class that grows to millions of rows) with a filter that no index
    /// on `photos` narrows.
    var isCountedScan: Bool {
        guard count, schema.className == ParseClassSchema.photo.className, let condition else { return false }
        return !Self.narrowedByIndex(condition)
    }

    /// Photo fields with an index on `photos` (migrations 0001–0002): b-tree on the first four and
    /// `deletedAt`, GIN on `tags`, prefix (`text_pattern_ops`) on `title` and `filename`.
    static let indexedPhotoFields: Set<String> = ["objectId", "createdAt", "updatedAt", "status", "deletedAt"]

    /// Whether an index bounds the rows `condition` can match: one narrowed part of an `$and` is
    /// enough, every branch of an `$or` must be narrowed; negations, `$ne` and regexes narrow nothing.
    static func narrowedByIndex(_ condition: ParseCondition) -> Bool {
        switch condition {
        case .and(let parts): return parts.contains(where: narrowedByIndex)
        case .or(let parts): return !parts.isEmpty && parts.allSatisfy(narrowedByIndex)
        case .compare(let field, let op, _): return op != .notEqual && indexedPhotoFields.contains(field)
        case .inList(let field, _, _, let negated): return !negated && indexedPhotoFields.contains(field)
        case .isNull(let field, let isNull): return field == "deletedAt" && !isNull
        case .arrayContainsAll(let field, _), .arrayOverlaps(let field, _), .arrayEquals(let field, _):
            return field == "tags"
        case .hasPrefix(let field, _): return field == "title" || field == "filename"
        case .textSearch: return true
        case .inSubquery(let field, _, let negated): return !negated && indexedPhotoFields.contains(field)
        case .relatedTo, .inRelation: return true
        case .regex, .not, .arrayContainedBy: return false
        }
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
