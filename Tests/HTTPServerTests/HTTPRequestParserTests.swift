import Testing

@testable import HTTPServer

/// One message as the parser saw it, normalised so that different splits of the input compare equal.
private struct Parsed: Equatable {
    var method: String
    var target: String
    var version: HTTPVersion
    var headers: [String]
    var keepAlive: Bool
    var expectContinue: Bool
    var body: [UInt8] = []
    var trailers: [String] = []
}

private struct Outcome: Equatable {
    var messages: [Parsed]
    var error: HTTPParseError?
}

/// Feeds the chunks in order to one parser, the way a connection does (consumed bytes dropped).
private func parse(_ chunks: [[UInt8]], limits: HTTPLimits = HTTPLimits(), bodyLimit: Int? = nil) -> Outcome {
    var parser = HTTPRequestParser(limits: limits)
    var buffer: [UInt8] = []
    var messages: [Parsed] = []
    var current: Parsed?
    for chunk in chunks {
        buffer.append(contentsOf: chunk)
        while true {
            let step: (event: HTTPRequestParser.Event?, consumed: Int)
            do {
                step = try buffer.withUnsafeBytes { try parser.next($0) }
            } catch {
                return Outcome(messages: messages, error: error as? HTTPParseError)
            }
            switch step.event {
            case .head(let head)?:
                current = Parsed(
                    method: head.method.rawValue, target: head.target, version: head.version,
                    headers: head.headers.map { "\($0.name)=\($0.value)" }, keepAlive: head.keepAlive,
                    expectContinue: head.expectContinue)
                if let bodyLimit { parser.bodyLimit = bodyLimit }
            case .body(let range)?:
                current?.body.append(contentsOf: buffer[range])
            case .end(let trailers)?:
                current?.trailers = trailers.map { "\($0.name)=\($0.value)" }
                messages.append(current!)
                current = nil
            case nil:
                break
            }
            buffer.removeFirst(step.consumed)
            if step.event == nil && step.consumed == 0 { break }
        }
    }
    return Outcome(messages: messages, error: nil)
}

/// SwiftNIO's decoder-verifier idea: whole, byte by byte and three times in one buffer must agree.
private func verify(
    _ text: String, limits: HTTPLimits = HTTPLimits(), bodyLimit: Int? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) -> Outcome {
    let bytes = Array(text.utf8)
    let whole = parse([bytes], limits: limits, bodyLimit: bodyLimit)
    let byByte = parse(bytes.map { [$0] }, limits: limits, bodyLimit: bodyLimit)
    #expect(whole == byByte, "byte-by-byte differs", sourceLocation: sourceLocation)
    let tripled = parse([bytes + bytes + bytes], limits: limits, bodyLimit: bodyLimit)
    if whole.error == nil {
        #expect(
            tripled.messages == whole.messages + whole.messages + whole.messages, "pipelined differs",
            sourceLocation: sourceLocation)
    } else {
        #expect(tripled == whole, "pipelined differs", sourceLocation: sourceLocation)
    }
    return whole
}

private func expectError(
    _ text: String, _ error: HTTPParseError, status: Int, limits: HTTPLimits = HTTPLimits(), bodyLimit: Int? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let outcome = verify(text, limits: limits, bodyLimit: bodyLimit, sourceLocation: sourceLocation)
    #expect(outcome.error == error, sourceLocation: sourceLocation)
    #expect(outcome.error?.status.code == status, sourceLocation: sourceLocation)
}

@Test func parser_ParsesSimpleGet() throws {
    let outcome = verify("GET /photos?limit=2 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n")
    #expect(outcome.error == nil)
    let message = try #require(outcome.messages.first)
    #expect(message.method == "GET")
    #expect(message.target == "/photos?limit=2")
    #expect(message.version == .http11)
    #expect(message.headers == ["Host=example.com", "Accept=*/*"])
    #expect(message.keepAlive)
    #expect(message.body.isEmpty)
}

@Test func parser_TrimsOptionalWhitespaceAroundFieldValues() throws {
    let outcome = verify("GET / HTTP/1.1\r\nHost:   h  \t\r\nX-Empty:\r\n\r\n")
    #expect(try #require(outcome.messages.first).headers == ["Host=h", "X-Empty="])
}

@Test func parser_ReadsContentLengthBody() throws {
    let outcome = verify("POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello world")
    #expect(outcome.error == nil)
    #expect(String(decoding: try #require(outcome.messages.first).body, as: UTF8.self) == "hello world")
}

