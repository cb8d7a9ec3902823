import BlobStore
import Foundation
import HTTPServer

/// The Parse-compatible REST API under the mount path (default `/parse`): classes, files and
/// batch, with Parse's keys and error format.
struct ParseRoutes {
    let application: GalleryApplication
    let keys: KeyChecker

    func register(on router: HTTPRouter) {
        let mount = application.configuration.mountPath
        router.mount(prefix: mount, errorResponder: ParseErrorResponder(logger: application.logger))
        let api = ParseAPI(application: application)
        let keys = self.keys
        let application = self.application

        router.add(HTTPRoute(
            .post, mount + "/files/:name", maxBodyBytes: application.configuration.maxUploadBytes,
            bodyObserverFactory: { SHA256BodyObserver() },
            // Keys from the headers before a byte of the upload is read or spooled (403 at once).
            headCheck: { try Self.require(.client, $0, keys) }
        ) { request in
            try Self.require(.client, request, keys)
            return try Self.upload(request, application: application)
        })
        // Each class route: check the keys, run the ParseAPI operation, answer with its JSON.
        func classRoute(
            _ method: HTTPMethod, _ path: String, _ level: KeyChecker.Access = .client,
            _ operation: @escaping @Sendable (HTTPRequest, _ className: String, _ objectId: String) throws -> ParseAPI.Result
        ) {
            router.add(HTTPRoute(method, mount + path) { request in
                try Self.require(level, request, keys)
                let parameters = request.pathParameters
                return Self.respond(try operation(request, parameters["className"]!, parameters["objectId"] ?? ""))
            })
        }
        classRoute(.get, "/classes/:className") { request, className, _ in
            try api.find(className, items: try Self.queryItems(request))
        }
        classRoute(.get, "/classes/:className/:objectId") { request, className, objectId in
            try api.get(className, objectId: objectId, items: try Self.queryItems(request))
        }
        // POST also carries the SDKs' method override and body keys (ParseMethodOverride).
        let depth = application.configuration.maxJSONDepth
        router.add(HTTPRoute(.post, mount + "/classes/:className") { request in
            let body = try Self.body(request)
            let override = try Self.methodOverride(body, maxDepth: depth, request, keys)
            let className = request.pathParameters["className"]!
            try Self.require(.client, request, keys, bodyKeys: override?.keys)
            switch override?.method {
            case nil, "POST"?:
                return Self.respond(try api.create(className, body: override?.body ?? body))
            case "GET"?:
                return Self.respond(try api.find(className, items: override!.queryItems(mergedWith: try Self.queryItems(request))))
            case let other?:
                throw ParseError.invalidJSON("_method \(other.prefix(10)) needs an objectId in the path, or is not supported.")
            }
        })
        router.add(HTTPRoute(.post, mount + "/classes/:className/:objectId") { request in
            let body = try Self.body(request)
            let override = try Self.methodOverride(body, maxDepth: depth, request, keys)
            let parameters = request.pathParameters
            let (className, objectId) = (parameters["className"]!, parameters["objectId"]!)
            try Self.require(.client, request, keys, bodyKeys: override?.keys)
            switch override?.method {
            case "GET"?:
                return Self.respond(
                    try api.get(className, objectId: objectId, items: override!.queryItems(mergedWith: try Self.queryItems(request))))
            case "PUT"?:
                return Self.respond(try api.update(className, objectId: objectId, body: override!.body))
            case "DELETE"?:
                return Self.respond(try api.delete(className, objectId: objectId))
            default:
                throw ParseError.invalidJSON("POST to an object needs _method GET, PUT or DELETE in the body.")
            }
        })
        classRoute(.put, "/classes/:className/:objectId") { request, className, objectId in
            try api.update(className, objectId: objectId, body: try Self.body(request))
        }
        classRoute(.delete, "/classes/:className/:objectId") { _, className, objectId in
            try api.delete(className, objectId: objectId)
        }
        classRoute(.delete, "/purge/:className", .master) { _, className, _ in
            try api.purgeTrash(className)
        }
        router.add(HTTPRoute(.post, mount + "/batch") { request in
            try Self.require(.client, request, keys)
            return try ParseBatch(api: api, mountPath: mount).run(body: try Self.body(request))
        })
    }

