import Foundation
import HTTPServer

/// `POST /batch`: `{"requests":[{"method","path","body"}…],"transaction":false}` → an array with
/// one `{"success":…}` or `{"error":{"code","error"}}` per request, in order. Sub-requests run
/// one by one through the same `ParseAPI` as the routes; a failure does not stop the others
/// (Parse Server's non-transactional batch). With `"transaction":true` (what the SDKs' `saveAll`
/// and `deleteAll` can send) they share one database transaction: all succeed, or nothing is
/// kept and the answer is the failing request's Parse error.
///
/// Paths to the user and session routes (`/users[/…]`, `/classes/_User[/…]`, `/login`, `/logout`,
/// `/sessions[/…]`; what an SDK's `saveAll` of `_User` objects sends) run through the router's own
/// route for the path, as Parse Server's batch does, with the batch's keys, session token and
/// client address: the same answer as alone, one way to reach each handler. They are refused in a
/// transaction (password hashing and the login throttle's counts must not wait on, or roll back
/// with, other requests).
struct ParseBatch {
    let api: ParseAPI
    let mountPath: String
    /// The batch request's caller: every sub-request acts for it.
    var access: ParseAccess = .master
    /// The routes, for the sub-requests to the user and session paths (nil: those are refused).
    var router: HTTPRouter? = nil
    /// The batch request itself: its headers and address go with each routed sub-request.
    var request: HTTPRequest? = nil
    /// Parse Server's limit on requests in one batch.
    static let maxRequests = 50

    /// The batch's answer: the JSON array of results.
    func run(body: [UInt8]) throws -> [UInt8] {
        guard case .object(let root) = try ParseJSONParser.parse(body, maxDepth: api.limits.maxJSONDepth + 3),
            case .array(let requests)? = root["requests"]
        else { throw ParseError.invalidJSON("requests must be an array") }
        var transactional = false
        for key in root.keys where key != "requests" {
            guard key == "transaction" else { throw ParseError.invalidKeyName("Unknown field in batch body.") }
            guard case .bool(let flag) = root["transaction"] else {
                throw ParseError.invalidJSON("transaction must be a boolean.")
            }
            transactional = flag
        }
        guard requests.count <= Self.maxRequests else {
            throw ParseError.invalidJSON("A batch may contain at most \(Self.maxRequests) requests.")
        }
        if transactional {
            // The first failure throws out of the transaction, which rolls back every earlier change.
            // Every batch operation changes rows only: DELETE moves to Recently Deleted (again: a
            // no-op), and deleting for good with its blobs, which no rollback brings back, is
            // `DELETE /purge/...`, not a batch path.
            let results = try api.pool.sharingTransaction { try requests.map { try perform($0, inTransaction: true) } }
            var json = ParseJSONWriter()
            json.beginArray()
            for result in results {
                json.beginObject()
                json.key("success")
                json.raw(result.json)
                json.endObject()
            }
            json.endArray()
            return json.bytes
        }
        var json = ParseJSONWriter()
        json.beginArray()
        for request in requests {
            json.beginObject()
            do {
                let result = try perform(request, inTransaction: false)
                json.key("success")
                json.raw(result.json)
            } catch {
                json.key("error")
                json.raw((ParseErrorResponder.parseError(for: error) ?? ParseError.internalServerError()).jsonBody)
            }
            json.endObject()
        }
        json.endArray()
        return json.bytes
    }

