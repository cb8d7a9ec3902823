import Foundation
import Testing

@testable import HTTPServer

/// A response read strictly off the wire (RFC 9112 §2.1, §4, §5): a status line, then
/// `name: value` fields, every line ended by CRLF and no bare CR or LF, an empty line, and exactly
/// `Content-Length` bytes of body after it, nothing more.
private struct WireResponse {
    var statusLine: String
    var fields: [(name: String, value: String)]
    var body: [UInt8]

    enum Malformed: Error {
        case noEndOfHead
        case bareLineBreak(String)
        case badStatusLine(String)
        case badField(String)
        case badLength
    }

    init(_ bytes: [UInt8]) throws {
        let end = Array("\r\n\r\n".utf8)
        guard
            let headEnd = (0...max(0, bytes.count - 4)).first(where: {
                Array(bytes[$0..<min($0 + 4, bytes.count)]) == end
            })
        else { throw Malformed.noEndOfHead }
        let head = String(decoding: bytes[..<headEnd], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        for line in lines where line.contains("\r") || line.contains("\n") { throw Malformed.bareLineBreak(line) }
        statusLine = lines.removeFirst()
        guard statusLine.range(of: #"^HTTP/1\.1 [1-5][0-9][0-9] [A-Za-z ]+$"#, options: .regularExpression) != nil
        else {
            throw Malformed.badStatusLine(statusLine)
        }
        fields = try lines.map { line in
            guard
                line.range(of: #"^[A-Za-z0-9-]+: [^ \t].*[^ \t]$|^[A-Za-z0-9-]+: [^ \t]$"#, options: .regularExpression)
                    != nil,
                let colon = line.firstIndex(of: ":")
            else { throw Malformed.badField(line) }
            return (String(line[..<colon]), String(line[line.index(colon, offsetBy: 2)...]))
        }
        body = Array(bytes[(headEnd + 4)...])
        guard let length = fields.first(where: { $0.name.lowercased() == "content-length" }).flatMap({ Int($0.value) }),
            length == body.count
        else { throw Malformed.badLength }
    }

    subscript(name: String) -> String? { fields.first { $0.name.lowercased() == name.lowercased() }?.value }
    /// The field names, lower-cased.
    var names: Set<String> { Set(fields.map { $0.name.lowercased() }) }
}

private func helloRoute(_ router: HTTPRouter) {
    router.add(.get, "/hello") { _ in .text("hello") }
}

/// The checks every answer the server writes on its own must pass, besides its own fields.
private func expectServerFields(_ response: WireResponse) {
    #expect(response.fields.count == response.names.count, "a field sent twice")
    #expect(response["Server"] == "galleryd")
    #expect(response["Connection"] == "close")
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    #expect(response["Date"].flatMap(formatter.date(from:)) != nil, "Date: \(response["Date"] ?? "none")")
    #expect(
        response["X-Request-Id"]?.range(of: #"^[0-9a-z]{1,4}-[0-9a-z]+\.[0-9a-z]+$"#, options: .regularExpression)
            != nil)
}

@Test(arguments: HTTPIOBackend.available)
func server_Answers503_OverTheConnectionLimit_AsWellFormedHTTP(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, configure: { $0.maxConnections = 1 }, routes: helloRoute) { server in
        let first = try RawClient(port: server.port)
        first.send(get("/hello"))
        #expect(try first.readResponse().status == 200)
        let second = try RawClient(port: server.port)
        let response = try WireResponse(try second.readToEnd())
        #expect(response.statusLine == "HTTP/1.1 503 Service Unavailable")
        // The fields it always had (Server, Content-Length, Connection, Retry-After), and the Date and
        // X-Request-Id of every response written by the encoder.
        #expect(response.names == ["server", "content-length", "connection", "retry-after", "date", "x-request-id"])
        expectServerFields(response)
        #expect(response["Retry-After"] == "1")
        #expect(response["Content-Length"] == "20")
        #expect(String(decoding: response.body, as: UTF8.self) == "too many connections")
        // The first connection is still served.
        first.send(get("/hello"))
        #expect(try first.readResponse().status == 200)
    }
}

@Test(arguments: HTTPIOBackend.available)
func server_Answers408_ToAHeadThatNeverEnds_AsWellFormedHTTP(backend: HTTPIOBackend) throws {
    try withServer(backend: backend, configure: { $0.timeouts.headerRead = 0.3 }, routes: helloRoute) { server in
        let slow = try RawClient(port: server.port)
        slow.send("GET /hello HTTP/1.1\r\nHost: t\r\nX-Slow: a")
        let response = try WireResponse(try slow.readToEnd())
        #expect(response.statusLine == "HTTP/1.1 408 Request Timeout")
        #expect(response.names == ["server", "content-length", "connection", "date", "x-request-id"])
        expectServerFields(response)
        #expect(response["Content-Length"] == "0")
        #expect(response.body.isEmpty)
    }
}

@Test
func encoder_WritesTheServersOwnAnswers_HeadAndBodyInOneBuffer() throws {
    var encoder = HTTPResponseEncoder()
    let busy = try WireResponse(
        encoder.encode(.tooManyConnections, requestID: "ab-0.1", keepAlive: false, clientVersion: .http11))
    #expect(busy.statusLine == "HTTP/1.1 503 Service Unavailable")
    #expect(busy.names == ["server", "content-length", "connection", "retry-after", "date", "x-request-id"])
    #expect(busy["X-Request-Id"] == "ab-0.1")
    expectServerFields(busy)
    #expect(String(decoding: busy.body, as: UTF8.self) == "too many connections")

    let late = try WireResponse(
        encoder.encode(.requestHeadTimeout, requestID: "ab-0.2", keepAlive: false, clientVersion: .http11))
    #expect(late.statusLine == "HTTP/1.1 408 Request Timeout")
    #expect(late["Content-Length"] == "0")
    #expect(late.body.isEmpty)
    expectServerFields(late)
}

@Test
func encoder_AddsTheDefaultHeaders_UnlessTheResponseSetsThem_AndNeverOneWithALineBreak() throws {
    var encoder = HTTPResponseEncoder(defaultHeaders: [
        "X-Content-Type-Options": "nosniff", "Content-Security-Policy": "default-src 'none'",
        "X-Split": "a\r\nInjected: yes",
    ])
    let plain = try WireResponse(
        encoder.encode(.tooManyConnections, requestID: "ab-0.3", keepAlive: false, clientVersion: .http11))
    #expect(plain["X-Content-Type-Options"] == "nosniff")
    #expect(plain["Content-Security-Policy"] == "default-src 'none'")
    #expect(plain["X-Split"] == nil && plain["Injected"] == nil)
    expectServerFields(plain)
    // The response's own field wins (any case), and is written once.
    let own = HTTPResponse(status: .ok, headers: ["content-security-policy": "default-src 'self'"], body: .bytes([]))
    let page = try WireResponse(encoder.encode(own, requestID: "ab-0.4", keepAlive: true, clientVersion: .http11))
    #expect(page["Content-Security-Policy"] == "default-src 'self'")
    #expect(page.names.filter { $0 == "content-security-policy" }.count == 1)
    #expect(page["X-Content-Type-Options"] == "nosniff")
}
