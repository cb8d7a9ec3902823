import HTTPServer
import Postgres

/// `GET /aggregate/<Class>` (master key, as Parse Server): the pipeline from the `pipeline`
/// parameter (a JSON array), or from stage parameters (`match`, `group`, `sort`, `skip`, `limit`,
/// `project`, with or without `$`), also as a POST with `_method: GET`. Answers `{"results":[…]}`
/// (`ParseAggregatePipeline`). Classes: Photo, Gallery, GalleryItem (with their app fields),
/// `_User` and the custom classes. `$match` takes subqueries (`$inQuery`, `$select`…),
/// `$relatedTo` and a `where` on a Relation field on any class, read with the master key.
struct ParseAggregateRoutes {
    let pool: PostgresPool
    /// Resolves the classes `$match`'s subqueries name.
    let api: ParseAPI
    let keys: KeyChecker
    let mountPath: String
    let limits: ParseLimits

    func register(on routes: HTTPRouteGroup) {
        let (pool, api, keys, limits) = (pool, api, keys, limits)
        let run: @Sendable (HTTPRequest, [(name: String, value: String)], KeyChecker.Keys?) throws -> HTTPResponse = {
            request, items, bodyKeys in
            try ParseRoutes.require(.master, request, keys, bodyKeys: bodyKeys)
            let schema = try Self.schema(of: request.pathParameters["className"] ?? "", api: api)
            let pipeline = try ParseAggregatePipeline.compile(
                try Self.pipeline(items, maxDepth: limits.maxJSONDepth), schema: schema, limits: limits,
                classes: { try api.otherClass($0, $1, access: .master) })
            let statement = pipeline.statement
            let rows = try pool.query(statement.sql, statement.binds.postgresBinds, retry: .safe)
            var json = ParseJSONWriter()
            json.beginObject()
            json.key("results")
            json.beginArray()
            for row in rows { json.raw(Array(try row.decode(String.self, 0).utf8)) }
            json.endArray()
            json.endObject()
            return .json(json.bytes)
        }
        routes.add(
            HTTPRoute(.get, mountPath + "/aggregate/:className") { request in
                try run(request, try ParseRoutes.queryItems(request), nil)
            })
        routes.add(
            HTTPRoute(.post, mountPath + "/aggregate/:className") { request in
                let override = try ParseRoutes.methodOverride(
                    try ParseRoutes.body(request), maxDepth: limits.maxJSONDepth, request, keys)
                guard let override, override.method == "GET" else {
                    try ParseRoutes.require(.master, request, keys, bodyKeys: override?.keys)
                    throw ParseError.invalidJSON("POST to /aggregate needs _method GET in the body.")
                }
                return try run(
                    request, override.queryItems(mergedWith: try ParseRoutes.queryItems(request)), override.keys
                ).notStored()
            })
    }

    /// The class a pipeline reads: `_User`, a built-in class with its app fields, or a custom
    /// class; 103 for a class that does not exist, 102 for a view (a read-only class over Photo:
    /// aggregate Photo itself).
    static func schema(of className: String, api: ParseAPI) throws -> ParseClassSchema {
        if className == ParseClassSchema.user.className { return .user }
        switch try api.resolve(className) {
        case .builtIn(let schema): return schema
        case .custom(let custom): return custom.schema
        case .view(let view):
            throw ParseError.invalidQuery(
                "\(view.className) is a view: aggregate its source class, \(ParseClassSchema.photo.className).")
        }
    }

    /// The pipeline the parameters describe: `pipeline`, or one object of stage parameters.
    static func pipeline(_ items: [(name: String, value: String)], maxDepth: Int) throws -> ParseJSONValue {
        if let pipeline = items.first(where: { $0.name == "pipeline" }) {
            guard items.count == 1 else {
                throw ParseError.invalidQuery("pipeline cannot be combined with other parameters.")
            }
            return try ParseJSONParser.parse(pipeline.value, maxDepth: maxDepth + 2)
        }
        var stages = ParseJSONObject()
        for item in items {
            let name = item.name.hasPrefix("$") ? item.name : "$" + item.name
            guard ParseAggregatePipeline.stageOrder.contains(name) else {
                throw ParseError.invalidQuery(
                    "Invalid parameter for aggregate: \(ParseWhereParser.quoted(String(item.name.prefix(50)))).")
            }
            let value =
                name == "$limit" || name == "$skip"
                ? (Int64(item.value).map { ParseJSONValue.int($0) } ?? .string(item.value))
                : try ParseJSONParser.parse(item.value, maxDepth: maxDepth + 2)
            stages.members.append(.init(key: name, value: value))
        }
        guard !stages.isEmpty else { throw ParseError.invalidQuery("aggregate needs a pipeline.") }
        // Parameters have no order of their own: they run in the pipeline's one order.
        let order = ParseAggregatePipeline.stageOrder
        let sorted = stages.members.sorted { order.firstIndex(of: $0.key)! < order.firstIndex(of: $1.key)! }
        return .array(sorted.map { .object(ParseJSONObject([$0])) })
    }
}