    private func perform(_ request: ParseJSONValue, inTransaction: Bool) throws -> ParseAPI.Result {
        guard case .object(let object) = request, case .string(let method)? = object["method"],
            case .string(let rawPath)? = object["path"]
        else { throw ParseError.invalidJSON("Each batch request needs a method and a path.") }
        for key in object.keys where !["method", "path", "body"].contains(key) {
            throw ParseError.invalidKeyName("Unknown field \(key) in batch request.")
        }
        var body: [UInt8] = []
        var items: [(name: String, value: String)] = []
        if let value = object["body"] {
            // A GET's body holds its query parameters, as a `_method: GET` body does.
            if method.uppercased() == "GET" {
                guard case .object(let parameters) = value else {
                    throw ParseError.invalidJSON("A GET's body must be an object.")
                }
                items = parameters.members.map { member in
                    if case .string(let text) = member.value { return (member.key, text) }
                    var writer = ParseJSONWriter()
                    writer.value(member.value)
                    return (member.key, String(decoding: writer.bytes, as: UTF8.self))
                }
            }
            var writer = ParseJSONWriter()
            writer.value(value)
            body = writer.bytes
        }
        // Paths carry the mount prefix, as Parse SDKs send them (`/parse/classes/Photo/abc`).
        var path = rawPath
        if path.hasPrefix(mountPath + "/") { path.removeFirst(mountPath.count) }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if Self.isAccountPath(parts) {
            guard !inTransaction else {
                throw ParseError.operationForbidden(
                    "User, login, logout and session requests cannot run in a batch transaction: send them with \"transaction\":false."
                )
            }
            return try route(method: method.uppercased(), path: path, body: body, items: items)
        }
        guard parts.count >= 3, parts[0].isEmpty, parts[1] == "classes" else {
            throw ParseError.invalidJSON("Batch paths must be \(mountPath)/classes/<Class>[/<objectId>].")
        }
        let className = parts[2]
        let objectId = parts.count == 4 ? parts[3] : nil
        guard parts.count <= 4 else { throw ParseError.invalidJSON("Unsupported batch path \(rawPath.prefix(100)).") }
        switch (method.uppercased(), objectId) {
        case ("POST", nil): return try api.create(className, body: body, access: access)
        case ("PUT", let id?): return try api.update(className, objectId: id, body: body, access: access)
        case ("DELETE", let id?): return try api.delete(className, objectId: id, access: access)
        case ("GET", let id?): return try api.get(className, objectId: id, items: items, access: access)
        case ("GET", nil): return try api.findOrExplain(try api.findQuery(className, items: items, access: access))
        default:
            throw ParseError.invalidJSON("Unsupported batch method \(method.prefix(10)) for \(rawPath.prefix(100)).")
        }
    }

    /// Whether a mount-relative path (split at `/`) is one of the user and session routes'.
    static func isAccountPath(_ parts: [String]) -> Bool {
        guard parts.count >= 2, parts[0].isEmpty else { return false }
        switch parts[1] {
        case "users", "login", "logout", "sessions": return true
        case "classes": return parts.count >= 3 && parts[2] == "_User"
        default: return false
        }
    }

    /// Runs a sub-request through the route the router has for it, as the batch's caller: its
    /// headers (keys, session token, installation id) and address, the sub-request's body, and
    /// for a GET the body's parameters as the query string.
    private func route(
        method: String, path: String, body: [UInt8], items: [(name: String, value: String)]
    ) throws -> ParseAPI.Result {
        let httpMethod = HTTPMethod(rawValue: method)
        guard let router, let batch = request, let found = router.route(method: httpMethod, path: mountPath + path)
        else {
            throw ParseError.invalidJSON("Unsupported batch method \(method.prefix(10)) for \(path.prefix(100)).")
        }
        var headers = batch.headers
        // The batch's own body and replay id are not the sub-request's.
        for name in ["Content-Length", "Content-Type", "Content-Encoding", "Transfer-Encoding", "X-Parse-Request-Id"] {
            headers.remove(name)
        }
        var target = mountPath + (path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path)
        var requestBody = HTTPRequestBody.empty
        if httpMethod == .get {
            if !items.isEmpty {
                target +=
                    "?"
                    + items.map { Self.queryEncoded($0.name) + "=" + Self.queryEncoded($0.value) }.joined(
                        separator: "&")
            }
        } else if !body.isEmpty {
            headers.add("Content-Type", "application/json")
            requestBody = .bytes(body)
        }
        var subrequest = HTTPRequest(
            method: httpMethod, target: target, headers: headers, body: requestBody, remoteAddress: batch.remoteAddress,
            requestID: batch.requestID)
        subrequest.pathParameters = found.parameters
        subrequest.routePattern = found.route.pattern
        let response = try found.route.handler.handle(subrequest)
        switch response.body {
        case .bytes(let bytes): return ParseAPI.Result(status: response.status, json: bytes)
        case .empty: return ParseAPI.Result(status: response.status, json: Array("{}".utf8))
        default: throw ParseError.internalServerError("A batch sub-request answered a body that is not JSON.")
        }
    }

    /// A query-string component: everything but unreserved characters percent-encoded.
    private static func queryEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// RFC 3986's unreserved characters (ASCII only; `CharacterSet.alphanumerics` has every script's letters).
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
