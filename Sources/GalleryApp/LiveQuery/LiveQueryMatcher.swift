import Foundation

/// A `where` compiled for evaluation in the server against a changed row (as the trigger sent
/// it, column names as keys). Supports equality, `$ne`, `$in`, `$nin`, `$exists`,
/// `$lt`/`$lte`/`$gt`/`$gte` on numbers, dates and strings, `$regex` anchored prefixes
/// (`^literal`, no options), `$and` and `$or`; anything else is refused on subscribe.
indirect enum LiveQueryMatcher {
    /// Every one matches.
    case all([LiveQueryMatcher])
    /// At least one matches.
    case any([LiveQueryMatcher])
    /// A test on one column.
    case field(column: String, type: ParseFieldType, test: Test)

    /// A test on one column's values.
    enum Test {
        case equals(LiveQueryValue)
        case notEquals(LiveQueryValue)
        case isIn([LiveQueryValue])
        case notIn([LiveQueryValue])
        case exists(Bool)
        /// `$lt` -1 strictly, `$lte` -1 or 0 … as the set of allowed comparison results.
        case compare(LiveQueryValue, allowed: Set<Int>)
        case prefix(String)
    }

    /// Compiles `where` for `schema`; throws `invalidQuery` for what cannot be evaluated here.
    /// A class with a trash hides trashed rows unless `where` names `deletedAt`, as find does.
    static func compile(_ whereObject: [String: Any], schema: ParseClassSchema) throws -> LiveQueryMatcher {
        var parts = try compileObject(whereObject, schema: schema)
        if schema.hasTrash && !mentions("deletedAt", whereObject) {
            parts.append(.field(column: "deleted_at", type: .date, test: .exists(false)))
        }
        return .all(parts)
    }

    private static func mentions(_ key: String, _ object: [String: Any]) -> Bool {
        object.contains { name, value in
            name == key
                || ((name == "$or" || name == "$and")
                    && ((value as? [Any]) ?? []).contains { mentions(key, $0 as? [String: Any] ?? [:]) })
        }
    }

    private static func compileObject(_ object: [String: Any], schema: ParseClassSchema) throws -> [LiveQueryMatcher] {
        var parts: [LiveQueryMatcher] = []
        for (key, constraint) in object.sorted(by: { $0.key < $1.key }) {
            if key == "$or" || key == "$and" {
                guard let list = constraint as? [Any], !list.isEmpty else {
                    throw LiveQueryError.invalidQuery("\(key) needs an array")
                }
                let branches = try list.map { item -> LiveQueryMatcher in
                    guard let sub = item as? [String: Any] else {
                        throw LiveQueryError.invalidQuery("\(key) needs objects")
                    }
                    return .all(try compileObject(sub, schema: schema))
                }
                parts.append(key == "$or" ? .any(branches) : .all(branches))
                continue
            }
            guard let field = schema.field(named: key), case .column(let column) = field.source, field.isQueryable
            else {
                throw LiveQueryError.invalidQuery("live queries cannot constrain \(schema.className).\(key)")
            }
            let type = field.type
            func operand(_ json: Any) throws -> LiveQueryValue {
                try LiveQueryValue.operand(json, type: type, field: key)
            }
            if let operators = constraint as? [String: Any], operators["__type"] == nil {
                for (op, value) in operators.sorted(by: { $0.key < $1.key }) {
                    let test: Test
                    switch op {
                    case "$eq": test = .equals(try operand(value))
                    case "$ne": test = .notEquals(try operand(value))
                    case "$in", "$nin":
                        guard let list = value as? [Any] else {
                            throw LiveQueryError.invalidQuery("\(op) needs an array")
                        }
                        let values = try list.map(operand)
                        test = op == "$in" ? .isIn(values) : .notIn(values)
                    case "$exists":
                        guard let flag = value as? Bool else {
                            throw LiveQueryError.invalidQuery("$exists needs a boolean")
                        }
                        test = .exists(flag)
                    case "$lt": test = .compare(try operand(value), allowed: [-1])
                    case "$lte": test = .compare(try operand(value), allowed: [-1, 0])
                    case "$gt": test = .compare(try operand(value), allowed: [1])
                    case "$gte": test = .compare(try operand(value), allowed: [1, 0])
                    case "$regex":
                        test = .prefix(try prefix(value, options: operators["$options"]))
                    case "$options":
                        continue
                    default:
                        throw LiveQueryError.invalidQuery("live queries do not support \(op)")
                    }
                    parts.append(.field(column: column, type: type, test: test))
                }
            } else {
                parts.append(.field(column: column, type: type, test: .equals(try operand(constraint))))
            }
        }
        return parts
    }

    /// `^literal` → the literal; anything with other regex syntax or options is refused.
    private static func prefix(_ value: Any, options: Any?) throws -> String {
        guard let pattern = value as? String, pattern.hasPrefix("^"), (options as? String ?? "").isEmpty else {
            throw LiveQueryError.invalidQuery("live queries support only $regex prefixes (^literal) without options")
        }
        var literal = ""
        var escaped = false
        for character in pattern.dropFirst() {
            if escaped {
                guard !character.isLetter && !character.isNumber else {
                    throw LiveQueryError.invalidQuery("live queries support only $regex prefixes (^literal)")
                }
                literal.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if ".^$*+?()[]{}|".contains(character) {
                throw LiveQueryError.invalidQuery("live queries support only $regex prefixes (^literal)")
            } else {
                literal.append(character)
            }
        }
        guard !escaped else { throw LiveQueryError.invalidQuery("bad $regex") }
        return literal
    }

    /// Whether `row` (column name → JSON value) matches.
    func matches(_ row: [String: Any]) -> Bool {
        switch self {
        case .all(let parts): return parts.allSatisfy { $0.matches(row) }
        case .any(let parts): return parts.contains { $0.matches(row) }
        case .field(let column, let type, let test):
            let values = LiveQueryValue.values(of: row[column], type: type)
            switch test {
            case .equals(let v): return values.contains(v)
            case .notEquals(let v): return !values.contains(v)
            case .isIn(let set): return values.contains { set.contains($0) }
            case .notIn(let set): return !values.contains { set.contains($0) }
            case .exists(let flag): return values.isEmpty != flag
            case .compare(let v, let allowed):
                return values.contains { LiveQueryValue.compare($0, v).map(allowed.contains) ?? false }
            case .prefix(let p):
                return values.contains { if case .string(let s) = $0 { return s.hasPrefix(p) } else { return false } }
            }
        }
    }
}
