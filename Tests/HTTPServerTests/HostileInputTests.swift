import Foundation
import Testing

@testable import HTTPServer

// Regression tests for what bench/fuzz/http_fuzz.py found in the HTTP layer: each sends the bytes
// that broke the server, over a raw socket, to a real server on 127.0.0.1:0.

/// Errors under `/api` as JSON, so a test can tell which responder answered.
private struct APIErrors: HTTPErrorResponder {
    func response(for error: Error, request: HTTPRequest) -> HTTPResponse {
        .json(Array("{\"error\":\"internal\"}".utf8), status: .internalServerError)
    }
    func response(status: HTTPStatus, message: String, request: HTTPRequest) -> HTTPResponse {
        .json(Array("{\"error\":\"\(message)\"}".utf8), status: status)
    }
}

private func hostileRoutes(_ router: HTTPRouter) {
    router.mount(prefix: "/api", errorResponder: APIErrors())
    router.add(.get, "/hello", mayBlock: false) { _ in .text("hello") }
    router.add(.get, "/api/things") { _ in .text("things") }
    // Runs on the handler pool long enough for the client's next bytes and its FIN to arrive meanwhile.
    router.add(.get, "/slow") { _ in
        usleep(200_000)
        return .text("slow")
    }
}

/// A keep-alive timeout far beyond the client's 10 s read timeout: a connection the server forgets
/// to close shows up as a read timeout instead of being closed as idle.
private func longIdle(_ configuration: inout HTTPServerConfiguration) {
    configuration.timeouts.idleKeepAlive = 60
}

/// Fuzzer input: `GET /health` then shutdown(SHUT_WR). When the request and the FIN arrived in one
/// edge-triggered event, the short read was taken for "socket drained" and the FIN was never read:
/// the connection sat in CLOSE_WAIT until the idle timeout. Here the FIN arrives while the first
/// request runs, so the second request is read (short) after the only EPOLLRDHUP was consumed.
@Test(arguments: HTTPIOBackend.available)
func server_ClosesConnection_WhenClientHalfClosesDuringRequest(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, configure: longIdle, routes: hostileRoutes) { server in
        let client = try RawClient(port: server.port)
        client.send(get("/slow"))
        usleep(50_000)
        client.send(get("/hello"))
        client.shutdownWrite()
        #expect(try client.readResponse().text == "slow")
        #expect(try client.readResponse().text == "hello")
        #expect(client.isClosedByServer())
    }
}

/// The same with the request and the FIN in one segment burst, repeated so the race is hit.
@Test(arguments: HTTPIOBackend.available)
func server_ClosesEveryHalfClosedConnection_AfterAnswering(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, configure: longIdle, routes: hostileRoutes) { server in
        for _ in 0..<200 {
            let client = try RawClient(port: server.port)
            client.send(get("/hello"))
            client.shutdownWrite()
            #expect(try client.readResponse().status == 200)
            let closed = client.isClosedByServer()
            #expect(closed)
            if !closed { break }
        }
    }
}

/// Fuzzer input: `GET /parse/classes/Photo?where=aaaa…` past the request-line limit got a plain-text
/// 414 although everything under `/parse` answers in Parse JSON. The path is known before the limit
/// is hit, so the 414 now comes from the responder of the URL space it was aimed at.
@Test(arguments: HTTPIOBackend.available)
func server_Answers414InTheMountsFormat_WhenRequestLineTooLong(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, configure: { $0.limits.requestLineBytes = 256 }, routes: hostileRoutes) { server in
        let cases: [(String, String)] = [
            ("/api/things?q=" + String(repeating: "a", count: 400), "application/json"),
            ("/api/" + String(repeating: "b", count: 400), "application/json"),
            ("/api/things?q=%" + String(repeating: "7B", count: 200), "application/json"),
            ("/api/" + String(repeating: "%41", count: 85) + "%4", "application/json"),
            ("/hello?q=" + String(repeating: "a", count: 400), "text/plain"),
        ]
        for (target, contentType) in cases {
            let client = try RawClient(port: server.port)
            client.send("GET \(target) HTTP/1.1\r\nHost: t\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 414)
            #expect(response.headers["Content-Type"]?.hasPrefix(contentType) == true, "\(target.prefix(40))")
        }
        // Without a line end at all (the limit is hit while the line is still arriving).
        let client = try RawClient(port: server.port)
        client.send("GET /api/things?q=" + String(repeating: "a", count: 400))
        let response = try client.readResponse()
        #expect(response.status == 414)
        #expect(response.headers["Content-Type"]?.hasPrefix("application/json") == true)
    }
}