    /// Throws 403 `{"error":"unauthorized"}` (Parse Server's answer) unless the keys grant `level`.
    static func require(_ level: KeyChecker.Access, _ request: HTTPRequest, _ keys: KeyChecker) throws {
        guard keys.access(request) >= level else { throw ParseUnauthorized() }
    }

    /// The body's method override and keys. A body that does not parse is the client's error only
    /// once its headers are shown to carry valid keys; otherwise it is 403, as before any parsing.
    static func methodOverride(
        _ body: [UInt8], maxDepth: Int, _ request: HTTPRequest, _ keys: KeyChecker
    ) throws -> ParseMethodOverride? {
        // With keys in the headers the body plays no part in them: check before parsing anything.
        if request.headers["X-Parse-Application-Id"] != nil { try require(.client, request, keys) }
        do {
            return try ParseMethodOverride.parse(body, maxDepth: maxDepth)
        } catch {
            try require(.client, request, keys)
            throw error
        }
    }

    /// As `require`, also accepting keys carried in the body when the headers have none.
    static func require(
        _ level: KeyChecker.Access, _ request: HTTPRequest, _ keys: KeyChecker, bodyKeys: KeyChecker.Keys?
    ) throws {
        guard keys.access(request, bodyKeys: bodyKeys) >= level else { throw ParseUnauthorized() }
    }

    static func respond(_ result: ParseAPI.Result) -> HTTPResponse {
        var response = HTTPResponse.json(result.json, status: result.status)
        if let location = result.location { response.headers["Location"] = location }
        return response
    }

    static func queryItems(_ request: HTTPRequest) throws -> [(name: String, value: String)] {
        try ParseQueryString.decode(request.query ?? "")
    }

    static func body(_ request: HTTPRequest) throws -> [UInt8] {
        switch request.body {
        case .empty: return []
        case .bytes(let bytes): return bytes
        case .file: return [UInt8](try request.body.data())
        }
    }

    /// `POST /files/<name>`: the body (already spooled to disk and hashed while it arrived) is
    /// probed, stored under its content address and answered with 201, `Location` and `{"name","url"}`.
    static func upload(_ request: HTTPRequest, application: GalleryApplication) throws -> HTTPResponse {
        let name = request.pathParameters["name"] ?? ""
        guard !name.isEmpty, name.utf8.count <= 128, !name.contains("/"),
            name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else {
            throw ParseError(code: ParseError.Code.invalidFileName, message: "Filename contains invalid characters.")
        }
        guard request.body.count > 0 else {
            throw ParseError(code: ParseError.Code.fileSaveError, message: "The file is empty.")
        }
        guard let digest = (request.bodyObserver as? SHA256BodyObserver)?.hexDigest else {
            throw ParseError.internalServerError("upload digest missing")
        }
        let spooled: String
        var temporary: String?
        switch request.body {
        case .empty:
            throw ParseError(code: ParseError.Code.fileSaveError, message: "The file is empty.")
        case .file(let path, _):
            spooled = path
        case .bytes(let bytes):
            // Small uploads arrive in memory; spool them so the store can rename them into place.
            let path = application.store.spoolDirectory + "/upload-" + UUID().uuidString
            guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
                throw ParseError.internalServerError("cannot spool upload")
            }
            spooled = path
            temporary = path
        }
        defer { if let temporary { unlink(temporary) } }
        let stored = try application.uploads.storeFile(
            at: spooled, sha256: digest, byteSize: request.body.count, originalFilename: name)
        let url = application.publicURL + "/" + application.configuration.bucket + "/" + stored.key.rawValue
        var json = ParseJSONWriter()
        json.beginObject()
        json.key("name")
        json.string(stored.name)
        json.key("url")
        json.string(url)
        json.endObject()
        var response = HTTPResponse.json(json.bytes, status: .created)
        response.headers["Location"] = url
        return response
    }
}

/// Parse Server's answer to missing or wrong keys: 403 `{"error":"unauthorized"}`.
struct ParseUnauthorized: Error, CustomStringConvertible {
    var description: String { "unauthorized" }
}
