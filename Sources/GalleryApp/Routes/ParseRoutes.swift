import BlobStore
import Foundation
import HTTPServer
import Logging

/// The Parse-compatible REST API under the mount path (default `/parse`): classes, files and
/// batch, with Parse's keys and error format.
struct ParseRoutes {
    /// What the routes work with: the operations, the services and settings they call, and the
    /// URLs of a running server (read per request). `GalleryApplication.registerRoutes` wires it.
    struct Context: Sendable {
        /// The settings the routes read (mount path, body and JSON limits, `public_read`).
        let configuration: GalleryConfiguration
        let logger: Logger
        /// The Parse operations on classes (finds, gets, writes, trash, purges).
        let api: ParseAPI
        /// Session tokens to callers.
        let sessions: SessionAuthenticator
        /// The change sequences behind find ETags.
        let classChanges: ClassChangeSequences
        /// Finds' tag inputs by query string and rendered answers by tag.
        let manifestCache: ManifestCache
        /// Uploads: the head's admission (disk space) and storing the spooled file.
        let uploadAdmission: UploadAdmission
        let uploads: UploadService
        /// The JavaScript SDK's JSON uploads being read and decoded at once (`uploadJSONFile`).
        let jsonUploadSlots: HandlerSlots
        /// Where small uploads are spooled to a temporary file.
        let store: LocalBlobStore
        /// Answers remembered by `X-Parse-Request-Id`.
        let idempotency: ParseRequestIdempotency
        /// The server's public base URL: known only once it has bound its port.
        let currentPublicURL: @Sendable () -> String
        /// The asset URLs' signing window (their expiry, nil when unsigned), part of a find's ETag.
        let currentAssetURLWindow: @Sendable () -> Int64?
        /// The encoder of objects and asset URLs for the current window.
        let makeEncoder: @Sendable () -> ParseObjectEncoder

        var publicURL: String { currentPublicURL() }
        var assetURLWindow: Int64? { currentAssetURLWindow() }
    }

    let context: Context
    let keys: KeyChecker

