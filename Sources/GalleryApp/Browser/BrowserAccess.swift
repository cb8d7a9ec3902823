import HTTPServer

/// Makes URL spaces (the Parse mount, the bucket) usable from browsers on other origins and from
/// client developers' test rigs: installed after their routes are registered, it wraps each of
/// their routes in a `BrowserFacingHandler`, their error responders in a `CORSErrorResponder`, and
/// answers preflight `OPTIONS` for any path below them without touching the database.
struct BrowserAccess {
    let cors: CORSPolicy
    let simulation: RequestSimulation

    /// Decorates the routes and error responder of each prefix (`/parse`, `/bucket`).
    func install(on router: HTTPRouter, prefixes: [String]) {
        for prefix in prefixes {
            let below = prefix + "/"
            for route in router.routes where route.pattern == prefix || route.pattern.hasPrefix(below) {
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
                router.add(HTTPRoute(
                    route.method, route.pattern, maxBodyBytes: route.maxBodyBytes, mayBlock: mayBlock,
                    bodyObserverFactory: route.bodyObserverFactory, admission: route.admission, inlineAnswer: inline,
                    handler: BrowserFacingHandler(
                        inner: route.handler, cors: cors, simulation: simulation, maySleep: mayBlock)))
            }
            router.mount(prefix: prefix, errorResponder: CORSErrorResponder(inner: router.errorResponder(for: prefix), cors: cors))
            let cors = self.cors
            for pattern in [prefix, below + "*path"] {
                router.add(HTTPRoute(.options, pattern, mayBlock: false) { request in cors.preflight(request) })
            }
        }
    }
}
