import Foundation
import HTTPServer

/// Parse's roles under the mount path (Parse Server's RolesRouter): `/roles` and `/classes/_Role`,
/// find, get, create, update, delete, with the SDKs' `_method` override. Only the master key
/// creates a role (a user who could create `Administrator` first would hold what every ACL grants
/// that name); reading, changing and deleting one follow its own ACL (`RoleRepository`). Every
/// change forgets the remembered role memberships (`ParseRoleResolver.forgetAll`).
struct RoleRoutes {
    let repository: RoleRepository
    let sessions: SessionAuthenticator
    let keys: KeyChecker
    /// `public_read`, part of every access.
    let publicRead: Bool
    let mountPath: String
    let maxJSONDepth: Int
    /// The server's base URL, for a creation's `Location`.
    let publicURL: @Sendable () -> String
    /// Called after every change: role grants alter what finds return (`ClassChangeSequences.refreshAfterWrite`).
    var rolesChanged: @Sendable () -> Void = {}
    /// `X-Parse-Request-Id`: a retried create answers the first role instead of making another
    /// (recorded with the role, as the class routes' creates are).
    let idempotency: ParseRequestIdempotency

    func register(on routes: HTTPRouteGroup) {
        for path in ["/roles", "/classes/_Role"] {
            add(routes, .get, path) { request, _, access in try self.find(try ParseRoutes.queryItems(request), access) }
            add(routes, .post, path) { request, override, access in
                switch override?.method {
                case nil, "POST"?:
                    let body = try override?.body ?? ParseRoutes.body(request)
                    let result = try self.idempotency.run(
                        requestId: request.headers["X-Parse-Request-Id"],
                        scope: ParseRoutes.idempotencyScope(request, access, bodyToken: override?.sessionToken),
                        durable: true
                    ) { try self.create(body, access) }
                    self.changed()
                    return result
                case "GET"?:
                    return try self.find(override!.queryItems(mergedWith: try ParseRoutes.queryItems(request)), access)
                default:
                    throw ParseError.invalidJSON("POST to \(path) needs no _method (create) or _method GET (find).")
                }
            }
            add(routes, .get, path + "/:objectId") { request, _, access in try self.get(Self.objectId(request), access)
            }
            add(routes, .put, path + "/:objectId") { request, _, access in
                try self.update(Self.objectId(request), try ParseRoutes.body(request), access)
            }
            add(routes, .delete, path + "/:objectId") { request, _, access in
                try self.delete(Self.objectId(request), access)
            }
            add(routes, .post, path + "/:objectId") { request, override, access in
                let objectId = try Self.objectId(request)
                switch override?.method {
                case "GET"?: return try self.get(objectId, access)
                case "PUT"?: return try self.update(objectId, override!.body, access)
                case "DELETE"?: return try self.delete(objectId, access)
                default: throw ParseError.invalidJSON("POST to a role needs _method GET, PUT or DELETE in the body.")
                }
            }
        }
    }

    /// Registers one route: keys (header or body), the caller with their roles, then `handler`.
    private func add(
        _ routes: HTTPRouteGroup, _ method: HTTPMethod, _ path: String,
        _ handler: @escaping @Sendable (HTTPRequest, ParseMethodOverride?, ParseAccess) throws -> ParseAPI.Result
    ) {
        let (keys, sessions, publicRead, depth) = (keys, sessions, publicRead, maxJSONDepth)
        routes.add(
            HTTPRoute(method, mountPath + path) { request in
                let override =
                    method == .post
                    ? try ParseRoutes.methodOverride(try ParseRoutes.body(request), maxDepth: depth, request, keys)
                    : nil
                try ParseRoutes.require(.client, request, keys, bodyKeys: override?.keys)
                let caller = try sessions.caller(
                    request, access: keys.access(request, bodyKeys: override?.keys), bodyToken: override?.sessionToken)
                let access = try sessions.roles.access(for: caller, publicRead: publicRead)
                return ParseRoutes.respond(try handler(request, override, access), request)
            })
    }

    private static func objectId(_ request: HTTPRequest) throws -> String {
        try ParseAPI.checkedObjectId(request.pathParameters["objectId"] ?? "")
    }

