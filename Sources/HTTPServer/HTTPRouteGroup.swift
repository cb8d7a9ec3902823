/// Registers routes on a router through an ordered list of middleware, as Hummingbird 2's
/// `RouterGroup`: the first middleware listed is the outermost, and each applies to the routes
/// added through this group (or a group made from it) after the middleware was added. The chain
/// of each route is built here, once, at registration.
///
/// A class, as Hummingbird's `MiddlewareGroup`: `add(middleware:)` changes what later routes get.
/// Used while the application is assembled, before the server starts (not `Sendable`).
public final class HTTPRouteGroup {
    /// The router the routes go to (for error responders and for routing sub-requests).
    public let router: HTTPRouter
    /// The middleware, outermost first.
    public private(set) var middleware: [any HTTPMiddleware]

    init(router: HTTPRouter, middleware: [any HTTPMiddleware]) {
        self.router = router
        self.middleware = middleware
    }

    /// Adds `middleware` after (inside) this group's: it applies to the routes added from now on.
    @discardableResult
    public func add(middleware: any HTTPMiddleware) -> HTTPRouteGroup {
        self.middleware.append(middleware)
        return self
    }

    /// A group with this group's middleware followed by `middleware`; this group is unchanged.
    public func group(_ middleware: any HTTPMiddleware...) -> HTTPRouteGroup {
        HTTPRouteGroup(router: router, middleware: self.middleware + middleware)
    }

    /// Adds `route` to the router, wrapped in this group's middleware (the first outermost).
    /// A second route for the same method and pattern is a programmer error (see `HTTPRouter.add`).
    public func add(_ route: HTTPRoute) {
        router.insertOrFail(HTTPRouter.wrap(route, in: middleware))
    }

    /// Adds a route from its parts.
    public func add(
        _ method: HTTPMethod, _ pattern: String, maxBodyBytes: Int? = nil, mayBlock: Bool = true,
        _ body: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse
    ) {
        add(HTTPRoute(method, pattern, maxBodyBytes: maxBodyBytes, mayBlock: mayBlock, body))
    }

    /// `HTTPRouter.mount(prefix:errorResponder:)` on the group's router.
    public func mount(prefix: String, errorResponder: HTTPErrorResponder) {
        router.mount(prefix: prefix, errorResponder: errorResponder)
    }
}
