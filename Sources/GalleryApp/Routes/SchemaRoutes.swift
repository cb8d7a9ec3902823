import HTTPServer
import Postgres

/// `/parse/schemas` (master key only, as on Parse Server): the classes with their fields,
/// class-level permissions and indexes; custom classes created, changed and dropped.
struct SchemaRoutes {
    /// The class operations, whose `schemas` makes the changes.
    let api: ParseAPI
    let keys: KeyChecker
    /// The Parse mount (`/parse`).
    let mountPath: String
    /// The deepest JSON nesting a body may have.
    let maxJSONDepth: Int
    /// Called after a built-in class's permissions change: answers kept under the old ones go.
    let permissionsChanged: @Sendable () -> Void

    func register(on routes: HTTPRouteGroup) {
        let (api, keys, depth, permissionsChanged) = (api, keys, maxJSONDepth, permissionsChanged)
        let schemas = api.schemas
        func route(
            _ method: HTTPMethod, _ path: String, _ body: @escaping @Sendable (HTTPRequest, String) throws -> [UInt8]
        ) {
            routes.add(
                HTTPRoute(method, mountPath + path) { request in
                    try ParseRoutes.require(.master, request, keys)
                    // A class's schema and permissions are part of its finds' tags (migration 0025).
                    defer { if method != .get { api.classChanges?.refreshAfterWrite() } }
                    let json = try body(request, request.pathParameters["className"] ?? "")
                    return ParseRoutes.respond(ParseAPI.Result(status: .ok, json: json), request)
                })
        }
        route(.get, "/schemas") { _, _ in
            var writer = ParseJSONWriter()
            writer.beginObject()
            writer.key("results")
            writer.beginArray()
            for schema in ParseClassSchema.all {
                try schemas.appFields.schema(of: schema).writeSchema(
                    into: &writer, permissions: try schemas.builtIns.permissions(of: schema.className))
            }
            try Self.writeUserSchema(into: &writer, schemas)
            for custom in try schemas.catalog.all() { custom.write(into: &writer) }
            for view in try api.views.all() { view.writeSchema(into: &writer) }
            writer.endArray()
            writer.endObject()
            return writer.bytes
        }
        route(.get, "/schemas/:className") { _, className in
            try Self.renderView(className, api.views) ?? Self.render(className, schemas)
        }
        let create: @Sendable (HTTPRequest, String) throws -> [UInt8] = { request, pathName in
            let body = try Self.object(request, depth)
            var className = pathName
            if case .string(let named)? = body["className"] {
                guard pathName.isEmpty || named == pathName else {
                    throw ParseError(
                        code: ParseError.Code.invalidClassName,
                        message: "Class name mismatch between \(named.prefix(100)) and \(pathName.prefix(100)).")
                }
                className = named
            } else if body["className"] != nil || pathName.isEmpty {
                throw ParseError(code: ParseError.Code.invalidClassName, message: "POST /schemas needs a class name.")
            }
            guard !api.views.contains(className) else {
                throw ParseError(code: ParseError.Code.invalidClassName, message: "Class \(className) already exists.")
            }
            let permissions =
                try body["classLevelPermissions"].map { try ClassLevelPermissions.parse($0) } ?? .masterOnly
            let custom = try schemas.changing(className) { connection in
                let custom = try schemas.createClass(on: connection, className, permissions: permissions)
                return try Self.apply(body, to: custom, on: connection, schemas, creating: true)
            }
            var writer = ParseJSONWriter()
            custom.write(into: &writer)
            return writer.bytes
        }
        route(.post, "/schemas", create)
        route(.post, "/schemas/:className", create)
        route(.put, "/schemas/:className") { request, className in
            let body = try Self.object(request, depth)
            if case .string(let named)? = body["className"], named != className {
                throw ParseError(
                    code: ParseError.Code.invalidClassName,
                    message: "Class name mismatch between \(named.prefix(100)) and \(className.prefix(100)).")
            }
            if ParseClassSchema.builtIn(named: className) != nil {
                try BuiltInSchemaChange.apply(body, to: className, schemas)
                permissionsChanged()
                return try Self.render(className, schemas)
            }
            if let view = try api.views.view(named: className) { return try Self.updateView(view, body, api.views) }
            let custom = try schemas.changing(className) { connection in
                guard let custom = try schemas.lock(on: connection, className) else { throw Self.missing(className) }
                return try Self.apply(body, to: custom, on: connection, schemas, creating: false)
            }
            var writer = ParseJSONWriter()
            custom.write(into: &writer)
            return writer.bytes
        }
        route(.delete, "/schemas/:className") { _, className in
            guard ParseClassName.isValidClassName(className) else {
                throw ParseClassName.invalidClassNameError(className)
            }
            guard ParseClassSchema.named(className) == nil else {
                throw ParseError.operationForbidden("\(className) is built in and cannot be deleted.")
            }
            guard !api.views.contains(className) else {
                throw ParseError.operationForbidden(
                    "\(className) is a view: remove its [[views]] from the config file.")
            }
            try schemas.changing(className) { connection in
                try schemas.deleteClass(on: connection, className)
            }
            return Array("{}".utf8)
        }
    }