    /// Registers the routes through `routes` (the mount's group: browser access), each in the
    /// group of the keys it needs (`ParseKeyMiddleware`), and Parse's error format for the mount.
    func register(on routes: HTTPRouteGroup) {
        let mount = context.configuration.mountPath
        let router = routes.router
        routes.mount(prefix: mount, errorResponder: ParseErrorResponder(logger: context.logger))
        let api = context.api
        let keys = self.keys
        let context = self.context
        let client = routes.group(ParseKeyMiddleware(.client, keys: keys))
        let master = routes.group(ParseKeyMiddleware(.master, keys: keys))
        // The SDKs' method override may carry the keys in the body: checked here only when the
        // headers carry an application id, else by the route once it has read the body.
        let clientOrBody = routes.group(ParseKeyMiddleware(.client, keys: keys, from: .headersOrBody))

        // Keys, the caller and disk space are checked on the head, before a byte of the body is
        // spooled: a refused upload costs the server nothing but the answer (4xx or 507 at once).
        // Without an application id header it may be the JavaScript SDK's JSON upload, whose keys
        // are in the body: read (bounded) and checked by the handler (ParseRoutes+JSONFile).
        let admission = context.uploadAdmission
        clientOrBody.add(
            HTTPRoute(
                .post, mount + "/files/:name", maxBodyBytes: context.configuration.maxUploadBytes,
                admission: { request in
                    guard request.headers["X-Parse-Application-Id"] != nil else {
                        return try Self.admitJSONUpload(request, context)
                    }
                    try Self.requireUploaderOnHead(request, keys, context)
                    let length = request.headers["Content-Length"].flatMap { Int($0) }
                    return SHA256BodyObserver(
                        reservation: try admission.admit(
                            contentLength: length, from: Self.uploadSender(request, keys, context)))
                }
            ) { request in
                guard request.headers["X-Parse-Application-Id"] != nil else {
                    return try Self.uploadJSONFile(request, keys, context)
                }
                let caller = try Self.requireUploader(request, keys, context)
                return try Self.upload(request, uploader: caller.userId, context: context)
            })
        // Each class route: run the ParseAPI operation (which re-reads the change sequences after
        // a write), answer with its JSON.
        func classRoute(
            _ method: HTTPMethod, _ path: String, on group: HTTPRouteGroup,
            _ operation:
                @escaping @Sendable (HTTPRequest, _ className: String, _ objectId: String, ParseAccess) throws ->
                ParseAPI.Result
        ) {
            group.add(
                HTTPRoute(method, mount + path) { request in
                    let access = try Self.access(request, keys, context)
                    let parameters = request.pathParameters
                    return Self.respond(
                        try operation(request, parameters["className"]!, parameters["objectId"] ?? "", access), request)
                })
        }
        // Find and count: an ETag, and 304 for an unchanged answer (ParseRoutes+Conditional); an
        // unchanged answer known in memory is given on the event loop, without the pool.
        client.add(
            HTTPRoute(
                .get, mount + "/classes/:className",
                inlineAnswer: { request in Self.inlineFind(request, keys: keys, context: context) }
            ) { request in
                let className = request.pathParameters["className"]!
                let access = keys.access(request)
                let caller = try Self.access(request, keys, context)
                if api.skipsAnswerCache(className) {
                    return Self.respond(
                        try api.findOrExplain(
                            try api.findQuery(className, items: try Self.queryItems(request), access: caller)), request)
                }
                return try Self.conditionalFind(
                    request, className: className, items: try Self.queryItems(request), access: access, caller: caller,
                    api: api, context: context,
                    cacheKey: ManifestCache.QueryKey(
                        className: try api.views.cacheName(className), query: request.query ?? "",
                        access: access.rawValue, caller: caller.tagKey))
            })
        classRoute(.get, "/classes/:className/:objectId", on: client) { request, className, objectId, access in
            try api.get(className, objectId: objectId, items: try Self.queryItems(request), access: access)
        }
        // POST also carries the SDKs' method override and body keys (ParseMethodOverride).
        let depth = context.configuration.maxJSONDepth
        let idempotency = context.idempotency
        clientOrBody.add(
            HTTPRoute(.post, mount + "/classes/:className") { request in
                let body = try Self.body(request)
                let override = try Self.methodOverride(body, maxDepth: depth, request, keys)
                let className = request.pathParameters["className"]!
                try Self.require(.client, request, keys, bodyKeys: override?.keys)
                let access = try Self.access(
                    request, keys, context, bodyKeys: override?.keys, bodyToken: override?.sessionToken)
                switch override?.method {
                case nil, "POST"?:
                    // X-Parse-Request-Id: a retried create gets the first answer (Parse Server's idempotency),
                    // recorded with the object, so also after a 503 whose COMMIT went through.
                    let result = try idempotency.run(
                        requestId: request.headers["X-Parse-Request-Id"],
                        scope: Self.idempotencyScope(request, access, bodyToken: override?.sessionToken), durable: true
                    ) {
                        try api.create(className, body: override?.body ?? body, access: access)
                    }
                    return Self.respond(result, request)
                case "GET"? where api.skipsAnswerCache(className):
                    let items = override!.queryItems(mergedWith: try Self.queryItems(request))
                    return Self.respond(
                        try api.findOrExplain(try api.findQuery(className, items: items, access: access)), request)
                case "GET"?:
                    return try Self.conditionalFind(
                        request, className: className,
                        items: override!.queryItems(mergedWith: try Self.queryItems(request)),
                        access: keys.access(request, bodyKeys: override?.keys), caller: access, api: api,
                        context: context)
                case let other?:
                    throw ParseError.invalidJSON(
                        "_method \(other.prefix(10)) needs an objectId in the path, or is not supported.")
                }
            })
        clientOrBody.add(
            HTTPRoute(.post, mount + "/classes/:className/:objectId") { request in
                let body = try Self.body(request)
                let override = try Self.methodOverride(body, maxDepth: depth, request, keys)
                let parameters = request.pathParameters
                let (className, objectId) = (parameters["className"]!, parameters["objectId"]!)
                try Self.require(.client, request, keys, bodyKeys: override?.keys)
                let access = try Self.access(
                    request, keys, context, bodyKeys: override?.keys, bodyToken: override?.sessionToken)
                switch override?.method {
                case "GET"?:
                    return Self.respond(
                        try api.get(
                            className, objectId: objectId,
                            items: override!.queryItems(mergedWith: try Self.queryItems(request)),
                            access: access),
                        request)
                case "PUT"?:
                    return Self.respond(
                        try api.update(className, objectId: objectId, body: override!.body, access: access), request)
                case "DELETE"?:
                    return Self.respond(try api.delete(className, objectId: objectId, access: access), request)
                default:
                    throw ParseError.invalidJSON("POST to an object needs _method GET, PUT or DELETE in the body.")
                }
            })
        classRoute(.put, "/classes/:className/:objectId", on: client) { request, className, objectId, access in
            try api.update(className, objectId: objectId, body: try Self.body(request), access: access)
        }
        classRoute(.delete, "/classes/:className/:objectId", on: client) { _, className, objectId, access in
            try api.delete(className, objectId: objectId, access: access)
        }
        classRoute(.delete, "/purge/:className", on: master) { _, className, _, _ in
            try api.purgeTrash(className)
        }
        // Delete one trashed object for good: its owner (or, before accounts exist, the app's
        // keys), as they could trash it; the master key works too.
        classRoute(.delete, "/purge/:className/:objectId", on: client) { _, className, objectId, access in
            try api.purge(className, objectId: objectId, access: access)
        }
        // Parse Server's FeaturesRouter: the version and what this server supports (master key).
        master.add(HTTPRoute(.get, mount + "/serverInfo") { _ in HTTPResponse.json(ParseServerInfo.json) })
        // The batch runs user and session sub-requests through their routes (weak: the router holds this route).
        client.add(
            HTTPRoute(.post, mount + "/batch") { [weak router] request in
                let access = try Self.access(request, keys, context)
                let body = try Self.body(request)
                let result = try idempotency.run(
                    requestId: request.headers["X-Parse-Request-Id"], scope: Self.idempotencyScope(request, access)
                ) {
                    ParseAPI.Result(
                        status: .ok,
                        json: try ParseBatch(
                            api: api, mountPath: mount, access: access, router: router, request: request
                        ).run(body: body))
                }
                return Self.respond(result, request)
            })
    }

