import Testing

@testable import HTTPServer

/// The request side's small representations (decision 041, round 7): the parser's `step` leaves
/// the head and the trailers in the parser, and the router's captures name their names by index and
/// are the empty value for a route without parameters. What the connection reads through them must
/// be what the client sent, and the limits must hold as before.

/// Steps the parser over `text` (one buffer, consumed bytes dropped) and returns what each step
/// produced, with the head's and trailers' fields as `name=value`.
private func steps(_ text: [UInt8], limits: HTTPLimits = HTTPLimits()) throws -> [String] {
    var parser = HTTPRequestParser(limits: limits)
    var buffer = text
    var seen: [String] = []
    while true {
        let (step, consumed) = try buffer.withUnsafeBytes { try parser.step($0) }
        switch step {
        case .nothing:
            if consumed == 0 { return seen }
        case .head:
            let head = parser.head
            seen.append("head \(head.method) \(head.target) \(head.version.rawValue)")
            seen += head.headers.map { "\($0.name)=\($0.value)" }
        case .body(let range):
            seen.append("body " + String(decoding: buffer[range], as: UTF8.self))
        case .end:
            seen.append("end")
            seen += parser.takeTrailers().map { "trailer \($0.name)=\($0.value)" }
            // Handed over once.
            #expect(parser.takeTrailers().count == 0)
        }
        buffer.removeFirst(consumed)
    }
}

@Test func requestSide_HeadReadFromTheParser_HoldsTheFieldValuesAsSent() throws {
    // Values with inner spaces and tabs, surrounding whitespace (trimmed), an empty value, obs-text
    // (bytes above 0x7F, here UTF-8) and a long one, pipelined behind a second request.
    var bytes = Array("GET /health?x=1 HTTP/1.1\r\nHost: localhost:18401\r\nX-Spaced:  a b\tc  \r\nX-Empty:\r\n".utf8)
    bytes +=
        Array("X-Text: café\r\nX-Long: ".utf8) + Array(repeating: UInt8(ascii: "v"), count: 300)
        + Array("\r\n\r\n".utf8)
    bytes += Array("HEAD /b HTTP/1.0\r\nHost: two\r\n\r\n".utf8)
    #expect(
        try steps(bytes) == [
            "head GET /health?x=1 HTTP/1.1", "Host=localhost:18401", "X-Spaced=a b\tc", "X-Empty=", "X-Text=café",
            "X-Long=" + String(repeating: "v", count: 300), "end", "head HEAD /b HTTP/1.0", "Host=two", "end",
        ])
}

@Test func requestSide_FieldsRefilledInPlace_AreTheBytesOfEachRequest_KeptOrMadeAnew() throws {
    // One connection's parser: the same fields again (kept), a name in another case, a changed
    // value, a field more, then fewer, then a value that is not UTF-8, twice.
    var bytes = Array("GET /1 HTTP/1.1\r\nHost: h\r\nAccept: */*\r\nX-A: 1\r\n\r\n".utf8)
    bytes += Array("GET /2 HTTP/1.1\r\nHost: h\r\nAccept: */*\r\nX-A: 1\r\n\r\n".utf8)
    bytes += Array("GET /3 HTTP/1.1\r\nHost: h\r\naccept: */*\r\nX-A: 22\r\nX-New: n\r\n\r\n".utf8)
    bytes += Array("GET /4 HTTP/1.1\r\nHost: h\r\n\r\n".utf8)
    for _ in 0..<2 { bytes += Array("GET /5 HTTP/1.1\r\nHost: h\r\nX-Bin: a".utf8) + [0xFF] + Array("b\r\n\r\n".utf8) }
    #expect(
        try steps(bytes) == [
            "head GET /1 HTTP/1.1", "Host=h", "Accept=*/*", "X-A=1", "end",
            "head GET /2 HTTP/1.1", "Host=h", "Accept=*/*", "X-A=1", "end",
            "head GET /3 HTTP/1.1", "Host=h", "accept=*/*", "X-A=22", "X-New=n", "end",
            "head GET /4 HTTP/1.1", "Host=h", "end",
            "head GET /5 HTTP/1.1", "Host=h", "X-Bin=a\u{FFFD}b", "end",
            "head GET /5 HTTP/1.1", "Host=h", "X-Bin=a\u{FFFD}b", "end",
        ])
    // A value that differs from the kept one only by a control character is still refused.
    var bad = Array("GET /1 HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n\r\n".utf8)
    bad += Array("GET /2 HTTP/1.1\r\nHost: h\r\nX-A: 1\u{7F}\r\n\r\n".utf8)
    #expect(throws: HTTPParseError.invalidHeaderValue) { try steps(bad) }
    // And a list still held by an earlier request is not changed by the refill.
    var parser = HTTPRequestParser(limits: HTTPLimits())
    let first = Array("GET /1 HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n\r\n".utf8)
    _ = try first.withUnsafeBytes { try parser.step($0) }
    let held = parser.head.headers
    _ = try [UInt8]().withUnsafeBytes { try parser.step($0) }
    let second = Array("GET /2 HTTP/1.1\r\nHost: h\r\nX-A: 2\r\nX-B: 3\r\n\r\n".utf8)
    _ = try second.withUnsafeBytes { try parser.step($0) }
    #expect(held.map { "\($0.name)=\($0.value)" } == ["Host=h", "X-A=1"])
    #expect(parser.head.headers.map { "\($0.name)=\($0.value)" } == ["Host=h", "X-A=2", "X-B=3"])
}

