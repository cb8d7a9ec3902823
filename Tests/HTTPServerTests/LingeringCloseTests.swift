import Foundation
import Synchronization
import Testing

@testable import HTTPServer

// Lingering close (RFC 9112 §9.6, nginx's lingering_close): a client that sends a body the server
// refuses, without `Expect: 100-continue` (URLSession's default), must read the refusal instead of
// a reset. Each request below goes out in one blocking write, head and 3 MB of body together, and
// is repeated 100 times: without the lingering read most of them fail with ECONNRESET/EPIPE.

/// Errors under `/api` as JSON, so the tests can see the URL space's format survive.
private struct JSONErrors: HTTPErrorResponder {
    func response(for error: Error, request: HTTPRequest) -> HTTPResponse {
        if let error = error as? HTTPError {
            return .json(Array("{\"error\":\"\(error.message)\"}".utf8), status: error.status)
        }
        return .json(Array("{\"error\":\"internal\"}".utf8), status: .internalServerError)
    }
    func response(status: HTTPStatus, message: String, request: HTTPRequest) -> HTTPResponse {
        .json(Array("{\"error\":\"\(message)\"}".utf8), status: status)
    }
}

private func refusingRoutes(_ router: HTTPRouter) {
    router.mount(prefix: "/api", errorResponder: JSONErrors())
    router.add(.post, "/api/small", maxBodyBytes: 10) { request in .text("got \(request.body.count)") }
    router.add(.post, "/api/echo", maxBodyBytes: 8 << 20) { request in .text("got \(request.body.count)") }
    // The upload shape: keys checked from the head, before any of the body is read.
    router.add(
        HTTPRoute(
            .post, "/api/upload", maxBodyBytes: 1 << 30,
            admission: { request in
                guard request.headers["X-App-Key"] == "right" else { throw HTTPError(.forbidden, "unauthorized") }
                return nil
            }
        ) { request in .text("stored \(request.body.count)") })
}

private let body = [UInt8](repeating: 0x61, count: 3 * 1024 * 1024)

/// Sends `head` and the 3 MB body in one blocking write, then reads the answer: `count` times,
/// each on a new connection. Returns the statuses read: -1 for a write that failed (reset, broken
/// pipe), 0 for an answer that could not be read.
private func refusedStatuses(port: Int, head: String, count: Int = 100) throws -> [Int] {
    var statuses: [Int] = []
    for _ in 0..<count {
        // A 64 KiB send buffer: on loopback the kernel would otherwise swallow the whole 3 MB at
        // once, before the server answers, which no real network does.
        let client = try RawClient(port: port, sendBuffer: 64 * 1024)
        // A client like URLSession gives up when its write fails: that counts as a lost answer.
        guard client.send(Array(head.utf8) + body) else {
            statuses.append(-1)
            continue
        }
        statuses.append((try? client.readResponse().status) ?? 0)
    }
    return statuses
}

@Test(arguments: HTTPIOBackend.available)
func server_AnswersTooLargeUpload_WhenClientSendsTheBodyAnyway(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, routes: refusingRoutes) { server in
        let head = "POST /api/small HTTP/1.1\r\nHost: t\r\nContent-Length: 900000000\r\n\r\n"
        let statuses = try refusedStatuses(port: server.port, head: head)
        #expect(statuses == Array(repeating: 413, count: 100))
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_AnswersHugeHeaderSection_WhenABodyFollows(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, routes: refusingRoutes) { server in
        let big = String(repeating: "b", count: 40 * 1024)
        let head = "POST /api/echo HTTP/1.1\r\nHost: t\r\nX-Big: \(big)\r\nContent-Length: \(body.count)\r\n\r\n"
        let statuses = try refusedStatuses(port: server.port, head: head)
        #expect(statuses == Array(repeating: 431, count: 100))
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_AnswersLongTarget_WhenABodyFollows(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, routes: refusingRoutes) { server in
        let target = "/api/echo?" + String(repeating: "q", count: 10 * 1024)
        let head = "POST \(target) HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.count)\r\n\r\n"
        let statuses = try refusedStatuses(port: server.port, head: head)
        #expect(statuses == Array(repeating: 414, count: 100))
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_AnswersMalformedRequest_WhenABodyFollows(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, routes: refusingRoutes) { server in
        // RFC 9112 §6.1: Content-Length with Transfer-Encoding is refused.
        let head =
            "POST /api/echo HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.count)\r\nTransfer-Encoding: chunked\r\n\r\n"
        let statuses = try refusedStatuses(port: server.port, head: head)
        #expect(statuses == Array(repeating: 400, count: 100))
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_RefusesUploadWithBadKey_BeforeReadingTheBody(backend: HTTPIOBackend) throws {
    let uploads = LockedCounter()
    try withServer(
        backend: backend,
        routes: { router in
            refusingRoutes(router)
            router.add(
                HTTPRoute(
                    .post, "/api/counted", maxBodyBytes: 1 << 30,
                    admission: { _ in
                        throw HTTPError(.forbidden, "unauthorized")
                    }
                ) { _ in
                    uploads.increment()
                    return .text("stored")
                })
        }
    ) { server in
        let head = "POST /api/upload HTTP/1.1\r\nHost: t\r\nX-App-Key: wrong\r\nContent-Length: \(body.count)\r\n\r\n"
        let statuses = try refusedStatuses(port: server.port, head: head)
        #expect(statuses == Array(repeating: 403, count: 100))

        let client = try RawClient(port: server.port)
        client.send("POST /api/counted HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.count)\r\n\r\n")
        let response = try client.readResponse()  // answered before a byte of the body was sent
        #expect(response.status == 403)
        #expect(response.text == "{\"error\":\"unauthorized\"}")
        #expect(response.headers["Connection"] == "close")

        let good = try RawClient(port: server.port)
        good.send("POST /api/upload HTTP/1.1\r\nHost: t\r\nX-App-Key: right\r\nContent-Length: 5\r\n\r\nhello")
        #expect(try good.readResponse().text == "stored 5")
    }
    #expect(uploads.value == 0)
}

@Test(arguments: HTTPIOBackend.available)
func server_EndsLingeringRead_WhenClientStaysSilent(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, configure: { $0.timeouts.lingerTimeout = 0.2 }, routes: refusingRoutes) { server in
        let client = try RawClient(port: server.port)
        client.send("POST /api/small HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n0123456789")
        #expect(try client.readResponse().status == 413)
        // The client neither sends more nor closes: the server gives up after lingerTimeout.
        #expect(client.isClosedByServer())
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_EndsLingeringRead_AfterMaxLingerBytes(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, configure: { $0.limits.maxLingerBytes = 64 * 1024 }, routes: refusingRoutes) {
        server in
        let client = try RawClient(port: server.port)
        client.send("POST /api/small HTTP/1.1\r\nHost: t\r\nContent-Length: 900000000\r\n\r\n")
        #expect(try client.readResponse().status == 413)
        // Keep sending: past the volume bound the server closes instead of reading forever.
        let chunk = [UInt8](repeating: 0x62, count: 64 * 1024)
        var sent = 0
        while sent < 64 << 20, client.send(chunk) { sent += chunk.count }
        #expect(sent < 64 << 20)
    }
}

/// A counter shared with handler threads.
final class LockedCounter: Sendable {
    private let count = Atomic(0)
    /// The count so far.
    var value: Int { count.load(ordering: .relaxed) }
    /// Adds one.
    func increment() { count.add(1, ordering: .relaxed) }
}