@Test func parser_AcceptsRepeatedIdenticalContentLength() throws {
    let outcome = verify("POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 3, 3\r\nContent-Length: 3\r\n\r\nabc")
    #expect(outcome.error == nil)
    #expect(try #require(outcome.messages.first).body == Array("abc".utf8))
}

@Test func parser_DecodesChunkedBodyWithExtensionsAndTrailers() throws {
    let outcome = verify(
        "POST /u HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\n6 ; x\r\n world\r\nA\r\n0123456789\r\n0\r\nX-Checksum: abc\r\n\r\n")
    #expect(outcome.error == nil)
    let message = try #require(outcome.messages.first)
    #expect(String(decoding: message.body, as: UTF8.self) == "hello world0123456789")
    #expect(message.trailers == ["X-Checksum=abc"])
}

@Test func parser_AppliesKeepAliveRulesOfEachVersion() throws {
    #expect(try #require(verify("GET / HTTP/1.0\r\n\r\n").messages.first).keepAlive == false)
    #expect(try #require(verify("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").messages.first).keepAlive)
    #expect(
        try #require(verify("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n").messages.first).keepAlive == false
    )
    #expect(
        try #require(verify("GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, CLOSE\r\n\r\n").messages.first).keepAlive
            == false)
}

@Test func parser_IgnoresEmptyLinesBeforeRequestLine() throws {
    let outcome = verify("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n")
    #expect(outcome.messages.count == 1)
    #expect(outcome.error == nil)
}

@Test func parser_NotesExpectContinueOnlyForHTTP11() throws {
    #expect(
        try #require(
            verify("PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx").messages.first
        ).expectContinue)
    #expect(
        try #require(verify("PUT / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx").messages.first)
            .expectContinue == false)
}

@Test func parser_WaitsForMoreInput_WhenHeadIncomplete() {
    let outcome = verify("GET / HTTP/1.1\r\nHost: h\r\n")
    #expect(outcome.messages.isEmpty)
    #expect(outcome.error == nil)
}

@Test func parser_RejectsRequest_WhenContentLengthAndTransferEncoding() {
    expectError(
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        .contentLengthWithTransferEncoding, status: 400)
}

@Test func parser_RejectsRequest_WhenContentLengthsConflict() {
    expectError("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 6\r\n\r\n", .invalidContentLength, status: 400)
    expectError(
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", .invalidContentLength,
        status: 400)
}

@Test func parser_RejectsRequest_WhenContentLengthMalformed() {
    expectError("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 12a\r\n\r\n", .invalidContentLength, status: 400)
    expectError("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", .invalidContentLength, status: 400)
    expectError("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +5\r\n\r\n", .invalidContentLength, status: 400)
    expectError(
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n\r\n", .invalidContentLength, status: 400
    )
}

@Test func parser_RejectsRequest_WhenHeaderNameHasInvalidCharacters() {
    expectError("GET / HTTP/1.1\r\nHost: h\r\nBad(Name): x\r\n\r\n", .invalidHeaderName, status: 400)
    expectError("GET / HTTP/1.1\r\nHost: h\r\nName : x\r\n\r\n", .invalidHeaderName, status: 400)
    expectError("GET / HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n", .invalidHeaderName, status: 400)
}

