@testable import HTTPServer

// What the router tests (HTTPRouterTests, HTTPRouteTableTests) register and read back.

/// A route whose handler answers its own pattern.
func route(_ method: HTTPMethod, _ pattern: String) -> HTTPRoute {
    HTTPRoute(method, pattern) { _ in .text(pattern) }
}

/// The pattern of the route `match` found; nil for any other match.
func pattern(_ match: HTTPRouter.Match) -> String? {
    if case .route(let route, _) = match { return route.pattern }
    return nil
}

/// The path parameters of the route `match` found; nil for any other match.
func parameters(_ match: HTTPRouter.Match) -> HTTPPathParameters? {
    if case .route(_, let parameters) = match { return parameters }
    return nil
}
