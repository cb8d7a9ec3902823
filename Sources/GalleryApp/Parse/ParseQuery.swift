/// A validated Parse query for one class: the parameters of `GET /classes/<Class>` (or of
/// `GET /classes/<Class>/<objectId>`) after every name, operator and value has been checked.
/// Unknown parameters, fields and operators are rejected with 102, never ignored.
public struct ParseQuery: Sendable {
    /// One `order` key.
    public enum OrderKey: Equatable, Sendable {
        /// A sortable field, ascending or descending (`-field`).
        case field(String, descending: Bool)
        /// `$score`: full-text relevance, most relevant first.
        case score
    }

    /// The queried class.
    public let schema: ParseClassSchema
    /// The `where` condition, nil when there is none.
    public var condition: ParseCondition?
    /// The requested order (empty: the default, newest first).
    public var order: [OrderKey]
    /// How many results to return (0: none, e.g. for a count alone).
    public var limit: Int
    /// How many results to skip.
    public var skip: Int
    /// Whether `count` was asked for.
    public var count: Bool
    /// The fields to select and write.
    public var projection: ParseProjection
    /// Whether rows in the trash (or, for GalleryItem, rows whose photo or gallery is in the
    /// trash) are left out: true unless `where` names `deletedAt`, or for a fetch by objectId.
    public var hidesTrashed: Bool
    /// The `$text` term, when the query has exactly one (needed for `$score`).
    public var searchTerm: String?
    /// Who asks: the compiled statements see only the rows it may read (`ParseSQLCompiler+Access`).
    public var access: ParseAccess = .master
    /// `explain`: answer the statement's PostgreSQL plan instead of rows (master key only, checked by the route).
    public var explain = false
    /// For a read of a view (`PhotoView`), the view fields its rows are written as; nil for a class.
    var view: PhotoView.Selection?
    /// The subqueries of `where` (`$inQuery`, `$select`…), nested ones included.
    public var subqueries: [ParseSubquery] = []
    /// The includes fetched after the page, one statement per level (the joined ones are in `projection`).
    public var includes: [ParseInclude] = []
    /// Whether a subquery or include names a class that does not exist (no sequence tracks it).
    public var readsMissingClass = false

    /// The parameters `GET /classes/<Class>` accepts (Parse Server's `ClassesRouter.optionsFromBody`).
    public static let findParameters = Set([
        "where", "order", "limit", "skip", "keys", "excludeKeys", "include", "count", "includeAll", "explain",
    ]).union(ignoredParameters)
    /// The parameters `GET /classes/<Class>/<objectId>` accepts (Parse Server's `ALLOWED_GET_QUERY_KEYS`).
    public static let getParameters = Set(["keys", "excludeKeys", "include"]).union(readPreferences)
    /// MongoDB read preferences, which the SDKs may send: validated, then ignored (one PostgreSQL
    /// has one preference).
    static let readPreferences: Set<String> = ["readPreference", "includeReadPreference", "subqueryReadPreference"]
    /// Parameters of a find that are validated and then ignored: the read preferences, `hint`
    /// (an index for MongoDB; PostgreSQL's planner picks its own) and `comment` (MongoDB's profiler).
    static let ignoredParameters: Set<String> = readPreferences.union(["hint", "comment"])
    /// The read preference names Parse Server passes on to MongoDB (any case).
    static let readPreferenceValues: Set<String> = [
        "PRIMARY", "PRIMARY_PREFERRED", "SECONDARY", "SECONDARY_PREFERRED", "NEAREST",
    ]