    /// The request's access: its caller (the master key, a session's user — 209 for a bad token —
    /// or no session), the user's roles (resolved once here) and the `public_read` setting.
    static func access(
        _ request: HTTPRequest, _ keys: KeyChecker, _ context: Context, bodyKeys: KeyChecker.Keys? = nil,
        bodyToken: String? = nil
    ) throws -> ParseAccess {
        let caller = try context.sessions.caller(
            request, access: keys.access(request, bodyKeys: bodyKeys), bodyToken: bodyToken)
        return try context.sessions.roles.access(for: caller, publicRead: context.configuration.publicRead)
    }

    /// Who sends an upload, for its caps on uploads at once, decided on the event loop without the
    /// database: the master key is exempt; a session the authenticator remembers counts as its
    /// user, one it does not yet (a fresh token) by the token's hash; the address is the peer's host.
    static func uploadSender(_ request: HTTPRequest, _ keys: KeyChecker, _ context: Context) -> UploadAdmission.Sender {
        let address = LoginThrottle.host(request.remoteAddress)
        switch context.sessions.rememberedCaller(request, access: keys.access(request)) {
        case .master?: return UploadAdmission.Sender(user: nil, address: nil)
        case .user(let objectId)?: return UploadAdmission.Sender(user: objectId, address: address)
        case .anonymous?, nil:
            let token = request.headers["X-Parse-Session-Token"].map { "token:" + SessionToken($0).hash }
            return UploadAdmission.Sender(user: token, address: address)
        }
    }

