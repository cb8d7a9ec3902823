import Foundation

extension LiveQueryMatcher {
    /// Refuses a `where` beyond the REST caps of `limits` (`invalidQuery`, 102), before it is
    /// compiled: its size as JSON, its nesting, the values of each `$in`/`$nin`/`$all`, the
    /// constraints overall, `$regex` patterns and string values, as finds are bounded.
    static func check(_ whereObject: [String: Any], limits: ParseLimits) throws {
        let bytes = (try? JSONSerialization.data(withJSONObject: whereObject).count) ?? Int.max
        guard bytes <= limits.maxWhereBytes else {
            throw LiveQueryError.invalidQuery("where is larger than \(limits.maxWhereBytes) bytes")
        }
        var constraints = 0
        try check(whereObject, depth: 1, limits: limits, constraints: &constraints)
    }

    private static func check(_ value: Any, depth: Int, limits: ParseLimits, constraints: inout Int) throws {
        guard depth <= limits.maxJSONDepth else {
            throw LiveQueryError.invalidQuery("where is nested deeper than \(limits.maxJSONDepth) levels")
        }
        switch value {
        case let object as [String: Any]:
            for (key, member) in object {
                constraints += 1
                guard constraints <= limits.maxConditions else {
                    throw LiveQueryError.invalidQuery("where has more than \(limits.maxConditions) constraints")
                }
                if ["$in", "$nin", "$all"].contains(key), let list = member as? [Any],
                    list.count > limits.maxInListCount
                {
                    throw LiveQueryError.invalidQuery("\(key) has more than \(limits.maxInListCount) values")
                }
                if key == "$regex", let pattern = member as? String, pattern.utf8.count > limits.maxRegexLength {
                    throw LiveQueryError.invalidQuery("$regex is longer than \(limits.maxRegexLength) bytes")
                }
                try check(member, depth: depth + 1, limits: limits, constraints: &constraints)
            }
        case let list as [Any]:
            for item in list { try check(item, depth: depth + 1, limits: limits, constraints: &constraints) }
        case let text as String:
            guard text.utf8.count <= limits.maxStringValueBytes else {
                throw LiveQueryError.invalidQuery("a value in where is longer than \(limits.maxStringValueBytes) bytes")
            }
        default:
            break
        }
    }
}