    /// Parses the query items of `GET /classes/<Class>`; `classes` resolves the classes subqueries
    /// and includes name (nil: subqueries are 102, includes reach the built-in classes alone).
    public static func find(
        _ schema: ParseClassSchema, items: [(name: String, value: String)], limits: ParseLimits = ParseLimits(),
        classes: ParseWhereParser.ClassResolver? = nil
    ) throws -> ParseQuery {
        var parameters = try collect(items, allowed: findParameters)
        try checkIgnored(parameters)
        if let text = parameters["includeAll"], try flag(text, name: "includeAll") {
            // Every pointer the class has, as `include=*`.
            parameters["include"] = parameters["include"].map { $0 + ",*" } ?? "*"
        }
        var whereParser = ParseWhereParser(schema: schema, limits: limits)
        whereParser.resolveClass = classes
        var condition: ParseCondition?
        if let whereText = parameters["where"] {
            guard whereText.utf8.count <= limits.maxWhereBytes else {
                throw ParseError.invalidQuery("where is larger than \(limits.maxWhereBytes) bytes")
            }
            // A malformed where is an invalid query (102), whatever the JSON parser calls it.
            let json: ParseJSONValue
            do {
                json = try ParseJSONParser.parse(whereText, maxDepth: limits.maxJSONDepth)
            } catch let error as ParseError where error.code == ParseError.Code.invalidJSON {
                throw ParseError.invalidQuery("where is not valid JSON: \(error.message)")
            }
            condition = try whereParser.parse(json)
        }
        var limit = limits.defaultLimit
        if let text = parameters["limit"] {
            limit = min(try integer(text, name: "limit"), limits.maxLimit)
        }
        var skip = 0
        if let text = parameters["skip"] {
            skip = try integer(text, name: "skip")
            guard skip <= limits.maxSkip else {
                throw ParseError.invalidQuery(
                    "skip may not exceed \(limits.maxSkip): page with a keyset cursor instead (order=-createdAt, and "
                        + #"where {"$or":[{"createdAt":{"$lt":LAST}},{"createdAt":LAST,"objectId":{"$lt":LAST_ID}}]})."#
                )
            }
        }
        var count = false
        if let text = parameters["count"] {
            switch text {
            case "1", "true": count = true
            case "0", "false": count = false
            default: throw ParseError.invalidQuery("count must be 1, true, 0 or false")
            }
        }
        let order = try parseOrder(parameters["order"], schema: schema)
        let orderHasScore = order.contains(.score)
        let (projection, keysHaveScore, fetched) = try checkedProjection(
            schema, keys: parameters["keys"], excludeKeys: parameters["excludeKeys"], include: parameters["include"],
            includesScore: orderHasScore, classes: classes)
        var searchTerm: String?
        if whereParser.searchTerms.count == 1 { searchTerm = whereParser.searchTerms[0] }
        if orderHasScore || keysHaveScore {
            guard searchTerm != nil else {
                throw ParseError.invalidQuery("$score needs exactly one $text constraint in where")
            }
        }
        let hidesTrashed = (schema.hasTrash || !schema.hiddenWithTrashedTargets.isEmpty) && !whereParser.namesDeletedAt
        var query = ParseQuery(
            schema: schema, condition: condition, order: order, limit: limit, skip: skip, count: count,
            projection: projection, hidesTrashed: hidesTrashed, searchTerm: searchTerm)
        if let text = parameters["explain"] {
            // true, or a MongoDB verbosity (PostgreSQL has one kind of plain EXPLAIN).
            let verbosity = ["queryPlanner", "executionStats", "allPlansExecution"].contains(text)
            query.explain = try verbosity || flag(text, name: "explain")
        }
        query.subqueries = whereParser.subqueries
        query.includes = try ParseInclude.tree(fetched, on: schema, classes: classes)
        query.readsMissingClass = whereParser.readsMissingClass || query.includes.contains(where: \.readsMissingClass)
        return query
    }

    /// `true`/`1` or `false`/`0` (102 otherwise).
    private static func flag(_ text: String, name: String) throws -> Bool {
        switch text {
        case "1", "true": return true
        case "0", "false": return false
        default: throw ParseError.invalidQuery("\(name) must be true or false")
        }
    }

    /// The accepted-and-ignored parameters must still have the type Parse Server takes: the read
    /// preferences a known name, `comment` a string, `hint` an index name or an index object.
    private static func checkIgnored(_ parameters: [String: String]) throws {
        for name in readPreferences {
            guard let text = parameters[name] else { continue }
            guard let value = stringValue(text), readPreferenceValues.contains(value.uppercased()) else {
                throw ParseError.invalidQuery(
                    "\(name) must be one of \(readPreferenceValues.sorted().joined(separator: ", "))")
            }
        }
        if let text = parameters["comment"], stringValue(text) == nil {
            throw ParseError.invalidQuery("comment must be a string")
        }
        if let text = parameters["hint"], stringValue(text) == nil {
            guard case .object? = try? ParseJSONParser.parse(text, maxDepth: 2) else {
                throw ParseError.invalidQuery("hint must be an index name or an index object")
            }
        }
    }

    /// A parameter's text as a string: a JSON string literal unquoted, any text that is not JSON
    /// as it is; nil for JSON of another type (an object, an array, a boolean, null). Numbers
    /// count as text (`comment=42`), as a body member `"42"` arrives as the same text.
    private static func stringValue(_ text: String) -> String? {
        guard let json = try? ParseJSONParser.parse(text, maxDepth: 2) else { return text }
        switch json {
        case .string(let value): return value
        case .object, .array, .bool, .null: return nil
        default: return text
        }
    }

