import HTTPServer

/// Wraps a route's handler for browsers and client developers: carries out the request's
/// simulation plan (delay, injected failure), runs the handler, and adds the CORS headers.
/// Errors keep going to the route's error responder, which `CORSErrorResponder` decorates.
struct BrowserFacingHandler: HTTPHandler {
    let inner: HTTPHandler
    let cors: CORSPolicy
    let simulation: RequestSimulation
    /// False for routes that run on an event loop: they never sleep (it would stall every
    /// connection of that loop), only fail.
    let maySleep: Bool

    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        let plan: RequestSimulation.Plan
        do {
            plan = try simulation.plan(for: request)
        } catch let error as SimulationHeaderError {
            throw HTTPError(.badRequest, error.description)
        }
        if plan.isActive {
            do {
                try simulation.perform(
                    maySleep ? plan : RequestSimulation.Plan(latencyMs: 0, errorRate: plan.errorRate))
            } catch is SimulatedFailure {
                throw HTTPError(
                    .serviceUnavailable, "Simulated failure (X-Gallery-Simulate or simulate_error_rate); try again.",
                    headers: ["Retry-After": "1"])
            }
        }
        var response = try inner.handle(request)
        cors.decorate(&response, for: request)
        return response
    }
}
