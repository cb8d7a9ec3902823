import HTTPServer

/// Makes URL spaces (the Parse mount, the bucket) usable from browsers on other origins and from
/// client developers' test rigs. As middleware of their route groups it serves each route through a
/// `BrowserFacingHandler` (simulation, CORS headers), keeps answers from memory on the event loop
/// CORS-decorated, and makes routes blocking when every request is to be slowed; `install` then
/// decorates the error responders of their prefixes (`CORSErrorResponder`) and answers preflight
/// `OPTIONS` for any path below them without touching the database.
struct BrowserAccess: HTTPMiddleware {
    let cors: CORSPolicy
    let simulation: RequestSimulation

    func handle(_ request: HTTPRequest, next: any HTTPHandler) throws -> HTTPResponse {
        try BrowserFacingHandler(inner: next, cors: cors, simulation: simulation, maySleep: true).handle(request)
    }

    func wrap(_ route: HTTPRoute) -> HTTPRoute {
        // Sleeping on an event loop stalls its other connections: a non-blocking route only
        // becomes a blocking one when the configuration asks every request to be slowed.
        let mayBlock = route.mayBlock || simulation.configured.latencyMs > 0
        // An answer from memory on the loop keeps its CORS headers, and steps aside (to the
        // handler, which carries the plan out) whenever the request has something to simulate.
        let (cors, simulation) = (cors, simulation)
        let inline = route.inlineAnswer.map { answer in
            { @Sendable (request: HTTPRequest) -> HTTPResponse? in
                guard let plan = try? simulation.plan(for: request), !plan.isActive, var response = answer(request)
                else { return nil }
                cors.decorate(&response, for: request)
                return response
            }
        }
        return route.replacing(
            handler: BrowserFacingHandler(inner: route.handler, cors: cors, simulation: simulation, maySleep: mayBlock),
            mayBlock: mayBlock, inlineAnswer: .some(inline))
    }

    /// Once the routes of each prefix (`/parse`, `/bucket`) are registered through this middleware:
    /// CORS headers on their errors too, and the preflight answers.
    func install(on router: HTTPRouter, prefixes: [String]) {
        for prefix in prefixes {
            router.mount(
                prefix: prefix,
                errorResponder: CORSErrorResponder(inner: router.errorResponder(for: prefix), cors: cors))
            let cors = self.cors
            for pattern in [prefix, prefix + "/*path"] {
                router.add(HTTPRoute(.options, pattern, mayBlock: false) { request in cors.preflight(request) })
            }
        }
    }
}
