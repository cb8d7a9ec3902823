/// Behaviour shared by a group of routes (keys, CORS, simulated failures), run around each route's
/// handler in the order the group lists it, as Hummingbird 2's `MiddlewareProtocol`. The chain is
/// built once, when a route is registered (`wrap`), never per request: a request pays one call per
/// middleware and no allocation.
public protocol HTTPMiddleware: Sendable {
    /// Answers `request`, passing it on to `next` (the rest of the chain, then the route's handler)
    /// or answering (or throwing, for the route's error responder) without it.
    func handle(_ request: HTTPRequest, next: any HTTPHandler) throws -> HTTPResponse

    /// The route as served through this middleware. By default the same route with its handler
    /// wrapped in `handle(_:next:)`; a middleware that must also act on the request head
    /// (`admission`), on answers given on the event loop (`inlineAnswer`) or on where the handler
    /// runs (`mayBlock`) replaces those too.
    func wrap(_ route: HTTPRoute) -> HTTPRoute
}

extension HTTPMiddleware {
    public func wrap(_ route: HTTPRoute) -> HTTPRoute {
        route.replacing(handler: HTTPMiddlewareHandler(middleware: self, next: route.handler))
    }
}

/// A handler that runs one middleware around the next handler of the chain.
public struct HTTPMiddlewareHandler<Middleware: HTTPMiddleware>: HTTPHandler {
    /// The middleware this link runs.
    public let middleware: Middleware
    /// The rest of the chain.
    public let next: any HTTPHandler

    /// One link of a chain.
    public init(middleware: Middleware, next: any HTTPHandler) {
        self.middleware = middleware
        self.next = next
    }

    public func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        try middleware.handle(request, next: next)
    }
}
