import HTTPServer

/// The Parse keys a group of routes requires (`KeyChecker.Access`), checked before the handler runs
/// and, on routes that check the request head (`admission`: uploads), before the body is read:
/// 403 `{"error":"unauthorized"}` (`ParseUnauthorized`) when the keys fall short.
///
/// Answers given on the event loop (`inlineAnswer`) are left as they are: they already give way to
/// the handler, and so to this check, whenever the keys do not grant a client's access.
struct ParseKeyMiddleware: HTTPMiddleware {
    /// Where the keys are read from.
    enum Source: Sendable {
        /// The headers only.
        case headers
        /// The headers when they carry an application id; otherwise the keys may be in the body
        /// (the JavaScript SDK's `_ApplicationId`), which the route reads and checks itself.
        case headersOrBody
    }

    let keys: KeyChecker
    /// What the keys must grant.
    let level: KeyChecker.Access
    let source: Source

    /// Requires `level` from the keys in `source`.
    init(_ level: KeyChecker.Access, keys: KeyChecker, from source: Source = .headers) {
        self.keys = keys
        self.level = level
        self.source = source
    }

    func handle(_ request: HTTPRequest, next: any HTTPHandler) throws -> HTTPResponse {
        try check(request)
        return try next.handle(request)
    }

    func wrap(_ route: HTTPRoute) -> HTTPRoute {
        let handler = HTTPMiddlewareHandler(middleware: self, next: route.handler)
        guard let admission = route.admission else { return route.replacing(handler: handler) }
        return route.replacing(
            handler: handler,
            admission: .some { [self] request in
                try check(request)
                return try admission(request)
            })
    }

    /// Throws `ParseUnauthorized` unless the request's keys grant `level`.
    func check(_ request: HTTPRequest) throws {
        if source == .headersOrBody && request.headers["X-Parse-Application-Id"] == nil { return }
        guard keys.access(request) >= level else { throw ParseUnauthorized() }
    }
}