    /// Parses a raw (percent-encoded) query component of `GET /classes/<Class>`.
    public static func find(_ schema: ParseClassSchema, rawQuery: String, limits: ParseLimits = ParseLimits()) throws
        -> ParseQuery
    {
        try find(schema, items: ParseQueryString.decode(rawQuery), limits: limits)
    }

    /// The query for `GET /classes/<Class>/<objectId>`: that object (trashed or not, so a client
    /// can show an item of Recently Deleted), with `keys`, `excludeKeys` and `include`.
    public static func get(
        _ schema: ParseClassSchema, objectId: String, items: [(name: String, value: String)] = [],
        limits: ParseLimits = ParseLimits(), classes: ParseWhereParser.ClassResolver? = nil
    ) throws -> ParseQuery {
        let parameters = try collect(items, allowed: getParameters)
        try checkIgnored(parameters)
        let (projection, keysHaveScore, fetched) = try checkedProjection(
            schema, keys: parameters["keys"], excludeKeys: parameters["excludeKeys"], include: parameters["include"],
            includesScore: false, classes: classes)
        if keysHaveScore { throw ParseError.invalidQuery("$score needs a $text constraint") }
        var query = ParseQuery(
            schema: schema, condition: .compare(field: "objectId", op: .equal, value: .text(objectId)), order: [],
            limit: 1,
            skip: 0, count: false, projection: projection, hidesTrashed: false, searchTerm: nil)
        query.includes = try ParseInclude.tree(fetched, on: schema, classes: classes)
        return query
    }

    /// The parameters that name fields: a comma list, or (as the Parse SDKs send them) a JSON
    /// array of names, which Parse Server joins into the comma list.
    public static let listParameters: Set<String> = ["order", "keys", "excludeKeys", "include"]

    private static func collect(_ items: [(name: String, value: String)], allowed: Set<String>) throws -> [String:
        String]
    {
        var parameters: [String: String] = [:]
        for item in items {
            guard allowed.contains(item.name) else {
                throw ParseError.invalidQuery("Invalid parameter for query: \(ParseWhereParser.quoted(item.name))")
            }
            var value: String? = item.value
            if listParameters.contains(item.name) { value = try commaList(item.value, name: item.name) }
            guard parameters.updateValue(value ?? "", forKey: item.name) == nil else {
                throw ParseError.invalidQuery("parameter \(item.name) is given more than once")
            }
            // An empty JSON array names nothing: as if the parameter were absent.
            if value == nil { parameters[item.name] = nil }
        }
        return parameters
    }