/// Fuzzer input: `/parse/classes/Photo/%ff` (a path that does not decode to UTF-8) got a plain-text
/// 400 from under the Parse mount. The raw path still says which URL space it was aimed at.
@Test(arguments: HTTPIOBackend.available)
func server_AnswersUndecodablePathInTheMountsFormat(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, routes: hostileRoutes) { server in
        let cases: [(String, String)] = [
            ("GET /api/%ff HTTP/1.1\r\nHost: t\r\n\r\n", "application/json"),
            ("GET /api/things/%C0%AE?x=1 HTTP/1.1\r\nHost: t\r\n\r\n", "application/json"),
            ("GET /api/%zz HTTP/1.1\r\nHost: t\r\n\r\n", "application/json"),
            // An error in a later field, after a request line whose target does not decode.
            ("GET /api/%ff HTTP/1.1\r\nHost: t\r\nBad Header: x\r\n\r\n", "application/json"),
            ("GET /%ff HTTP/1.1\r\nHost: t\r\n\r\n", "text/plain"),
            ("GET http://t/api/%ff HTTP/1.1\r\nHost: t\r\n\r\n", "text/plain"),
        ]
        for (request, contentType) in cases {
            let client = try RawClient(port: server.port)
            client.send(request)
            let response = try client.readResponse()
            #expect(response.status == 400)
            #expect(response.headers["Content-Type"]?.hasPrefix(contentType) == true, "\(request.prefix(30))")
        }
    }
}

/// Fuzzer input: `If-Modified-Since: Fri, 31 Dec 99999999999 23:59:59 GMT` on a file crashed the
/// whole server (the year overflowed the Int32 of `struct tm`). A year outside 4 digits is not an
/// IMF-fixdate, so the condition is ignored and the file served.
@Test(arguments: HTTPIOBackend.available)
func server_IgnoresConditionalDates_WithAbsurdYears(backend: HTTPIOBackend) throws {
    let path = NSTemporaryDirectory() + "galleryd-hostile-\(UUID().uuidString)"
    try Data("hello file".utf8).write(to: URL(fileURLWithPath: path))
    defer { unlink(path) }
    try withServer(
        backend: backend,
        routes: { router in
            router.add(.get, "/file", mayBlock: false) { request in
                HTTPFileResponse.make(
                    for: request,
                    file: .init(
                        path: path, size: 10, etag: "\"e\"", lastModified: Date(timeIntervalSince1970: 1_700_000_000),
                        contentType: "text/plain"))
            }
        }
    ) { server in
        let dates = [
            "Fri, 31 Dec 99999999999 23:59:59 GMT", "Fri, 31 Dec 2147485547 23:59:59 GMT",
            "Fri, 31 Dec 10000 23:59:59 GMT", "Fri, 31 Dec -1 23:59:59 GMT",
            "Fri, 99999999999999999999 Dec 2024 23:59:59 GMT",
        ]
        for date in dates {
            for header in ["If-Modified-Since", "If-Unmodified-Since", "If-Range"] {
                let client = try RawClient(port: server.port)
                client.send(get("/file", headers: "\(header): \(date)\r\nRange: bytes=0-4\r\n"))
                let response = try client.readResponse()
                #expect(response.status == (header == "If-Range" ? 200 : 206), "\(header): \(date)")
            }
        }
        // Still serving.
        let client = try RawClient(port: server.port)
        client.send(get("/file"))
        #expect(try client.readResponse().text == "hello file")
    }
}
