import CZlib
import Foundation
import Testing

@testable import HTTPServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private func echoRoutes(_ router: HTTPRouter) {
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
func server_ReceivesChunkedUpload(backend: HTTPIOBackend) throws {
    try withServer(
        backend: backend,
        routes: { router in
            echoRoutes(router)
            router.add(.post, "/trailer") { request in .text(request.trailers["X-Trailer"] ?? "none") }
        }
    ) { server in
        let client = try RawClient(port: server.port)
        client.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        client.send("6\r\nhello \r\n")
        client.send("5;ext=1\r\nworld\r\n0\r\nX-Trailer: yes\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "hello world")
        client.send(
            "POST /trailer HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\nX-Trailer: yes\r\n\r\n"
        )
        #expect(try client.readResponse().text == "yes")
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_ClosesIdleConnections_AndTimesOutStalledBodies(backend: HTTPIOBackend) throws {
    try withServer(
        backend: backend,
        configure: { configuration in
            configuration.timeouts.idleKeepAlive = 0.3
            configuration.timeouts.bodyRead = 0.3
        }, routes: echoRoutes
    ) { server in
        let idle = try RawClient(port: server.port)
        idle.send(get("/hello"))
        #expect(try idle.readResponse().status == 200)
        #expect(idle.isClosedByServer())  // blocks until the idle timeout closes it

        let stalled = try RawClient(port: server.port)
        stalled.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc")
        let response = try stalled.readResponse()
        #expect(response.status == 408)
        #expect(stalled.isClosedByServer())
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_SendsContinue_WhenRouteAcceptsBody(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, routes: echoRoutes) { server in
        let client = try RawClient(port: server.port)
        client.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        let interim = try client.readResponse()
        #expect(interim.status == 100)
        client.send("abcde")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "abcde")
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_Answers413WithoutContinue_WhenBodyTooLargeForRoute(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, routes: echoRoutes) { server in
        let client = try RawClient(port: server.port)
        client.send("POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(response.headers["Connection"] == "close")
        #expect(client.isClosedByServer())
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_RejectsBadRequestsWithTheirStatus(backend: HTTPIOBackend) throws {
    try withServer(
        backend: backend,
        configure: { configuration in
            configuration.limits.requestLineBytes = 256
            configuration.limits.headerBytes = 512
        }, routes: echoRoutes
    ) { server in
        let cases: [(String, Int)] = [
            ("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
            ("GET /" + String(repeating: "x", count: 300) + " HTTP/1.1\r\nHost: t\r\n\r\n", 414),
            ("GET /hello HTTP/1.1\r\nHost: t\r\nX-Big: " + String(repeating: "y", count: 600) + "\r\n\r\n", 431),
            ("POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\nhello world", 413),
            ("GET /hello HTTP/3.0\r\nHost: t\r\n\r\n", 505),
            ("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: br\r\n\r\n", 501),
            ("GET /hello HTTP/1.1\r\n\r\n", 400),
            ("GET /hello HTTP/1.1\r\nHost: t\r\nX: a\r\n b\r\n\r\n", 400),
        ]
        for (request, status) in cases {
            let client = try RawClient(port: server.port)
            client.send(request)
            let response = try client.readResponse()
            #expect(response.status == status, "\(request.prefix(40))")
            #expect(response.headers["Connection"] == "close")
            #expect(client.isClosedByServer())
        }
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_CutsOffSlowHeaderClient_WhileServingOthers(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, configure: { $0.timeouts.headerRead = 0.5 }, routes: echoRoutes) { server in
        let slow = try RawClient(port: server.port)
        let prefix = Array("GET /hello HTTP/1.1\r\nX-Slow: ".utf8)
        var cutOff = false
        // Trickle one byte every 50 ms for up to 6 s: a per-byte timer reset would never fire.
        for i in 0..<120 {
            if !slow.send([i < prefix.count ? prefix[i] : UInt8(ascii: "z")]) {
                cutOff = true
                break
            }
            if i == 3 {
                // Another client is served meanwhile.
                let other = try RawClient(port: server.port)
                other.send(get("/hello"))
                #expect(try other.readResponse().text == "hello")
            }
            var poll = pollfd(fd: slow.fd, events: Int16(POLLIN), revents: 0)
            if Glibc.poll(&poll, 1, 50) > 0 {
                cutOff = true
                break
            }
        }
        #expect(cutOff)
        let rest = String(decoding: try slow.readToEnd(), as: UTF8.self)
        #expect(rest.hasPrefix("HTTP/1.1 408"))
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
func server_AnswersHeadWithoutBody(backend: HTTPIOBackend) throws {
    try withServer(
        backend: backend,
        routes: { router in
            router.add(.get, "/doc") { _ in .text(String(repeating: "d", count: 100)) }
        }
    ) { server in
        let client = try RawClient(port: server.port)
        client.send("HEAD /doc HTTP/1.1\r\nHost: t\r\n\r\n")
        let head = try client.readResponse(bodyless: true)
        #expect(head.status == 200)
        #expect(head.headers["Content-Length"] == "100")
        // Had a body been sent, this would read its bytes as a status line.
        client.send(get("/doc"))
        let full = try client.readResponse()
        #expect(full.status == 200)
        #expect(full.body.count == 100)
    }
}

private func gunzip(_ data: [UInt8]) -> [UInt8]? {
    var stream = z_stream()
    guard inflateInit2_(&stream, 31, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
    defer { inflateEnd(&stream) }
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    var input = data
    var status: Int32 = Z_OK
    input.withUnsafeMutableBufferPointer { source in
        stream.next_in = source.baseAddress
        stream.avail_in = UInt32(source.count)
        repeat {
            chunk.withUnsafeMutableBufferPointer { destination in
                stream.next_out = destination.baseAddress
                stream.avail_out = UInt32(destination.count)
                status = inflate(&stream, Z_NO_FLUSH)
                output.append(contentsOf: destination[0..<(destination.count - Int(stream.avail_out))])
            }
        } while status == Z_OK
    }
    return status == Z_STREAM_END ? output : nil
}

@Test(arguments: HTTPIOBackend.available)
func server_GzipsCompressibleBodies_WhenClientAccepts(backend: HTTPIOBackend) throws {
    let json = "[" + (0..<500).map { "{\"objectId\":\"p\($0)\",\"title\":\"photo\"}" }.joined(separator: ",") + "]"
    try withServer(
        backend: backend,
        routes: { router in
            router.add(.get, "/json") { _ in .json(Array(json.utf8)) }
            router.add(.get, "/jpeg") { _ in
                HTTPResponse(status: .ok, contentType: "image/jpeg", bytes: Array(json.utf8))
            }
        }
    ) { server in
        let client = try RawClient(port: server.port)
        client.send(get("/json", headers: "Accept-Encoding: br, gzip;q=0.8\r\n"))
        let compressed = try client.readResponse()
        #expect(compressed.headers["Content-Encoding"] == "gzip")
        #expect(compressed.headers["Vary"] == "Accept-Encoding")
        #expect(compressed.body.count < json.utf8.count)
        #expect(gunzip(compressed.body) == Array(json.utf8))

        client.send(get("/json", headers: "Accept-Encoding: gzip;q=0, identity\r\n"))
        let refused = try client.readResponse()
        #expect(refused.headers["Content-Encoding"] == nil)
        #expect(refused.headers["Vary"] == "Accept-Encoding")
        #expect(refused.body == Array(json.utf8))

        client.send(get("/jpeg", headers: "Accept-Encoding: gzip\r\n"))
        #expect(try client.readResponse().headers["Content-Encoding"] == nil)
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_SendsLargeFileWithSendfile(backend: HTTPIOBackend) throws {
    let path = NSTemporaryDirectory() + "galleryd-sendfile-\(UInt32.random(in: 0...UInt32.max))"
    var bytes = [UInt8](repeating: 0, count: 8 << 20)
    var state: UInt32 = 12345
    for i in bytes.indices {
        state = state &* 1_103_515_245 &+ 12345
        bytes[i] = UInt8(truncatingIfNeeded: state >> 16)
    }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    defer { unlink(path) }
    let fileLength = bytes.count
    try withServer(
        backend: backend,
        routes: { router in
            router.add(.get, "/file") { _ in
                HTTPResponse(
                    status: .ok, headers: ["Content-Type": "application/octet-stream"],
                    body: .file(path: path, offset: 0, length: fileLength))
            }
            router.add(.get, "/range") { _ in
                HTTPResponse(status: .partialContent, body: .file(path: path, offset: 1000, length: 5000))
            }
        }
    ) { server in
        let client = try RawClient(port: server.port)
        client.send(get("/file"))
        // Read slowly at first so the socket buffer fills and sendfile hits EAGAIN.
        usleep(200_000)
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.body.count == bytes.count)
        #expect(response.body == bytes)
        client.send(get("/range"))
        let range = try client.readResponse()
        #expect(range.status == 206)
        #expect(range.body == Array(bytes[1000..<6000]))
    }
}

// @unchecked: fed on the loop thread; the handler reads it after the body is complete.
private final class CountingObserver: HTTPBodyObserver, @unchecked Sendable {
    var count = 0
    var sum: UInt64 = 0
    func consume(_ chunk: UnsafeRawBufferPointer) {
        count += chunk.count
        for byte in chunk { sum &+= UInt64(byte) }
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_StreamsLargeBodyToFile_AndObserverSeesEveryByte(backend: HTTPIOBackend) throws {
    let payload = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    let expectedSum = payload.reduce(UInt64(0)) { $0 &+ UInt64($1) }
    let tempDir = NSTemporaryDirectory() + "galleryd-body-test-\(UInt32.random(in: 0...UInt32.max))"
    try FileManager.default.createDirectory(atPath: tempDir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: tempDir) }
    try withServer(
        backend: backend, configure: { $0.temporaryDirectory = tempDir },
        routes: { router in
            router.add(
                HTTPRoute(.post, "/upload", maxBodyBytes: 1 << 20, bodyObserverFactory: { CountingObserver() }) {
                    request in
                    guard case .file(let path, let length) = request.body else {
                        throw HTTPError(.badRequest, "not a file body")
                    }
                    let observer = request.bodyObserver as! CountingObserver
                    let onDisk = try Data(contentsOf: URL(fileURLWithPath: path))
                    let sameBytes = Array(onDisk) == payload
                    return .text("\(length) \(observer.count) \(observer.sum) \(sameBytes) \(path.hasPrefix(tempDir))")
                })
        }
    ) { server in
        for chunked in [false, true] {
            let client = try RawClient(port: server.port)
            if chunked {
                client.send("POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
                var offset = 0
                while offset < payload.count {
                    let n = min(70_000, payload.count - offset)
                    client.send(String(n, radix: 16) + "\r\n")
                    client.send(Array(payload[offset..<offset + n]))
                    client.send("\r\n")
                    offset += n
                }
                client.send("0\r\n\r\n")
            } else {
                client.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: \(payload.count)\r\n\r\n")
                client.send(payload)
            }
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.text == "\(payload.count) \(payload.count) \(expectedSum) true true")
        }
    }
    // The server removed the temporary files after responding.
    #expect(try FileManager.default.contentsOfDirectory(atPath: tempDir).isEmpty)
}

@Test(arguments: HTTPIOBackend.available)
func server_Answers404_405_AndOptions(backend: HTTPIOBackend) throws {
    let observer = RecordingObserver()
    try withServer(backend: backend, observer: observer, routes: echoRoutes) { server in
        let client = try RawClient(port: server.port)
        client.send(get("/nothing"))
        #expect(try client.readResponse().status == 404)
        client.send("DELETE /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        let notAllowed = try client.readResponse()
        #expect(notAllowed.status == 405)
        #expect(notAllowed.headers["Allow"] == "GET, HEAD, OPTIONS")
        client.send("OPTIONS /echo HTTP/1.1\r\nHost: t\r\n\r\n")
        let options = try client.readResponse()
        #expect(options.status == 204)
        #expect(options.headers["Allow"] == "OPTIONS, POST")
        #expect(observer.finished.first == .init(method: "GET", pattern: "unmatched", status: 404))
    }
}

private struct JSONErrors: HTTPErrorResponder {
    func response(for error: Error, request: HTTPRequest) -> HTTPResponse {
        .json(Array("{\"code\":1,\"error\":\"internal\"}".utf8), status: .internalServerError)
    }
    func response(status: HTTPStatus, message: String, request: HTTPRequest) -> HTTPResponse {
        .json(Array("{\"error\":\"\(message)\"}".utf8), status: status)
    }
}

private struct Boom: Error {}

@Test(arguments: HTTPIOBackend.available)
func server_RoutesErrorsThroughMountedResponder(backend: HTTPIOBackend) throws {
    try withServer(
        backend: backend,
        routes: { router in
            router.mount(prefix: "/api", errorResponder: JSONErrors())
            router.add(.get, "/api/boom") { _ in throw Boom() }
            router.add(.get, "/boom") { _ in throw Boom() }
            router.add(.get, "/teapot") { _ in throw HTTPError(HTTPStatus(418, "I'm a teapot"), "short and stout") }
        }
    ) { server in
        let client = try RawClient(port: server.port)
        client.send(get("/api/missing"))
        let missing = try client.readResponse()
        #expect(missing.status == 404)
        #expect(missing.text == "{\"error\":\"not found\"}")
        client.send(get("/api/boom"))
        #expect(try client.readResponse().text == "{\"code\":1,\"error\":\"internal\"}")
        client.send(get("/boom"))
        let plain = try client.readResponse()
        #expect(plain.status == 500)
        #expect(plain.text.contains(plain.headers["X-Request-Id"]!))
        client.send(get("/teapot"))
        let teapot = try client.readResponse()
        #expect(teapot.status == 418)
        #expect(teapot.text == "short and stout\n")
    }
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
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.headers["Connection"] == "close")
        #expect(client.isClosedByServer())

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
