/// Validates a `where` JSON object against a class schema and turns it into a typed
/// `ParseCondition`, following Parse Server's operator semantics (including its array rules:
/// equality with a string means "contains", `$in` means "overlaps", `$all` means "contains all").
/// Anything unknown or mistyped is error 102 (malformed `$text` is 107, as in Parse Server).
public struct ParseWhereParser {
    /// The class being queried.
    public let schema: ParseClassSchema
    /// The limits applied.
    public let limits: ParseLimits
    /// Whether any constraint names `deletedAt` (then trashed rows are not hidden).
    public private(set) var namesDeletedAt = false
    /// The `$text` search terms found, in order.
    public private(set) var searchTerms: [String] = []
    /// The classes `$inQuery`, `$notInQuery`, `$select` and `$dontSelect` may name; nil where
    /// subqueries are not taken (102).
    public var resolveClass: ClassResolver?
    /// Every subquery found, nested ones included, and the owning class of each `$relatedTo`
    /// (with no condition): the classes the query reads besides its own (`ParseAPI.checkSubqueries`,
    /// `ClassChangeSequences.dependencies(of:)`).
    public internal(set) var subqueries: [ParseSubquery] = []
    /// Whether a subquery named a class that does not exist (then no change sequence tracks it).
    public internal(set) var readsMissingClass = false
    /// The constraints counted so far (subqueries' included), against `limits.maxConditions`.
    var conditionCount = 0

    /// A parser for `schema`.
    public init(schema: ParseClassSchema, limits: ParseLimits) {
        self.schema = schema
        self.limits = limits
    }

    /// Parses the top-level `where` object; nil when it has no constraints (`{}`).
    public mutating func parse(_ json: ParseJSONValue) throws -> ParseCondition? {
        guard case .object(let object) = json else { throw ParseError.invalidQuery("where must be a JSON object") }
        return try parseObject(object)
    }

    mutating func count() throws {
        conditionCount += 1
        guard conditionCount <= limits.maxConditions else {
            throw ParseError.invalidQuery("where has more than \(limits.maxConditions) constraints")
        }
    }

    private mutating func parseObject(_ object: ParseJSONObject) throws -> ParseCondition? {
        var parts: [ParseCondition] = []
        for member in object.members {
            switch member.key {
            case "$or", "$and":
                guard case .array(let branches) = member.value, !branches.isEmpty else {
                    throw ParseError.invalidQuery("\(member.key) must be a non-empty array of objects")
                }
                var compiled: [ParseCondition] = []
                for branch in branches {
                    try count()
                    guard case .object(let branchObject) = branch else {
                        throw ParseError.invalidQuery("\(member.key) must be a non-empty array of objects")
                    }
                    // An empty branch matches everything.
                    compiled.append(try parseObject(branchObject) ?? .and([]))
                }
                parts.append(member.key == "$or" ? .or(compiled) : .and(compiled))
            case "$relatedTo":
                try count()
                parts.append(try relatedTo(member.value))
            default:
                if member.key.hasPrefix("$") {
                    throw ParseError.invalidQuery("unsupported operator \(Self.quoted(member.key))")
                }
                if let relation = schema.relations[member.key] {
                    parts.append(try relationConstraint(member.key, relation, member.value))
                    continue
                }
                guard let field = schema.field(named: member.key) else {
                    throw ParseError.invalidQuery(
                        "unknown field \(Self.quoted(member.key)) for class \(schema.className)")
                }
                if field.name == "deletedAt" { namesDeletedAt = true }
                parts.append(try parseConstraint(field, member.value))
            }
        }
        switch parts.count {
        case 0: return nil
        case 1: return parts[0]
        default: return .and(parts)
        }
    }

    /// A field name for an error message, shortened so hostile input is not echoed whole.
    static func quoted(_ name: String) -> String {
        let short =
            name.unicodeScalars.count > 64
            ? String(String.UnicodeScalarView(name.unicodeScalars.prefix(64))) + "…" : name
        return "'\(short)'"
    }

