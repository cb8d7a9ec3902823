import Synchronization
import Testing

@testable import HTTPServer

/// Appends its name to the `X-Trace` header on the way in (on the request) and out (on the response).
private struct Tracing: HTTPMiddleware {
    let name: String

    func handle(_ request: HTTPRequest, next: any HTTPHandler) throws -> HTTPResponse {
        var request = request
        request.headers["X-Trace"] = (request.headers["X-Trace"].map { $0 + "," } ?? "") + name
        var response = try next.handle(request)
        response.headers["X-Trace"] = (response.headers["X-Trace"].map { $0 + "," } ?? "") + name
        return response
    }
}

/// Refuses every request before the handler, with 403.
private struct Refusing: HTTPMiddleware {
    func handle(_ request: HTTPRequest, next: any HTTPHandler) throws -> HTTPResponse {
        throw HTTPError(.forbidden, "refused")
    }
}

/// The response of the route `router` matched for GET `path`, its handler run as the server runs it.
private func get(_ router: HTTPRouter, _ path: String) throws -> HTTPResponse {
    let found = try #require(router.route(method: .get, path: path))
    return try found.route.handler.handle(HTTPRequest(method: .get, target: path))
}

extension HTTPResponse {
    /// The body of a response in memory, as text.
    fileprivate var bodyText: String {
        guard case .bytes(let bytes) = body else { return "" }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Echoes the trace the request arrived with as the body.
private func echo(_ pattern: String) -> HTTPRoute {
    HTTPRoute(.get, pattern) { request in .text(request.headers["X-Trace"] ?? "") }
}

@Test func routeGroup_RunsMiddlewareInOrder_FirstOutermost() throws {
    let router = HTTPRouter()
    router.group(Tracing(name: "a"), Tracing(name: "b")).add(echo("/x"))
    let response = try get(router, "/x")
    #expect(response.bodyText == "a,b")
    // On the way out the inner middleware sees the response first.
    #expect(response.headers["X-Trace"] == "b,a")
}

@Test func routeGroup_AppliesMiddleware_OnlyToRoutesAddedAfterIt() throws {
    let router = HTTPRouter()
    let group = router.group(Tracing(name: "outer"))
    group.add(echo("/before"))
    group.add(middleware: Tracing(name: "inner"))
    group.add(echo("/after"))
    let nested = group.group(Tracing(name: "nested"))
    nested.add(echo("/nested"))
    router.add(echo("/plain"))
    #expect(try get(router, "/before").bodyText == "outer")
    #expect(try get(router, "/after").bodyText == "outer,inner")
    #expect(try get(router, "/nested").bodyText == "outer,inner,nested")
    #expect(try get(router, "/plain").bodyText == "")
}

@Test func router_AddMiddleware_AppliesToLaterRoutesAndGroups() throws {
    let router = HTTPRouter()
    router.add(echo("/early"))
    router.add(middleware: Tracing(name: "all"))
    router.add(echo("/late"))
    router.group(Tracing(name: "g")).add(echo("/grouped"))
    #expect(try get(router, "/early").bodyText == "")
    #expect(try get(router, "/late").bodyText == "all")
    #expect(try get(router, "/grouped").bodyText == "all,g")
}

@Test func routeGroup_MiddlewareThatThrows_KeepsTheHandlerFromRunning() throws {
    let router = HTTPRouter()
    let ran = Mutex(false)
    router.group(Refusing()).add(
        HTTPRoute(.get, "/guarded") { _ in
            ran.withLock { $0 = true }
            return .text("ran")
        })
    #expect(throws: HTTPError.self) { try get(router, "/guarded") }
    #expect(ran.withLock { $0 } == false)
}

@Test func router_RejectsDuplicateRoute_NamingMethodAndPattern() throws {
    let router = HTTPRouter()
    try router.insert(echo("/parse/classes/:className"))
    try router.insert(HTTPRoute(.post, "/parse/classes/:className") { _ in .text("") })
    #expect(
        throws: HTTPRouterError.duplicateRoute(
            method: .get, pattern: "/parse/classes/:className", existing: "/parse/classes/:className")
    ) {
        try router.insert(echo("/parse/classes/:className"))
    }
    // Another parameter name matches the same paths: still the same route.
    let error = #expect(throws: HTTPRouterError.self) { try router.insert(echo("/parse/classes/:name")) }
    #expect(
        error?.description
            == "duplicate route: GET /parse/classes/:name is already registered as /parse/classes/:className")
    // The first route stays, and is listed once.
    #expect(router.routes.count == 2)
}

@Test func router_AddStopsTheProcess_OnADuplicateRoute() async {
    await #expect(processExitsWith: .failure) {
        let router = HTTPRouter()
        router.add(HTTPRoute(.get, "/twice") { _ in .text("") })
        router.add(HTTPRoute(.get, "/twice") { _ in .text("") })
    }
}
