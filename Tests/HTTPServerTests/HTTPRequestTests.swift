import Foundation
import Synchronization
import Testing

@testable import HTTPServer

/// The heads of `texts` (bodyless requests) as one connection's parser gives them.
private func heads(_ texts: [String]) throws -> [HTTPRequestHead] {
    var parser = HTTPRequestParser(limits: HTTPLimits())
    return try texts.map { text in
        let bytes = Array(text.utf8)
        let step = try bytes.withUnsafeBytes { try parser.next($0) }
        guard case .head(let head)? = step.event else { throw HTTPParseError.invalidRequestLine }
        _ = try [UInt8]().withUnsafeBytes { try parser.next($0) }
        return head
    }
}

/// A connection refills its finished request's box for the next head (decision 041) only when
/// nothing else holds it: a kept copy is never emptied nor refilled.
@Test func request_Refill_ReusesOnlyAnUnsharedBox() throws {
    let h = try heads(["GET /a?q=1 HTTP/1.1\r\nHost: one\r\n\r\n", "GET /b HTTP/1.1\r\nHost: two\r\n\r\n"])
    var request = HTTPRequest(head: h[0], path: "/a", query: "q=1", remoteAddress: "peer", requestID: "id1")
    request.body = .bytes([1, 2, 3])
    request.pathParameters = ["key": "v"]
    let held = request
    withExtendedLifetime(held) {
        let emptied = request.emptyForRefill()
        let refilled = request.refill(head: h[1], path: "/b", query: nil, requestID: "id2")
        #expect(!emptied && !refilled)
        #expect(request.path == "/a" && request.body.count == 3)
    }
    #expect(held.path == "/a" && held.query == "q=1" && held.body.count == 3 && held.pathParameters["key"] == "v")
    #expect(held.headers["Host"] == "one")

    var alone = HTTPRequest(head: h[0], path: "/a", query: "q=1", remoteAddress: "peer", requestID: "id1")
    alone.body = .bytes([1, 2, 3])
    alone.pathParameters = ["key": "v"]
    alone.routePattern = "/a"
    let emptied = alone.emptyForRefill()
    #expect(emptied)
    #expect(alone.body.count == 0 && alone.headers.count == 0 && alone.pathParameters.count == 0)
    let refilled = alone.refill(head: h[1], path: "/b", query: nil, requestID: "id2")
    #expect(refilled)
    #expect(alone.path == "/b" && alone.target == "/b" && alone.query == nil && alone.requestID == "id2")
    #expect(alone.routePattern == "unmatched" && alone.remoteAddress == "peer" && alone.headers["Host"] == "two")
}

/// The connection's refill takes the parser's method and target by swapping them with the box's old
/// ones (decision 041, round 9): the request reads the new line, the parser holds the old one (and
/// no `requestLine`) until the next request line replaces it; a box something else holds is left
/// alone (the connection asks `isUnshared()` first), and so is the parser's line.
@Test func request_RefillTakingTheRequestLine_SwapsItWithTheParsers() throws {
    var parser = HTTPRequestParser(limits: HTTPLimits())
    func head(_ text: String) throws {
        let bytes = Array(text.utf8)
        let step = try bytes.withUnsafeBytes { try parser.next($0) }
        guard case .head? = step.event else { throw HTTPParseError.invalidRequestLine }
    }
    func end() throws { _ = try [UInt8]().withUnsafeBytes { try parser.next($0) } }
    let first = "/first/a/path/longer/than/a/small/string"
    try head("GET \(first) HTTP/1.1\r\nHost: one\r\n\r\n")
    var request = HTTPRequest(head: parser.head, path: first, query: nil, remoteAddress: "peer", requestID: "id1")
    request.routePattern = "/first/*rest"
    try end()
    let emptied = request.emptyForRefill()
    #expect(emptied)

    try head("DELETE /second?x=1 HTTP/1.1\r\nHost: two\r\n\r\n")
    #expect(parser.requestLine?.target == "/second?x=1")
    let unshared = request.isUnshared()
    #expect(unshared)
    request.refill(takingRequestLineOf: &parser, path: "/second", query: "x=1", requestID: "id2")
    #expect(request.method == .delete && request.target == "/second?x=1" && request.path == "/second")
    #expect(request.query == "x=1" && request.requestID == "id2")
    // The pattern is the connection's to set from its match (decision 041, round 10): left as it was.
    #expect(request.routePattern == "/first/*rest")
    #expect(request.headers["Host"] == "two" && request.remoteAddress == "peer")
    #expect(parser.head.method == .get && parser.head.target == first && parser.requestLine == nil)

    try end()
    let held = request
    try head("PUT /third HTTP/1.1\r\nHost: three\r\n\r\n")
    withExtendedLifetime(held) {
        let unsharedNow = request.isUnshared()
        #expect(!unsharedNow)
    }
    #expect(parser.head.method == .put && parser.requestLine?.target == "/third")
    #expect(held.method == .delete && held.target == "/second?x=1" && request.requestID == "id2")
}

/// Over one keep-alive connection, requests that a handler keeps (here: all of them, on the
/// handler pool and on the loop) still read as they arrived after later requests reused the
/// connection's request box and field list.
@Test(arguments: HTTPIOBackend.available)
func server_RequestsAHandlerKeeps_StayAsTheyArrived(backend: HTTPIOBackend) throws {
    final class Kept: Sendable { let requests = Mutex<[HTTPRequest]>([]) }
    let kept = Kept()
    try withServer(
        backend: backend,
        routes: { router in
            router.add(.get, "/loop/:n", mayBlock: false) { request in
                kept.requests.withLock { $0.append(request) }
                return .text("ok")
            }
            router.add(.get, "/pool/:n", mayBlock: true) { request in
                kept.requests.withLock { $0.append(request) }
                return .text("ok")
            }
        }
    ) { server in
        let client = try RawClient(port: server.port)
        for n in 0..<20 {
            let path = n % 2 == 0 ? "/loop/\(n)" : "/pool/\(n)"
            client.send(get(path + "?n=\(n)", headers: "X-N: \(n)\r\n"))
            #expect(try client.readResponse().status == 200)
        }
    }
    let requests = kept.requests.withLock { $0 }
    #expect(requests.count == 20)
    for (n, request) in requests.enumerated() {
        #expect(request.path == (n % 2 == 0 ? "/loop/\(n)" : "/pool/\(n)"))
        #expect(request.query == "n=\(n)")
        #expect(request.headers["X-N"] == "\(n)")
        #expect(request.pathParameters["n"] == "\(n)")
    }
}
