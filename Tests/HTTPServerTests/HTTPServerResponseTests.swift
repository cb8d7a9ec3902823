import CZlib
import Foundation
import Testing

@testable import HTTPServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// What the server answers: bad requests with their status, HEAD without a body, gzip, files by sendfile,
// 404/405/OPTIONS, and errors through the responder mounted for their path.

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
            try client.expectClosingAnswer(status, "\(request.prefix(40))")
        }
    }
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