@Test func requestSide_ChunkedBody_EndsWithItsTrailers_TakenOnce_AndTheNextMessageHasNone() throws {
    let text =
        "POST /u HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Sum: 42\r\nX-B: b\r\n\r\n"
        + "POST /v HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nok"
    #expect(
        try steps(Array(text.utf8)) == [
            "head POST /u HTTP/1.1", "Host=h", "Transfer-Encoding=chunked", "body hello", "end", "trailer X-Sum=42",
            "trailer X-B=b", "head POST /v HTTP/1.1", "Host=h", "Content-Length=2", "body ok", "end",
        ])
}

@Test func requestSide_HeadCopiedOut_KeepsItsValues_WhileTheParserRefillsItsOwn() throws {
    var parser = HTTPRequestParser(limits: HTTPLimits())
    func next(_ text: String) throws -> HTTPRequestHead {
        let (step, _) = try Array(text.utf8).withUnsafeBytes { try parser.step($0) }
        guard case .head = step else { throw HTTPParseError.invalidRequestLine }
        let head = parser.head
        _ = try [UInt8]().withUnsafeBytes { try parser.step($0) }  // the bodyless request's end
        return head
    }
    let first = try next("GET /first HTTP/1.1\r\nHost: one\r\nX-A: 1\r\n\r\n")
    let second = try next("DELETE /second HTTP/1.1\r\nHost: two\r\n\r\n")
    #expect(first.method == .get && first.target == "/first")
    #expect(first.headers.map { "\($0.name)=\($0.value)" } == ["Host=one", "X-A=1"])
    #expect(second.method == .delete && second.target == "/second")
    #expect(second.headers.map { "\($0.name)=\($0.value)" } == ["Host=two"])
    #expect(parser.head.target == "/second")
}

@Test func requestSide_RequestLine_IsKnownAfterAFieldError_AndForgottenAtTheNextMessage() throws {
    var parser = HTTPRequestParser(limits: HTTPLimits())
    #expect(parser.requestLine == nil)
    let bad = Array("PUT /parse/classes/A HTTP/1.1\r\nHost: h\r\nBad Name: x\r\n\r\n".utf8)
    #expect(throws: HTTPParseError.invalidHeaderName) { try bad.withUnsafeBytes { try parser.step($0) } }
    #expect(parser.requestLine?.method == "PUT")
    #expect(parser.requestLine?.target == "/parse/classes/A")
    parser.reset()
    #expect(parser.requestLine == nil)
    // A line too long still names its method and path (for the error responder), not its query.
    var limits = HTTPLimits()
    limits.requestLineBytes = 40
    var short = HTTPRequestParser(limits: limits)
    let long = Array(("GET /bucket/x?" + String(repeating: "q", count: 100)).utf8)
    #expect(throws: HTTPParseError.requestLineTooLong) { try long.withUnsafeBytes { try short.step($0) } }
    #expect(short.requestLine?.method == "GET")
    #expect(short.requestLine?.target == "/bucket/x")
}