    /// 103 `Class <name> does not exist.`
    static func missing(_ className: String) -> ParseError {
        ParseError(code: ParseError.Code.invalidClassName, message: "Class \(className.prefix(100)) does not exist.")
    }

    /// The schema of a built-in or custom class.
    static func render(_ className: String, _ schemas: SchemaService) throws -> [UInt8] {
        var writer = ParseJSONWriter()
        if let builtIn = ParseClassSchema.named(className) {
            try schemas.appFields.schema(of: builtIn).writeSchema(
                into: &writer, permissions: try schemas.builtIns.permissions(of: className))
        } else if className == ParseClassSchema.user.className {
            try writeUserSchema(into: &writer, schemas)
        } else if let custom = try schemas.catalog.lookup(className) {
            custom.write(into: &writer)
        } else {
            throw missing(className)
        }
        return writer.bytes
    }

    /// `_User` with its app fields and class-level permissions (docs/decisions/045).
    static func writeUserSchema(into writer: inout ParseJSONWriter, _ schemas: SchemaService) throws {
        try schemas.appFields.schema(of: .user).writeSchema(
            into: &writer, permissions: try schemas.builtIns.permissions(of: ParseClassSchema.user.className))
    }

    /// The request body as a JSON object (107 otherwise).
    static func object(_ request: HTTPRequest, _ depth: Int) throws -> ParseJSONObject {
        let body = try ParseRoutes.body(request)
        if body.isEmpty { return ParseJSONObject() }
        guard case .object(let object) = try ParseJSONParser.parse(body, maxDepth: depth) else {
            throw ParseError.invalidJSON("request body must be a JSON object")
        }
        return object
    }

    /// Applies a POST or PUT body's `fields`, `classLevelPermissions` and `indexes` to `custom`
    /// (already locked or just made) and stores the result.
    static func apply(
        _ body: ParseJSONObject, to start: CustomClass, on connection: PostgresConnection, _ schemas: SchemaService,
        creating: Bool
    ) throws -> CustomClass {
        var custom = start
        for member in body.members
        where !["className", "fields", "classLevelPermissions", "indexes"].contains(member.key) {
            throw ParseError.invalidJSON("unknown key \(member.key.prefix(100)) in a schema")
        }
        if let fields = body["fields"] {
            guard case .object(let object) = fields else { throw ParseError.invalidJSON("fields must be an object") }
            // Deletions first, as Parse Server does them, then additions.
            for member in object.members where isDelete(member.value) {
                guard !creating else {
                    throw ParseError.invalidJSON("a new class cannot delete \(member.key.prefix(100))")
                }
                custom = try schemas.deleteField(on: connection, custom, member.key)
            }
            for member in object.members where !isDelete(member.value) {
                guard ParseClassName.isValidFieldName(member.key) else {
                    throw ParseClassName.invalidFieldNameError(member.key)
                }
                // As Parse accepts them on POST.
                if ParseClassName.defaultFields.contains(member.key) && creating { continue }
                custom = try schemas.addField(
                    on: connection, custom, member.key, try CustomFieldType.parse(member.value, field: member.key))
            }
        }
        if let permissions = body["classLevelPermissions"], !creating {
            custom = custom.with(permissions: try ClassLevelPermissions.parse(permissions))
        }
        if let indexes = body["indexes"] {
            guard case .object(let object) = indexes else { throw ParseError.invalidJSON("indexes must be an object") }
            for member in object.members where isDelete(member.value) {
                custom = try schemas.deleteIndex(on: connection, custom, member.key)
            }
            for member in object.members where !isDelete(member.value) {
                guard case .object(let keys) = member.value, !keys.isEmpty else {
                    throw ParseError.invalidJSON("index \(member.key.prefix(100)) must be an object like {\"field\":1}")
                }
                let parsed = try keys.members.map { key -> (field: String, direction: Int) in
                    guard case .int(let direction) = key.value, direction == 1 || direction == -1 else {
                        throw ParseError.invalidJSON(
                            "index \(member.key.prefix(100)): \(key.key.prefix(100)) must be 1 or -1")
                    }
                    return (field: key.key, direction: Int(direction))
                }
                custom = try schemas.addIndex(
                    on: connection, custom, SchemaService.IndexRequest(name: member.key, keys: parsed))
            }
        }
        try custom.permissions.checkPointerFields(of: custom)
        try schemas.store(on: connection, custom)
        return custom
    }

    private static func isDelete(_ json: ParseJSONValue) -> Bool {
        if case .object(let object) = json, object["__op"] == .string("Delete") { return true }
        return false
    }
}
