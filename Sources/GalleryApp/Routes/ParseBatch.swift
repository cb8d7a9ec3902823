import Foundation
import HTTPServer

/// `POST /batch`: `{"requests":[{"method","path","body"}…]}` → an array with one
/// `{"success":…}` or `{"error":{"code","error"}}` per request, in order. Sub-requests run
/// one by one through the same `ParseAPI` as the routes; a failure does not stop the others
/// (Parse Server's non-transactional batch).
struct ParseBatch {
    let api: ParseAPI
    let mountPath: String
    /// Parse Server's limit on requests in one batch.
    static let maxRequests = 50

    func run(body: [UInt8]) throws -> HTTPResponse {
        guard case .object(let root) = try ParseJSONParser.parse(body, maxDepth: api.limits.maxJSONDepth + 3),
            case .array(let requests)? = root["requests"]
        else { throw ParseError.invalidJSON("requests must be an array") }
        guard root.keys == ["requests"] else { throw ParseError.invalidKeyName("Unknown field in batch body.") }
        guard requests.count <= Self.maxRequests else {
            throw ParseError.invalidJSON("A batch may contain at most \(Self.maxRequests) requests.")
        }
        var json = ParseJSONWriter()
        json.beginArray()
        for request in requests {
            json.beginObject()
            do {
                let result = try perform(request)
                json.key("success")
                json.raw(result.json)
            } catch let error as ParseError {
                json.key("error")
                json.raw(error.jsonBody)
            } catch {
                json.key("error")
                json.raw(ParseError.internalServerError().jsonBody)
            }
            json.endObject()
        }
        json.endArray()
        return .json(json.bytes)
    }

    private func perform(_ request: ParseJSONValue) throws -> ParseAPI.Result {
        guard case .object(let object) = request, case .string(let method)? = object["method"],
            case .string(let rawPath)? = object["path"]
        else { throw ParseError.invalidJSON("Each batch request needs a method and a path.") }
        for key in object.keys where !["method", "path", "body"].contains(key) {
            throw ParseError.invalidKeyName("Unknown field \(key) in batch request.")
        }
        var body: [UInt8] = []
        if let value = object["body"] {
            var writer = ParseJSONWriter()
            writer.value(value)
            body = writer.bytes
        }
        // Paths carry the mount prefix, as Parse SDKs send them (`/parse/classes/Photo/abc`).
        var path = rawPath
        if path.hasPrefix(mountPath + "/") { path.removeFirst(mountPath.count) }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3, parts[0].isEmpty, parts[1] == "classes" else {
            throw ParseError.invalidJSON("Batch paths must be \(mountPath)/classes/<Class>[/<objectId>].")
        }
        let className = parts[2]
        let objectId = parts.count == 4 ? parts[3] : nil
        guard parts.count <= 4 else { throw ParseError.invalidJSON("Unsupported batch path \(rawPath.prefix(100)).") }
        switch (method.uppercased(), objectId) {
        case ("POST", nil): return try api.create(className, body: body)
        case ("PUT", let id?): return try api.update(className, objectId: id, body: body)
        case ("DELETE", let id?): return try api.delete(className, objectId: id)
        case ("GET", let id?): return try api.get(className, objectId: id, items: [])
        default: throw ParseError.invalidJSON("Unsupported batch method \(method.prefix(10)) for \(rawPath.prefix(100)).")
        }
    }
}
