import HTTPServer

/// Cloud Code's routes as Parse Server answers them when no such function or job is defined (this
/// server runs no Cloud Code): `POST|GET /functions/<name>` is 141 `Invalid function: "<name>"`
/// (FunctionsRouter.handleCloudFunction) and `POST /jobs/<name>` with the master key is 141
/// `Invalid job: "<name>"`, as JSON, so an SDK's `ParseCloud.run` gets a Parse error rather than
/// a 404 page. `POST /jobs/retry` is the queue's own route (`ParseJobRoutes`) and wins: a literal
/// segment is matched before a parameter.
struct ParseCloudRoutes {
    let keys: KeyChecker
    let mountPath: String
    let maxJSONDepth: Int

    func register(on routes: HTTPRouteGroup) {
        let (keys, depth) = (keys, maxJSONDepth)
        for method in [HTTPMethod.get, .post] {
            routes.add(
                HTTPRoute(method, mountPath + "/functions/:name") { request in
                    try Self.requireKeys(.client, request, keys, maxDepth: depth)
                    throw ParseError(
                        code: ParseError.Code.scriptFailed, message: "Invalid function: \(Self.quoted(request))")
                })
        }
        routes.add(
            HTTPRoute(.post, mountPath + "/jobs/:name") { request in
                try Self.requireKeys(.master, request, keys, maxDepth: depth)
                throw ParseError(code: ParseError.Code.scriptFailed, message: "Invalid job: \(Self.quoted(request))")
            })
    }

    /// 403 unless the keys (headers, or a JavaScript SDK body's `_ApplicationId`…) grant `level`.
    private static func requireKeys(
        _ level: KeyChecker.Access, _ request: HTTPRequest, _ keys: KeyChecker, maxDepth: Int
    ) throws {
        let override =
            request.method == .post
            ? try? ParseRoutes.methodOverride(try ParseRoutes.body(request), maxDepth: maxDepth, request, keys) : nil
        try ParseRoutes.require(level, request, keys, bodyKeys: override?.keys)
    }

    /// The name from the path, quoted as Parse Server's message has it (cut to 100 characters).
    private static func quoted(_ request: HTTPRequest) -> String {
        "\"" + String((request.pathParameters["name"] ?? "").prefix(100)) + "\""
    }
}
