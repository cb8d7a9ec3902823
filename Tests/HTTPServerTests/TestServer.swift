import Foundation
import Logging
import Synchronization

@testable import HTTPServer

/// Records what the server reports, for assertions on metrics hooks.
final class RecordingObserver: HTTPServerObserver, Sendable {
    struct Finished: Equatable, Sendable {
        var method: String
        var pattern: String
        var status: Int
    }
    private struct Record {
        var opened = 0
        var closed = 0
        var finished: [Finished] = []
    }
    private let record = Mutex(Record())

    var opened: Int { record.withLock { $0.opened } }
    var closed: Int { record.withLock { $0.closed } }
    var finished: [Finished] { record.withLock { $0.finished } }

    func connectionOpened() { record.withLock { $0.opened += 1 } }
    func connectionClosed() { record.withLock { $0.closed += 1 } }
    func requestFinished(method: HTTPMethod, routePattern: String, status: Int, durationSeconds: Double, bytesSent: Int)
    {
        record.withLock { $0.finished.append(Finished(method: method.rawValue, pattern: routePattern, status: status)) }
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