    /// Throws 403 `{"error":"unauthorized"}` (Parse Server's answer) unless the keys grant `level`.
    static func require(_ level: KeyChecker.Access, _ request: HTTPRequest, _ keys: KeyChecker) throws {
        guard keys.access(request) >= level else { throw ParseUnauthorized() }
    }

    /// The body's method override and keys. A body that does not parse is the client's error only
    /// once its headers are shown to carry valid keys; otherwise it is 403, as before any parsing.
    /// (Keys in the headers were checked before the body was read: `ParseKeyMiddleware.headersOrBody`.)
    static func methodOverride(
        _ body: [UInt8], maxDepth: Int, _ request: HTTPRequest, _ keys: KeyChecker
    ) throws -> ParseMethodOverride? {
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

    /// The HTTP answer for a result: `Location` for a creation, and `Cache-Control: no-store`
    /// unless the request is a GET (a POST with `_method: GET` is still a POST to a cache).
    static func respond(_ result: ParseAPI.Result, _ request: HTTPRequest) -> HTTPResponse {
        var response = HTTPResponse.json(result.json, status: result.status)
        if let location = result.location { response.headers["Location"] = location }
        return request.method == .get ? response : response.notStored()
    }

    /// What a remembered answer is kept under besides the request id: the path, the caller (the
    /// session's user, however its token came: header or `_SessionToken`) and the token itself, so
    /// one caller's id never replays another's answer.
    /// Without an access (sign-up, where there is no caller yet): the path and the session header.
    static func idempotencyScope(_ request: HTTPRequest, _ access: ParseAccess? = nil, bodyToken: String? = nil)
        -> String
    {
        request.path + "\n" + (access.map { $0.tagKey + "\n" } ?? "")
            + (request.headers["X-Parse-Session-Token"] ?? bodyToken ?? "")
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
    /// The upload is `uploader`'s (nil: the master key's): only they may attach it to a photo.
    static func upload(_ request: HTTPRequest, uploader: String?, context: Context) throws -> HTTPResponse {
        let name = try validUploadName(request)
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
            // Small uploads arrive in memory; spool them so the store can rename them into place
            // (a full disk is `insufficientStorage`: 507, as when a large body is spooled).
            spooled = try context.store.writeTemporaryFile(bytes)
            temporary = spooled
        }
        defer { if let temporary { unlink(temporary) } }
        return try storeUpload(
            at: spooled, sha256: digest, byteSize: request.body.count, name: name, uploader: uploader, context: context)
    }

    /// The upload's name from the path, or 122.
    static func validUploadName(_ request: HTTPRequest) throws -> String {
        let name = request.pathParameters["name"] ?? ""
        guard !name.isEmpty, name.utf8.count <= 128, !name.contains("/"),
            name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else {
            throw ParseError(code: ParseError.Code.invalidFileName, message: "Filename contains invalid characters.")
        }
        return name
    }

    /// Stores the file spooled at `path` (its digest known) under its content address and answers
    /// 201 with `Location` and `{"name","url"}`: a raw upload's and a JSON upload's answer.
    static func storeUpload(
        at path: String, sha256: String, byteSize: Int, name: String, uploader: String?, context: Context
    ) throws -> HTTPResponse {
        let stored = try context.uploads.storeFile(
            at: path, sha256: sha256, byteSize: byteSize, originalFilename: name, uploader: uploader)
        let url = context.makeEncoder().url(forKey: stored.key.rawValue)
        var json = ParseJSONWriter()
        json.beginObject()
        json.key("name")
        json.string(stored.name)
        json.key("url")
        json.string(url)
        json.endObject()
        var response = HTTPResponse.json(json.bytes, status: .created)
        response.headers["Location"] = url
        return response.notStored()
    }
}

/// Parse Server's answer to missing or wrong keys: 403 `{"error":"unauthorized"}`.
struct ParseUnauthorized: Error, CustomStringConvertible {
    /// Why, for the log only (the answer is Parse Server's, whatever the reason).
    var reason: String? = nil
    var description: String { "unauthorized" }
}
