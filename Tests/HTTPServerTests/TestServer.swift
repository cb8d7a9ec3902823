import Foundation
import Logging
@testable import HTTPServer

/// Records what the server reports, for assertions on metrics hooks.
final class RecordingObserver: HTTPServerObserver, @unchecked Sendable {
    struct Finished: Equatable {
        var method: String
        var pattern: String
        var status: Int
    }
    private let lock = NSLock()
    private var _opened = 0
    private var _closed = 0
    private var _finished: [Finished] = []

    var opened: Int { lock.withLock { _opened } }
    var closed: Int { lock.withLock { _closed } }
    var finished: [Finished] { lock.withLock { _finished } }

    func connectionOpened() { lock.withLock { _opened += 1 } }
    func connectionClosed() { lock.withLock { _closed += 1 } }
    func requestFinished(method: HTTPMethod, routePattern: String, status: Int, durationSeconds: Double, bytesSent: Int) {
        lock.withLock { _finished.append(Finished(method: method.rawValue, pattern: routePattern, status: status)) }
    }
}

/// Starts a real server on an ephemeral loopback port, runs `body` with it, and always stops it.
func withServer(
    backend: HTTPIOBackend = .platformDefault,
    host: String = "127.0.0.1",
    configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    observer: HTTPServerObserver? = nil,
    routes: (HTTPRouter) -> Void,
    _ body: (HTTPServer) throws -> Void
) throws {
    var configuration = HTTPServerConfiguration(host: host, port: 0)
    configuration.eventLoopThreads = 2
    configuration.handlerThreads = 4
    configuration.drainTimeout = 5
    configuration.ioBackend = backend
    configure(&configuration)
    let router = HTTPRouter()
    routes(router)
    var logger = Logger(label: "galleryd.http.test")
    logger.logLevel = .critical
    let server = HTTPServer(configuration: configuration, router: router, logger: logger, observer: observer)
    try server.start()
    defer {
        server.shutdown()
        server.wait()
    }
    try body(server)
}

/// A small GET request.
func get(_ path: String, headers: String = "") -> String {
    "GET \(path) HTTP/1.1\r\nHost: test\r\n\(headers)\r\n"
}