@Test func requestSide_HugeHeaders_AreStillRefused_ByStep() {
    var limits = HTTPLimits()
    limits.headerBytes = 1024
    limits.headerCount = 4
    func error(_ text: String) -> HTTPParseError? {
        do {
            _ = try steps(Array(text.utf8), limits: limits)
            return nil
        } catch {
            return error as? HTTPParseError
        }
    }
    let huge = "X-Huge: " + String(repeating: "h", count: 4096)
    #expect(error("GET / HTTP/1.1\r\nHost: h\r\n" + huge + "\r\n\r\n") == .headerSectionTooLarge)
    #expect(error("GET / HTTP/1.1\r\nHost: h\r\n" + huge) == .headerSectionTooLarge)  // never ended
    let many = (0..<5).map { "X-\($0): 1\r\n" }.joined()
    #expect(error("GET / HTTP/1.1\r\nHost: h\r\n" + many + "\r\n") == .tooManyHeaderFields)
    #expect(error("GET / HTTP/1.1\r\nHost: h\r\nX: a\u{1}b\r\n\r\n") == .invalidHeaderValue)
}

private func makeRouter(_ patterns: [String]) -> HTTPRouter {
    let router = HTTPRouter()
    for pattern in patterns { router.add(HTTPRoute(.get, pattern) { _ in .text(pattern) }) }
    return router
}

private func parameters(_ router: HTTPRouter, _ path: String) -> HTTPPathParameters? {
    if case .route(_, let parameters) = router.match(method: .get, path: path) { return parameters }
    return nil
}

@Test func requestSide_RouteWithoutParameters_GetsTheEmptyValue() throws {
    let router = makeRouter(["/health", "/a/:x", "/files/*rest"])
    let none = try #require(parameters(router, "/health"))
    #expect(none.count == 0)
    #expect(none.names.isEmpty)
    #expect(none["x"] == nil)
    #expect(none == HTTPPathParameters())
    #expect(none.description == "[]")
}

@Test func requestSide_Captures_ReadTheirNamesFromTheTable_AndTheirValuesFromThePath() throws {
    // Names of other routes come first in the table's list: the index must pick the right one.
    let router = makeRouter(["/u/:user", "/a/:x/b/:y", "/a/:x/c/*rest", "/p/:one/:two/:three/:four/:five/:six"])
    let two = try #require(parameters(router, "/a/é1/b/z"))
    #expect(two.names == ["x", "y"])
    #expect(two["x"] == "é1" && two["y"] == "z" && two["user"] == nil)
    #expect(two == ["x": "é1", "y": "z"])
    // `/a/:x/c/*rest`: a parameter and a rest capture.
    let rest = try #require(parameters(router, "/a/q/c/d/e"))
    #expect(rest.names == ["x", "rest"])
    #expect(rest.substring("rest") == "d/e")
    // A capture that ends the path is read up to its end index; one before it by its offsets.
    let accented = try #require(parameters(router, "/a/é/c/d/é"))
    #expect(accented.substring("x") == "é" && accented.substring("rest") == "d/é" && accented["rest"] == "d/é")
    let six = try #require(parameters(router, "/p/1/2/3/4/5/6"))
    #expect(six.count == 6)
    #expect(six.names == ["one", "two", "three", "four", "five", "six"])
    #expect(six["five"] == "5" && six["six"] == "6")
    #expect(six.description == "[one: 1, two: 2, three: 3, four: 4, five: 5, six: 6]")
    // Hand-made parameters equal the router's, whatever their order of names.
    #expect(six == ["six": "6", "five": "5", "four": "4", "three": "3", "two": "2", "one": "1"])
    #expect(six != ["one": "1"])
}
