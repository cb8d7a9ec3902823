import Foundation
import Logging
import Testing

@testable import HTTPServer

// systemd socket activation: systemd holds the listening socket and passes a copy to each
// instance of galleryd (LISTEN_FDS). Here the test process plays systemd: it keeps its own
// descriptor of a listening socket and hands each server a dup of it.

/// A listening socket on 127.0.0.1 held by the test, as systemd holds one.
private func holdListeningSocket() throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound, listen(fd, 128) == 0 else { throw SocketError.listenFailed(SocketError.errnoText) }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}

private func startActivated(_ fd: Int32, backend: HTTPIOBackend) throws -> HTTPServer {
    var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
    configuration.ioBackend = backend
    configuration.listenFileDescriptor = dup(fd)
    configuration.eventLoopThreads = 2
    configuration.handlerThreads = 2
    let router = HTTPRouter()
    router.add(.get, "/hello", mayBlock: false) { _ in .text("hello") }
    var logger = Logger(label: "test")
    logger.logLevel = .critical
    let server = HTTPServer(configuration: configuration, router: router, logger: logger)
    try server.start()
    return server
}

@Test(arguments: HTTPIOBackend.available)
func server_LeavesInheritedSocketListening_WhenStopped(backend: HTTPIOBackend) throws {
    let (held, port) = try holdListeningSocket()
    defer { close(held) }

    let first = try startActivated(held, backend: backend)
    #expect(first.port == port)
    let client = try RawClient(port: port)
    client.send(get("/hello"))
    #expect(try client.readResponse().text == "hello")
    first.shutdown()
    first.wait()

    // Between instances the socket still listens: the kernel queues the connection and its request.
    let waiting = try RawClient(port: port)
    waiting.send(get("/hello"))

    let second = try startActivated(held, backend: backend)
    defer {
        second.shutdown()
        second.wait()
    }
    #expect(try waiting.readResponse().text == "hello")
    let fresh = try RawClient(port: port)
    fresh.send(get("/hello"))
    #expect(try fresh.readResponse().text == "hello")
}

@Test(arguments: HTTPIOBackend.available)
func server_StopsAcceptingAtOnce_OnASocketItBound(backend: HTTPIOBackend) throws {
    let server = try startBound(backend: backend)
    let port = server.port
    server.shutdown()
    server.wait()
    // Our own socket is shut down and closed: nobody listens any more.
    #expect(throws: RawClient.ClientError.self) { _ = try RawClient(port: port) }
}

private func startBound(backend: HTTPIOBackend) throws -> HTTPServer {
    var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
    configuration.ioBackend = backend
    configuration.eventLoopThreads = 2
    var logger = Logger(label: "test")
    logger.logLevel = .critical
    let server = HTTPServer(configuration: configuration, router: HTTPRouter(), logger: logger)
    try server.start()
    return server
}