@Test func parser_RejectsRequest_WhenMethodOrTargetInvalid() {
    expectError("G(T / HTTP/1.1\r\nHost: h\r\n\r\n", .invalidMethod, status: 400)
    expectError("GET /a\u{7F}b HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget, status: 400)
    expectError("GET  / HTTP/1.1\r\nHost: h\r\n\r\n", .invalidRequestLine, status: 400)
    expectError("GET / HTTP/1.1 \r\nHost: h\r\n\r\n", .invalidRequestLine, status: 400)
    expectError("GET / http/1.1\r\nHost: h\r\n\r\n", .invalidRequestLine, status: 400)
}

@Test func parser_RejectsRequest_WhenHeaderValueHasControlCharacters() {
    expectError("GET / HTTP/1.1\r\nHost: h\r\nX: a\u{0}b\r\n\r\n", .invalidHeaderValue, status: 400)
    expectError("GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n", .invalidHeaderValue, status: 400)
}

@Test func parser_RejectsRequest_WhenObsoleteLineFolding() {
    expectError("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n  folded\r\n\r\n", .obsoleteLineFolding, status: 400)
}

@Test func parser_RejectsRequest_WhenBareLineFeed() {
    expectError("GET / HTTP/1.1\nHost: h\r\n\r\n", .bareLineFeed, status: 400)
    expectError("GET / HTTP/1.1\r\nHost: h\n\r\n", .bareLineFeed, status: 400)
}

@Test func parser_RejectsRequest_WhenHTTP11HostMissingOrRepeated() {
    expectError("GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", .invalidHost, status: 400)
    expectError("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", .invalidHost, status: 400)
}

@Test func parser_RejectsRequest_WhenChunkSizeInvalid() {
    let head = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
    expectError(head + "zz\r\nhello\r\n0\r\n\r\n", .invalidChunkSize, status: 400)
    expectError(head + "\r\n", .invalidChunkSize, status: 400)
    expectError(head + "5 x\r\nhello\r\n0\r\n\r\n", .invalidChunkSize, status: 400)
    expectError(head + "1000000000000000000\r\n", .invalidChunkSize, status: 400)
    expectError(head + "5\r\nhelloXX0\r\n\r\n", .invalidChunkTerminator, status: 400)
}

@Test func parser_RejectsRequest_WhenTransferCodingUnknownOrMisplaced() {
    expectError(
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", .unsupportedTransferCoding, status: 501)
    expectError(
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", .unsupportedTransferCoding,
        status: 501)
    expectError(
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", .invalidTransferEncoding,
        status: 400)
    expectError("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", .invalidTransferEncoding, status: 400)
}

@Test func parser_RejectsRequest_WhenVersionUnknown() {
    expectError("GET / HTTP/2.0\r\nHost: h\r\n\r\n", .unsupportedVersion, status: 505)
    expectError("GET / HTTP/1.2\r\nHost: h\r\n\r\n", .unsupportedVersion, status: 505)
}

@Test func parser_RejectsRequest_WhenRequestLineTooLong() {
    var limits = HTTPLimits()
    limits.requestLineBytes = 64
    expectError(
        "GET /" + String(repeating: "a", count: 100) + " HTTP/1.1\r\nHost: h\r\n\r\n", .requestLineTooLong, status: 414,
        limits: limits)
    // Also without the line end ever arriving.
    expectError("GET /" + String(repeating: "a", count: 100), .requestLineTooLong, status: 414, limits: limits)
}

@Test func parser_RejectsRequest_WhenHeadersTooLarge() {
    var limits = HTTPLimits()
    limits.headerBytes = 128
    limits.headerCount = 5
    expectError(
        "GET / HTTP/1.1\r\nHost: h\r\nX: " + String(repeating: "a", count: 200) + "\r\n\r\n", .headerSectionTooLarge,
        status: 431, limits: limits)
    expectError(
        "GET / HTTP/1.1\r\nHost: h\r\nX: " + String(repeating: "a", count: 200), .headerSectionTooLarge, status: 431,
        limits: limits)
    let many = (0..<6).map { "X-\($0): 1\r\n" }.joined()
    expectError("GET / HTTP/1.1\r\nHost: h\r\n" + many + "\r\n", .tooManyHeaderFields, status: 431, limits: limits)
}

@Test func parser_RejectsRequest_WhenChunkedBodyExceedsLimit() {
    expectError(
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n8\r\n12345678\r\n0\r\n\r\n",
        .bodyTooLarge, status: 413, bodyLimit: 10)
}

@Test func parser_RejectsRequest_WhenExpectationUnknown() {
    expectError("PUT / HTTP/1.1\r\nHost: h\r\nExpect: teapot\r\n\r\n", .unsupportedExpectation, status: 417)
}

@Test func parser_SplitsTargets_IntoDecodedPathAndRawQuery() throws {
    let origin = try #require(HTTPRequest.splitTarget("/a%20b/c?x=1%202"))
    #expect(origin.path == "/a b/c")
    #expect(origin.query == "x=1%202")
    let absolute = try #require(HTTPRequest.splitTarget("http://example.com:8080/p?q"))
    #expect(absolute.path == "/p")
    #expect(absolute.query == "q")
    #expect(HTTPRequest.splitTarget("http://example.com")?.path == "/")
    #expect(HTTPRequest.splitTarget("/bad%zz") == nil)
    #expect(HTTPRequest.splitTarget("example.com:443") == nil)
}

/// The one-pass origin-form split (signed asset URLs carry a query on every bucket GET) cuts the
/// same parts as before: the first `?` ends the path, only the path is decoded, a fragment anywhere
/// or a bad escape in the path is refused, a bad escape in the query is the route's to judge.
@Test func parser_SplitsOriginFormTargets_AtTheFirstQueryMark() throws {
    func split(_ target: String) -> [String?]? {
        HTTPRequest.splitTarget(target).map { [$0.path, $0.query] }
    }
    #expect(split("/bucket/thumbnails/a.jpg") == ["/bucket/thumbnails/a.jpg", nil])
    #expect(
        split("/bucket/a.jpg?X-Gallery-Expires=1796083200&X-Gallery-Signature=s687vJVvot5C-_")
            == ["/bucket/a.jpg", "X-Gallery-Expires=1796083200&X-Gallery-Signature=s687vJVvot5C-_"])
    #expect(split("/") == ["/", nil])
    #expect(split("/?") == ["/", ""])
    #expect(split("/p?") == ["/p", ""])
    #expect(split("/p?a=1?b=2") == ["/p", "a=1?b=2"])
    #expect(split("/p?a=%zz") == ["/p", "a=%zz"])
    #expect(split("/%E2%82%AC/x?q=%41") == ["/\u{20AC}/x", "q=%41"])
    #expect(split("/\u{20AC}?\u{e9}") == ["/\u{20AC}", "\u{e9}"])
    #expect(split("/p#frag") == nil)
    #expect(split("/p?q#frag") == nil)
    #expect(split("/%zz?q") == nil)
    #expect(split("/%ff") == nil)  // not UTF-8 once decoded
    #expect(split("?q") == nil)
    #expect(split("") == nil)
}

/// The parser refills one field list per connection (decision 041): a request still held when the
/// next head is parsed (a handler that kept it) keeps its own fields, unchanged.
@Test func parser_HeadsStillHeld_KeepTheirFields_AfterTheNextHeadIsParsed() throws {
    var parser = HTTPRequestParser(limits: HTTPLimits())
    func head(_ text: String) throws -> HTTPRequestHead {
        let bytes = Array(text.utf8)
        let step = try bytes.withUnsafeBytes { try parser.next($0) }
        guard case .head(let head)? = step.event else { throw HTTPParseError.invalidRequestLine }
        // The bodyless request's end, so the parser expects the next head.
        _ = try [UInt8]().withUnsafeBytes { try parser.next($0) }
        return head
    }
    let first = try head("GET /a HTTP/1.1\r\nHost: one\r\nX-First: 1\r\n\r\n")
    let second = try head("GET /b HTTP/1.1\r\nHost: two\r\n\r\n")
    let third = try head("GET /c HTTP/1.1\r\nHost: three\r\nAccept: */*\r\nX-Third: 3\r\n\r\n")
    #expect(first.headers.map { "\($0.name)=\($0.value)" } == ["Host=one", "X-First=1"])
    #expect(second.headers.map { "\($0.name)=\($0.value)" } == ["Host=two"])
    #expect(third.headers.map { "\($0.name)=\($0.value)" } == ["Host=three", "Accept=*/*", "X-Third=3"])
}

@Test func parser_GivesMethodsAndFieldNamesExactlyAsReceived_CommonOnesAndOthers() throws {
    // The common methods and names are handed out as literals (decision 041): each must still be
    // exactly what was sent, in its spelling, and the others made from their bytes as before.
    for method in ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "M-SEARCH", "get", "GETS", "PROPFIND"] {
        let outcome = verify(
            "\(method) / HTTP/1.1\r\nHost: h\r\nHOST-X: 1\r\nuser-agent: u\r\nUser-Agent2: v\r\n"
                + "X-Parse-Application-Id: a\r\nx-parse-application-id: b\r\nAccept-Encodin: c\r\n\r\n")
        let message = try #require(outcome.messages.first)
        #expect(message.method == method)
        #expect(
            message.headers == [
                "Host=h", "HOST-X=1", "user-agent=u", "User-Agent2=v", "X-Parse-Application-Id=a",
                "x-parse-application-id=b", "Accept-Encodin=c",
            ])
    }
    let outcome = verify("GET / HTTP/1.1\r\nHOST: h\r\nhost: i\r\n\r\n")
    #expect(outcome.error == .invalidHost)  // two Host fields, whatever their spelling
}

@Test func method_EqualsByItsBytes_AndHashesAsItsToken() {
    #expect(HTTPMethod(rawValue: "GET") == .get)
    #expect(HTTPMethod(rawValue: "GET") != .put)  // same length
    #expect(HTTPMethod.get != .head)
    #expect(HTTPMethod(rawValue: "get") != .get)  // methods are case-sensitive
    #expect(Set([HTTPMethod(rawValue: "POST"), .post, .options]).count == 2)
    for token in ["GET", "PUT", "HEAD", "POST", "PATCH", "DELETE", "OPTIONS", "TRACE", "G", ""] {
        let parsed = Array(token.utf8).withUnsafeBytes { HTTPMethod.parse($0) }
        #expect(parsed == HTTPMethod(rawValue: token))
        #expect(parsed.rawValue == token)
    }
}
