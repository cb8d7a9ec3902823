import CZlib
import Foundation
import Testing

@testable import HTTPServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The routes most server tests use (here and in the other `HTTPServer…Tests` files): a fixed text, a path
/// parameter, an echo of the body, and a route that takes at most 10 bytes.
func echoRoutes(_ router: HTTPRouter) {
    router.add(.get, "/hello", mayBlock: false) { _ in .text("hello") }
    router.add(.get, "/items/:id") { request in .text("item \(request.pathParameters["id"] ?? "?")") }
    router.add(.post, "/echo", maxBodyBytes: 1 << 20) { request in
        HTTPResponse(status: .ok, contentType: "application/octet-stream", bytes: Array(try request.body.data()))
    }
    router.add(.post, "/small", maxBodyBytes: 10) { request in .text("got \(request.body.count)") }
}

@Test(arguments: HTTPIOBackend.available)
func server_ReusesKeepAliveConnection(backend: HTTPIOBackend) throws {
    let observer = RecordingObserver()
    try withServer(backend: backend, observer: observer, routes: echoRoutes) { server in
        let client = try RawClient(port: server.port)
        for i in 0..<3 {
            client.send(get("/items/\(i)"))
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.text == "item \(i)")
            #expect(response.headers["Connection"] == nil)
            #expect(response.headers["X-Request-Id"] != nil)
            #expect(response.headers["Date"] != nil)
            #expect(response.headers["Server"] == "galleryd")
        }
    }
    // After shutdown every callback has run.
    #expect(observer.opened == 1)
    #expect(observer.closed == 1)
    #expect(observer.finished == Array(repeating: .init(method: "GET", pattern: "/items/:id", status: 200), count: 3))
}

@Test(arguments: HTTPIOBackend.available)
func server_AnswersPipelinedRequestsInOrder(backend: HTTPIOBackend) throws {
    try withServer(
        backend: backend,
        routes: { router in
            router.add(.get, "/slow/:n") { request in
                let n = Int(request.pathParameters["n"]!)!
                usleep(UInt32((3 - n) * 30_000))  // earlier requests take longer
                return .text("slow \(n)")
            }
            router.add(.get, "/fast", mayBlock: false) { _ in .text("fast") }
        }
    ) { server in
        let client = try RawClient(port: server.port)
        client.send(get("/slow/0") + get("/fast") + get("/slow/1") + get("/slow/2") + get("/missing"))
        #expect(try client.readResponse().text == "slow 0")
        #expect(try client.readResponse().text == "fast")
        #expect(try client.readResponse().text == "slow 1")
        #expect(try client.readResponse().text == "slow 2")
        #expect(try client.readResponse().status == 404)
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_FinishesInFlightRequest_OnShutdown(backend: HTTPIOBackend) throws {
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
    configuration.eventLoopThreads = 2
    configuration.handlerThreads = 2
    configuration.ioBackend = backend
    let router = HTTPRouter()
    router.add(.get, "/work") { _ in
        started.signal()
        release.wait()
        return .text("done")
    }
    router.add(.get, "/hello", mayBlock: false) { _ in .text("hello") }
    let server = HTTPServer(configuration: configuration, router: router)
    try server.start()
    let port = server.port
    let idle = try RawClient(port: port)
    idle.send(get("/hello"))
    #expect(try idle.readResponse().status == 200)

    let busy = try RawClient(port: port)
    busy.send(get("/work"))
    started.wait()
    server.shutdown()
    server.shutdown()  // idempotent
    // The idle keep-alive connection is closed, no new connections are accepted.
    #expect(idle.isClosedByServer())
    #expect(throws: (any Error).self) {
        let late = try RawClient(port: port)
        late.send(get("/hello"))
        _ = try late.readResponse()
    }
    release.signal()
    let response = try busy.readResponse()
    #expect(response.status == 200)
    #expect(response.text == "done")
    #expect(response.headers["Connection"] == "close")
    server.wait()
    #expect(busy.isClosedByServer())
}

@Test(arguments: HTTPIOBackend.available)
func server_ServesIPv6Loopback(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, host: "::1", routes: echoRoutes) { server in
        let client = try RawClient(port: server.port, host: "::1")
        client.send(get("/hello"))
        #expect(try client.readResponse().text == "hello")
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_Answers503_WhenConnectionLimitReached(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, configure: { $0.maxConnections = 1 }, routes: echoRoutes) { server in
        let first = try RawClient(port: server.port)
        first.send(get("/hello"))
        #expect(try first.readResponse().status == 200)
        let second = try RawClient(port: server.port)
        #expect(try second.readResponse().status == 503)
        first.send(get("/hello"))
        #expect(try first.readResponse().status == 200)
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_ClosesAfterResponse_ForHTTP10WithoutKeepAlive(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, routes: echoRoutes) { server in
        let client = try RawClient(port: server.port)
        client.send("GET /hello HTTP/1.0\r\n\r\n")
        try client.expectClosingAnswer(200)

        let keep = try RawClient(port: server.port)
        keep.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try keep.readResponse().headers["Connection"] == "keep-alive")
        keep.send("GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        #expect(try keep.readResponse().headers["Connection"] == "close")
        #expect(keep.isClosedByServer())
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_ServesOnInheritedListeningSocket(backend: HTTPIOBackend) throws {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    #expect(bound == 0)
    #expect(listen(fd, 16) == 0)
    try withServer(backend: backend, configure: { $0.listenFileDescriptor = fd }, routes: echoRoutes) { server in
        #expect(server.port > 0)
        let client = try RawClient(port: server.port)
        client.send(get("/hello"))
        #expect(try client.readResponse().text == "hello")
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_ThrowsSocketError_WhenPortTaken(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, routes: echoRoutes) { server in
        let second = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: server.port), router: HTTPRouter())
        #expect(throws: SocketError.self) { try second.start() }
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_WorksWithURLSession(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, routes: echoRoutes) { server in
        let url = URL(string: "http://127.0.0.1:\(server.port)/items/42")!
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: (Data?, Int?) = (nil, nil)
        let task = URLSession.shared.dataTask(with: url) { data, response, _ in
            result = (data, (response as? HTTPURLResponse)?.statusCode)
            done.signal()
        }
        task.resume()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(result.1 == 200)
        #expect(result.0.map { String(decoding: $0, as: UTF8.self) } == "item 42")
    }
}