    private static func integer(_ text: String, name: String) throws -> Int {
        guard !text.isEmpty, text.utf8.count <= 19,
            text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 || $0 == UInt8(ascii: "-") }),
            let value = Int(text)
        else {
            throw ParseError.invalidQuery("\(name) must be a non-negative integer")
        }
        guard value >= 0 else { throw ParseError.invalidQuery("\(name) must be a non-negative integer") }
        return value
    }

    /// Splits a comma list, skipping empty entries (as Parse Server does for `keys`/`include`).
    private static func list(_ text: String?) -> [String]? {
        guard let text else { return nil }
        return text.split(separator: ",", omittingEmptySubsequences: true).map(String.init)
    }

    private static func parseOrder(_ text: String?, schema: ParseClassSchema) throws -> [OrderKey] {
        guard let text else { return [] }
        var keys: [OrderKey] = []
        var seen: Set<String> = []
        for rawPart in text.split(separator: ",", omittingEmptySubsequences: false) {
            var part = rawPart.trimmingSpaces()
            guard !part.isEmpty else { throw ParseError.invalidQuery("order has an empty key") }
            let descending = part.hasPrefix("-")
            if descending { part.removeFirst() }
            let key: OrderKey
            if part == "$score" {
                key = .score
            } else {
                guard let field = schema.field(named: String(part)) else {
                    throw ParseError.invalidQuery(
                        "cannot order by unknown field \(ParseWhereParser.quoted(String(part)))")
                }
                guard field.isSortable else { throw ParseError.invalidQuery("cannot order by \(field.name)") }
                key = .field(field.name, descending: descending)
            }
            guard seen.insert(String(part)).inserted else { throw ParseError.invalidQuery("order names \(part) twice") }
            keys.append(key)
        }
        return keys
    }

    /// Builds the projection; returns whether `keys` asked for `$score`, and the include paths
    /// fetched after the page (dotted ones, pointers without a join, and those in `fetching`). A
    /// joined pointer's class is read as `classes` lets the caller get it (its app fields, less its
    /// protected fields); without `classes`, as its fixed schema.
    static func parseProjection(
        _ schema: ParseClassSchema, keys: String?, excludeKeys: String?, include: String?, includesScore: Bool,
        classes: ParseWhereParser.ClassResolver?, fetching: Set<String> = []
    ) throws -> (ParseProjection, Bool, [[String]]) {
        var joined: [String: ParseReadableClass] = [:]
        func target(_ className: String) throws -> ParseReadableClass? {
            if let known = joined[className] { return known }
            guard let fixed = ParseClassSchema.named(className) else { return nil }
            let readable = try classes?(className, .include) ?? ParseReadableClass(schema: fixed)
            joined[className] = readable
            return readable
        }
        var includeRoots: Set<String> = []
        var fetched: [[String]] = []
        for name in list(include) ?? [] {
            if name == "*" {
                // A built-in class's joined pointers (as before); every pointer of a custom class.
                for field in schema.fields where field.pointerClassName != nil {
                    if field.joinAlias != nil, !fetching.contains(field.name) {
                        includeRoots.insert(field.name)
                    } else if schema.isCustom || fetching.contains(field.name) {
                        fetched.append([field.name])
                    }
                }
                continue
            }
            if !name.contains("."), schema.field(named: name)?.joinAlias != nil, !fetching.contains(name) {
                includeRoots.insert(name)
                continue
            }
            fetched.append(name.split(separator: ".", omittingEmptySubsequences: false).map(String.init))
        }
        // A pointer fetched for a deeper path is not joined as well.
        for path in fetched { includeRoots.remove(path[0]) }
        var topKeys: Set<String>?
        var nestedKeys: [String: Set<String>] = [:]
        var scoreRequested = false
        if let keyList = list(keys) {
            var top: Set<String> = []
            for key in keyList {
                if key == "$score" {
                    scoreRequested = true
                } else if let (root, sub) = try dotted(schema, key, parameter: "keys", target: target) {
                    nestedKeys[root, default: []].insert(sub)
                    if !fetching.contains(root) { includeRoots.insert(root) }
                    top.insert(root)
                } else {
                    // A Relation field is written whatever `keys` says (ParseProjection.relations).
                    guard schema.field(named: key) != nil || schema.relations[key] != nil else {
                        throw ParseError.invalidQuery("keys names unknown field \(ParseWhereParser.quoted(key))")
                    }
                    top.insert(key)
                }
            }
            topKeys = top
        }
        var excluded: Set<String> = []
        var nestedExcluded: [String: Set<String>] = [:]
        for key in list(excludeKeys) ?? [] {
            if let (root, sub) = try dotted(schema, key, parameter: "excludeKeys", target: target) {
                nestedExcluded[root, default: []].insert(sub)
            } else {
                guard schema.field(named: key) != nil || schema.relations[key] != nil else {
                    throw ParseError.invalidQuery("excludeKeys names unknown field \(ParseWhereParser.quoted(key))")
                }
                excluded.insert(key)
            }
        }
        let fields = schema.fields.filter { field in
            field.isAlwaysSelected
                || ((topKeys?.contains(field.name) ?? !field.isOptIn || includeRoots.contains(field.name))
                    && !excluded.contains(field.name))
        }
        var includes: [String: ParseProjection] = [:]
        for field in fields where includeRoots.contains(field.name) {
            guard let alias = field.joinAlias, let className = field.pointerClassName,
                let readable = try target(className)
            else {
                continue
            }
            let only = nestedKeys[field.name]
            let without = (nestedExcluded[field.name] ?? []).union(readable.hidden)
            let targetFields = readable.schema.fields.filter { targetField in
                targetField.isAlwaysSelected
                    || ((only?.contains(targetField.name) ?? !targetField.isOptIn)
                        && !without.contains(targetField.name))
            }
            includes[field.name] = ParseProjection(
                schema: readable.schema, fields: targetFields, columnPrefix: alias + "__")
        }
        let projection = ParseProjection(
            schema: schema, fields: fields, includes: includes, includesScore: includesScore || scoreRequested)
        return (projection, scoreRequested, fetched)
    }
}

extension Substring {
    /// The text without leading and trailing spaces.
    fileprivate func trimmingSpaces() -> Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