    private mutating func parseConstraint(_ field: ParseField, _ value: ParseJSONValue) throws -> ParseCondition {
        guard field.isQueryable else { throw ParseError.invalidQuery("\(field.name) cannot be used in where") }
        if case .object(let object) = value, object["__type"] == nil {
            guard !object.isEmpty, object.keys.allSatisfy({ $0.hasPrefix("$") }) else {
                throw ParseError.invalidQuery("invalid constraint on \(field.name): expected a value or $ operators")
            }
            return try parseOperators(field, object)
        }
        try count()
        return try equality(field, value)
    }

    private mutating func parseOperators(_ field: ParseField, _ object: ParseJSONObject) throws -> ParseCondition {
        var parts: [ParseCondition] = []
        let options = object["$options"]
        if options != nil && object["$regex"] == nil {
            throw ParseError.invalidQuery("$options is only valid with $regex")
        }
        for member in object.members {
            try count()
            let value = member.value
            if field.type == .file && member.key != "$exists" {
                throw ParseError.invalidQuery("\(field.name) is a File: only $exists is supported")
            }
            switch member.key {
            case "$eq":
                parts.append(try equality(field, value))
            case "$ne":
                parts.append(try inequality(field, value))
            case "$lt", "$lte", "$gt", "$gte":
                let op: ParseComparison
                switch member.key {
                case "$lt": op = .lessThan
                case "$lte": op = .lessThanOrEqual
                case "$gt": op = .greaterThan
                default: op = .greaterThanOrEqual
                }
                switch field.type {
                case .string, .int, .double, .date: break
                default:
                    throw ParseError.invalidQuery(
                        "\(member.key) is not supported on \(field.type.parseName) field \(field.name)")
                }
                guard value != .null else {
                    throw ParseError.invalidQuery("\(member.key) on \(field.name) needs a value, not null")
                }
                parts.append(.compare(field: field.name, op: op, value: try scalar(field, value, operator: member.key)))
            case "$in", "$nin":
                parts.append(try inList(field, value, negated: member.key == "$nin", operator: member.key))
            case "$all":
                guard field.type == .stringArray else {
                    throw ParseError.invalidQuery("$all is only supported on array fields")
                }
                parts.append(.arrayContainsAll(field: field.name, try stringList(field, value, operator: "$all")))
            case "$exists":
                guard case .bool(let exists) = value else {
                    throw ParseError.invalidQuery("$exists on \(field.name) must be true or false")
                }
                parts.append(.isNull(field: field.name, !exists))
            case "$regex":
                parts.append(try regex(field, value, options: options))
            case "$options":
                continue  // handled with $regex
            case "$text":
                parts.append(try textSearch(field, value))
            case "$inQuery", "$notInQuery":
                parts.append(try inQuery(field, value, negated: member.key == "$notInQuery", operator: member.key))
            case "$select", "$dontSelect":
                parts.append(try selectKey(field, value, negated: member.key == "$dontSelect", operator: member.key))
            case "$containedBy":
                parts.append(try containedBy(field, value))
            default:
                throw ParseError.invalidQuery("unsupported operator \(Self.quoted(member.key)) on \(field.name)")
            }
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    /// Plain equality (and `$eq`), with Parse's array rules.
    private func equality(_ field: ParseField, _ value: ParseJSONValue) throws -> ParseCondition {
        if value == .null { return .isNull(field: field.name, true) }
        switch field.type {
        case .file:
            throw ParseError.invalidQuery("\(field.name) is a File: only $exists is supported")
        case .stringArray:
            if case .array = value {
                return .arrayEquals(field: field.name, try stringList(field, value, operator: "equality"))
            }
            return .arrayContainsAll(field: field.name, [try string(field, value, operator: "equality")])
        default:
            return .compare(field: field.name, op: .equal, value: try scalar(field, value, operator: "equality"))
        }
    }

    /// `$ne`: null-safe, so rows whose field is null match (as in Parse Server).
    private func inequality(_ field: ParseField, _ value: ParseJSONValue) throws -> ParseCondition {
        if value == .null { return .isNull(field: field.name, false) }
        switch field.type {
        case .stringArray:
            if case .array = value {
                return .not(.arrayEquals(field: field.name, try stringList(field, value, operator: "$ne")))
            }
            return .not(.arrayContainsAll(field: field.name, [try string(field, value, operator: "$ne")]))
        default:
            return .compare(field: field.name, op: .notEqual, value: try scalar(field, value, operator: "$ne"))
        }
    }

    private func inList(_ field: ParseField, _ value: ParseJSONValue, negated: Bool, operator name: String) throws
        -> ParseCondition
    {
        guard case .array(let elements) = value else {
            throw ParseError.invalidQuery("\(name) on \(field.name) must be an array")
        }
        guard elements.count <= limits.maxInListCount else {
            throw ParseError.invalidQuery("\(name) on \(field.name) has more than \(limits.maxInListCount) values")
        }
        if field.type == .stringArray {
            let overlap = ParseCondition.arrayOverlaps(field: field.name, try stringList(field, value, operator: name))
            return negated ? .not(overlap) : overlap
        }
        var values: [SQLValue] = []
        values.reserveCapacity(elements.count)
        var orNull = false
        for element in elements {
            if element == .null {
                orNull = true
            } else {
                values.append(try scalar(field, element, operator: name))
            }
        }
        return .inList(field: field.name, values: values, orNull: orNull, negated: negated)
    }

    func stringList(_ field: ParseField, _ value: ParseJSONValue, operator name: String) throws -> [String] {
        guard case .array(let elements) = value else {
            throw ParseError.invalidQuery("\(name) on \(field.name) must be an array of strings")
        }
        guard elements.count <= limits.maxInListCount else {
            throw ParseError.invalidQuery("\(name) on \(field.name) has more than \(limits.maxInListCount) values")
        }
        return try elements.map { try string(field, $0, operator: name) }
    }

    private func string(_ field: ParseField, _ value: ParseJSONValue, operator name: String) throws -> String {
        guard case .string(let string) = value else {
            throw ParseError.invalidQuery("\(name) on \(field.name) needs a string, got \(value.typeName)")
        }
        guard string.utf8.count <= limits.maxStringValueBytes else {
            throw ParseError.invalidQuery("value for \(field.name) is longer than \(limits.maxStringValueBytes) bytes")
        }
        return string
    }

    /// A single value of the field's type as a bind value.
    private func scalar(_ field: ParseField, _ value: ParseJSONValue, operator name: String) throws -> SQLValue {
        func mismatch() -> ParseError {
            ParseError.invalidQuery(
                "\(name) on \(field.name) needs a \(field.type.parseName), got \(Self.describe(value))")
        }
        switch field.type {
        case .string:
            return .text(try string(field, value, operator: name))
        case .int:
            switch value {
            case .int(let int): return .int(int)
            case .double(let double):
                if double == double.rounded(), abs(double) < 9.0e18 { return .int(Int64(double)) }
                return .double(double)
            default: throw mismatch()
            }
        case .double:
            switch value {
            case .int(let int): return .double(Double(int))
            case .double(let double): return .double(double)
            default: throw mismatch()
            }
        case .bool:
            guard case .bool(let bool) = value else { throw mismatch() }
            return .bool(bool)
        case .acl, .json:
            throw mismatch()  // not queryable
        case .date:
            guard case .object(let object) = value, object["__type"] == .string("Date") else { throw mismatch() }
            guard object.members.count == 2, case .string(let iso)? = object["iso"],
                let ms = ParseDate.parseMilliseconds(iso)
            else {
                throw ParseError.invalidQuery(
                    "invalid Date for \(field.name): expected {\"__type\":\"Date\",\"iso\":\"YYYY-MM-DDTHH:MM:SS.mmmZ\"}"
                )
            }
            return .timestamp(ParseDate.date(milliseconds: ms))
        case .pointer(let className):
            guard case .object(let object) = value, object["__type"] == .string("Pointer") else { throw mismatch() }
            guard object.members.count == 3, case .string(let pointerClass)? = object["className"],
                case .string(let objectId)? = object["objectId"], ParseObjectID.isPlausible(objectId)
            else {
                throw ParseError.invalidPointer("invalid Pointer for \(field.name)")
            }
            guard pointerClass == className else {
                throw ParseError.invalidPointer(
                    "\(field.name) points to \(className), not \(Self.quoted(pointerClass))")
            }
            return .text(objectId)
        case .stringArray, .file:
            throw mismatch()
        }
    }

    static func describe(_ value: ParseJSONValue) -> String {
        if case .object(let object) = value, case .string(let type)? = object["__type"] {
            return quoted(type)
        }
        return value.typeName
    }

    private func regex(_ field: ParseField, _ value: ParseJSONValue, options: ParseJSONValue?) throws -> ParseCondition
    {
        guard field.type == .string else { throw ParseError.invalidQuery("$regex is only supported on String fields") }
        guard case .string(let pattern) = value else { throw ParseError.invalidQuery("bad $regex: must be a string") }
        var optionText = ""
        if let options {
            guard case .string(let text) = options else {
                throw ParseError.invalidQuery("bad $options: must be a string")
            }
            optionText = text
        }
        switch try ParseRegex.compile(pattern, options: optionText, limits: limits) {
        case .prefix(let prefix):
            return .hasPrefix(field: field.name, prefix)
        case .pattern(let translated, let caseInsensitive):
            return .regex(field: field.name, pattern: translated, caseInsensitive: caseInsensitive)
        }
    }

    /// `$text` (Parse Server's shape and 107 messages): `{"$search":{"$term":…, "$language"?,
    /// "$caseSensitive"?, "$diacriticSensitive"?}}`. The search column uses the `simple`
    /// configuration, so only that language is accepted, searches are case-insensitive and
    /// diacritic-sensitive.
    private mutating func textSearch(_ field: ParseField, _ value: ParseJSONValue) throws -> ParseCondition {
        guard schema.searchColumn != nil, schema.searchFields.contains(field.name) else {
            throw ParseError.invalidQuery("$text is not supported on \(schema.className).\(field.name)")
        }
        guard case .object(let text) = value, text.keys == ["$search"], case .object(let search)? = text["$search"]
        else {
            throw ParseError.invalidJSON("bad $text: $search, should be object")
        }
        for key in search.keys where !["$term", "$language", "$caseSensitive", "$diacriticSensitive"].contains(key) {
            throw ParseError.invalidJSON("bad $text: unknown key \(Self.quoted(key))")
        }
        guard case .string(let term)? = search["$term"], !term.isEmpty else {
            throw ParseError.invalidJSON("bad $text: $term, should be string")
        }
        guard term.utf8.count <= limits.maxSearchTermLength else {
            throw ParseError.invalidQuery("bad $text: $term is longer than \(limits.maxSearchTermLength) bytes")
        }
        if let language = search["$language"] {
            guard case .string(let name) = language else {
                throw ParseError.invalidJSON("bad $text: $language, should be string")
            }
            guard name == "simple" else {
                throw ParseError.invalidJSON("bad $text: $language, only 'simple' is supported")
            }
        }
        if let caseSensitive = search["$caseSensitive"] {
            guard case .bool(let flag) = caseSensitive else {
                throw ParseError.invalidJSON("bad $text: $caseSensitive, should be boolean")
            }
            if flag {
                throw ParseError.invalidJSON("bad $text: $caseSensitive not supported, please use $regex")
            }
        }
        if let diacriticSensitive = search["$diacriticSensitive"] {
            guard case .bool(let flag) = diacriticSensitive else {
                throw ParseError.invalidJSON("bad $text: $diacriticSensitive, should be boolean")
            }
            if !flag {
                throw ParseError.invalidJSON("bad $text: $diacriticSensitive - false not supported")
            }
        }
        searchTerms.append(term)
        return .textSearch(term: term)
    }
}