    /// The body as a JSON object (107 otherwise).
    private func object(_ body: [UInt8]) throws -> ParseJSONObject {
        guard case .object(let object) = try ParseJSONParser.parse(body, maxDepth: maxJSONDepth) else {
            throw ParseError.invalidJSON("The body must be a JSON object.")
        }
        return object
    }

    /// Creates a role (`changed()` is the caller's, after the commit of the transaction the create
    /// runs in with its `X-Parse-Request-Id` record).
    private func create(_ body: [UInt8], _ access: ParseAccess) throws -> ParseAPI.Result {
        guard access.caller.isMaster else {
            throw ParseError.operationForbidden("Only the master key may create a role.")
        }
        let write = try ParseRoleWrite.parse(try object(body), creating: true)
        let role = try repository.create(write)
        var json = ParseJSONWriter()
        json.beginObject()
        json.key("objectId")
        json.string(role.objectId)
        json.key("createdAt")
        json.string(ParseDate.format(role.createdAt))
        json.endObject()
        return ParseAPI.Result(
            status: .created, json: json.bytes, location: publicURL() + mountPath + "/roles/\(role.objectId)")
    }

    private func update(_ objectId: String, _ body: [UInt8], _ access: ParseAccess) throws -> ParseAPI.Result {
        let write = try ParseRoleWrite.parse(try object(body), creating: false)
        let updatedAt = try repository.update(objectId, write, access: access)
        changed()
        var json = ParseJSONWriter()
        json.beginObject()
        json.key("updatedAt")
        json.string(ParseDate.format(updatedAt))
        json.endObject()
        return ParseAPI.Result(status: .ok, json: json.bytes)
    }

    private func delete(_ objectId: String, _ access: ParseAccess) throws -> ParseAPI.Result {
        try repository.delete(objectId, access: access)
        changed()
        return UserRoutes.emptyObject
    }

    private func get(_ objectId: String, _ access: ParseAccess) throws -> ParseAPI.Result {
        let found = try repository.find(
            conditions: ["r.object_id = $1"], binds: [objectId], access: access, order: "r.object_id", limit: 1,
            skip: 0, count: false)
        guard let role = found.roles.first else { throw ParseError.objectNotFound() }
        var json = ParseJSONWriter()
        Self.write(role, to: &json)
        return ParseAPI.Result(status: .ok, json: json.bytes)
    }

    private func find(_ items: [(name: String, value: String)], _ access: ParseAccess) throws -> ParseAPI.Result {
        let query = try RoleQuery.parse(items, maxDepth: maxJSONDepth, access: access)
        let found = try repository.find(
            conditions: query.conditions, binds: query.binds, access: access, order: query.order, limit: query.limit,
            skip: query.skip, count: query.count)
        var json = ParseJSONWriter()
        json.beginObject()
        json.key("results")
        json.beginArray()
        for role in found.roles { Self.write(role, to: &json) }
        json.endArray()
        if let count = found.count {
            json.key("count")
            json.int(count)
        }
        json.endObject()
        return ParseAPI.Result(status: .ok, json: json.bytes)
    }

    /// Role changes alter memberships and what finds show: forget the remembered ones.
    private func changed() {
        sessions.roles.forgetAll()
        rolesChanged()
    }

    /// A role as Parse returns it, its relations described (`{"__type":"Relation","className":…}`).
    static func write(_ role: RoleRepository.Role, to json: inout ParseJSONWriter) {
        json.beginObject()
        json.key("objectId")
        json.string(role.objectId)
        json.key("name")
        json.string(role.name)
        json.key("ACL")
        json.raw(Array(role.acl.utf8))
        for (key, className) in [("users", "_User"), ("roles", "_Role")] {
            json.key(key)
            json.beginObject()
            json.key("__type")
            json.string("Relation")
            json.key("className")
            json.string(className)
            json.endObject()
        }
        json.key("createdAt")
        json.string(ParseDate.format(role.createdAt))
        json.key("updatedAt")
        json.string(ParseDate.format(role.updatedAt))
        json.endObject()
    }
}
