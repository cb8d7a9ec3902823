import Foundation
import Logging
import Synchronization

/// What every event loop and connection of one server shares: configuration, router, logger,
/// observer, the handler pool and the connection count. Immutable except for the counter.
final class HTTPServerCore: Sendable {
    /// The configuration given to the server.
    let configuration: HTTPServerConfiguration
    /// Routes and error responders (read-only while serving).
    let router: HTTPRouter
    /// Access log and errors (label "galleryd.http").
    let logger: Logger
    /// Metrics hooks.
    let observer: HTTPServerObserver?
    /// Runs handlers that may block.
    let pool: HandlerPool
    /// The buffered access log, nil when it is off.
    let accessLog: HTTPAccessLog?
    /// Connections open now (taken at accept, not per request).
    private let openConnections = Mutex(0)

    /// Creates the shared state and starts the handler threads.
    init(configuration: HTTPServerConfiguration, router: HTTPRouter, logger: Logger, observer: HTTPServerObserver?) {
        self.configuration = configuration
        self.router = router
        self.logger = logger
        self.observer = observer
        self.pool = HandlerPool(threads: configuration.handlerThreads)
        self.accessLog =
            configuration.accessLog.format == .off
            ? nil : HTTPAccessLog(configuration: configuration.accessLog, loops: max(1, configuration.eventLoopThreads))
    }

    /// Takes a connection slot; false when `maxConnections` are open.
    func reserveConnection() -> Bool {
        openConnections.withLock { open in
            if open >= configuration.maxConnections { return false }
            open += 1
            return true
        }
    }

    /// Gives a slot back.
    func releaseConnection() {
        openConnections.withLock { $0 -= 1 }
    }

    /// Runs a handler, turning every thrown error into the responder's response. Errors that are not
    /// `HTTPError` go to the route's responder, which maps them and logs them at the right level.
    /// `chosen` nil: the one the router has for the request's path (looked at only for an error).
    func run(_ route: HTTPRoute, _ request: HTTPRequest, _ chosen: HTTPErrorResponderChoice.Chosen?) -> HTTPResponse {
        do {
            return try route.handler.handle(request)
        } catch let error as HTTPError {
            return (chosen?.responder ?? router.errorResponder(for: request.path)).response(
                for: error, request: request)
        } catch {
            let response = (chosen?.responder ?? router.errorResponder(for: request.path)).response(
                for: error, request: request)
            // Client errors are the responder's to log (at notice); a 5xx is ours, so log it here
            // with the request id the client was shown.
            let metadata: Logger.Metadata = [
                "request": "\(request.requestID)", "route": "\(route.pattern)", "method": "\(request.method)",
            ]
            if response.status.code >= 500 {
                logger.error("handler failed: \(error)", metadata: metadata)
            } else {
                logger.debug("handler threw: \(error)", metadata: metadata)
            }
            return response
        }
    }
}
