import Foundation
import HTTPServer
import Logging
import Postgres

/// `/health` (alive), `/ready` (database reachable, migrations current) and `/metrics` (Prometheus text).
struct OperationsRoutes {
    let configuration: GalleryConfiguration
    let pool: PostgresPool
    let migrator: Migrator
    let metrics: GalleryMetrics
    let keys: KeyChecker
    /// Where `/ready` logs why the database is unreachable (libpq's text names hosts and users).
    let logger: Logger

    static let healthBody = Array("{\"status\":\"ok\"}".utf8)
    /// The answer of `/health`, made once: every probe gets the same, and nothing is built per request.
    static let healthy = HTTPResponse.json(healthBody)

    /// Registers the routes: `/health`, `/ready` and `/metrics` on `router`, the Parse health path
    /// through `mount` (the Parse mount's group: browser access).
    func register(on router: HTTPRouter, mount: HTTPRouteGroup) {
        let health = HTTPClosureHandler { _ in Self.healthy }
        router.add(HTTPRoute(.get, "/health", mayBlock: false, handler: health))
        mount.add(HTTPRoute(.get, configuration.mountPath + "/health", mayBlock: false, handler: health))
        // Parse Server answers its health path for any method (ParseHealth.check() POSTs).
        let healthNotStored = HTTPClosureHandler { _ in HTTPResponse.json(Self.healthBody).notStored() }
        for method in [HTTPMethod.post, .put, .patch, .delete] {
            mount.add(HTTPRoute(method, configuration.mountPath + "/health", mayBlock: false, handler: healthNotStored))
        }

        let database = HealthRepository(pool: pool)
        let migrator = self.migrator
        let keys = self.keys
        let logger = self.logger
        router.add(
            HTTPRoute(.get, "/ready") { request in
                do {
                    try database.ping()
                    guard try migrator.isCurrent() else {
                        return Self.unavailable("migrations are not current: run galleryd migrate")
                    }
                    return .json(Self.healthBody)
                } catch {
                    // The driver's text (host, port, user, database) is for the operator: in the log,
                    // and in the answer only to the master key.
                    logger.error(
                        "ready: database unreachable",
                        metadata: ["requestId": "\(request.requestID)", "error": "\(error)"])
                    return Self.unavailable(
                        keys.isMaster(request) ? "database unreachable: \(error)" : "database unreachable")
                }
            })

        let metrics = self.metrics
        let isPublic = configuration.metricsPublic
        router.add(
            HTTPRoute(.get, "/metrics") { request in
                guard isPublic || keys.isMaster(request) else {
                    return HTTPResponse(
                        status: .unauthorized, contentType: "text/plain; charset=utf-8",
                        bytes: Array(
                            "metrics need the master key (X-Parse-Master-Key or Authorization: Bearer)\n".utf8),
                        headers: [
                            "WWW-Authenticate": "Bearer realm=\"galleryd\"", "Cache-Control": HTTPResponse.noStoreValue,
                        ])
                }
                return .text(metrics.registry.render(), contentType: "text/plain; version=0.0.4; charset=utf-8")
            })
    }

    static func unavailable(_ reason: String) -> HTTPResponse {
        var json = ParseJSONWriter()
        json.beginObject()
        json.key("status")
        json.string("unavailable")
        json.key("reason")
        json.string(reason)
        json.endObject()
        return HTTPResponse.json(json.bytes, status: .serviceUnavailable).notStored()
    }
}
