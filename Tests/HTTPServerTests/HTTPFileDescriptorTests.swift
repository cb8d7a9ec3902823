import Foundation
import Testing

@testable import HTTPServer

/// How many of this process's descriptors are open on `path` (read from /proc/self/fd), so a test
/// sees its own file's descriptors whatever other tests running alongside have open.
private func openDescriptors(on path: String) -> Int {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return -1 }
    return entries.filter {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == path
    }.count
}

@Test(arguments: HTTPIOBackend.available)
func server_SendsFromOpenedDescriptor_AndClosesItAfterEveryKindOfAnswer(backend: HTTPIOBackend) throws {
    let path = NSTemporaryDirectory() + "galleryd-descriptor-\(UInt32.random(in: 0...UInt32.max))"
    let bytes = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    defer { unlink(path) }
    let etag = "\"v1\""
    try withServer(
        backend: backend,
        routes: { router in
            router.add(.get, "/file", mayBlock: false) { request in
                let fd = open(path, O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { return .text("cannot open", status: .internalServerError) }
                let file = HTTPFileResponse.File(
                    path: path, size: bytes.count, etag: etag, lastModified: Date(timeIntervalSince1970: 1_700_000_000),
                    contentType: "application/octet-stream", descriptor: HTTPFileDescriptor(owning: fd))
                return HTTPFileResponse.make(for: request, file: file)
            }
            // Opens a descriptor and then answers something else: dropping the response must close it.
            router.add(.get, "/dropped", mayBlock: true) { _ in
                _ = HTTPFileDescriptor(owning: open(path, O_RDONLY | O_CLOEXEC))
                return .text("replaced")
            }
        }
    ) { server in
        let client = try RawClient(port: server.port)
        for _ in 0..<20 {
            client.send(get("/file"))
            let whole = try client.readResponse()
            #expect(whole.status == 200)
            #expect(whole.body == bytes)

            client.send(get("/file", headers: "Range: bytes=100-299\r\n"))
            let range = try client.readResponse()
            #expect(range.status == 206)
            #expect(range.body == Array(bytes[100..<300]))

            client.send("HEAD /file HTTP/1.1\r\nHost: test\r\n\r\n")
            let head = try client.readResponse(bodyless: true)
            #expect(head.status == 200)
            #expect(head.headers["Content-Length"] == "\(bytes.count)")

            client.send(get("/file", headers: "If-None-Match: \(etag)\r\n"))
            #expect(try client.readResponse().status == 304)

            client.send(get("/file", headers: "Range: bytes=999999-\r\n"))
            #expect(try client.readResponse().status == 416)

            client.send(get("/dropped"))
            #expect(try client.readResponse().text == "replaced")
        }
        // Every answer above has been read, so the server is done with each descriptor.
        #expect(openDescriptors(on: path) == 0)
    }
}

@Test func httpDate_FormatsLikeStrftime_AcrossTheFourDigitYears() {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    // 1970, 2000-02-29, 2024-02-29, 2100-03-01, 9999-12-31
    var samples: [Int] = [0, 59, 951_782_400, 1_709_164_800, 4_107_542_400, 253_402_300_799]
    for _ in 0..<2000 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        samples.append(Int(state >> 24) % 253_402_300_800)
    }
    for seconds in samples {
        var t = time_t(seconds)
        var tm = Glibc.tm()
        gmtime_r(&t, &tm)
        var buffer = [CChar](repeating: 0, count: 64)
        // The C locale's names are the English ones IMF-fixdate uses.
        let count = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &tm)
        let expected = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #expect(HTTPDate.format(seconds) == expected, "\(seconds)")
        #expect(HTTPDate.parse(expected).map { Int($0.timeIntervalSince1970) } == seconds)
    }
}

@Test func headers_ContainsToken_MatchesListElementsOnly() {
    let headers = HTTPHeaders([("Connection", "keep-alive, Close"), ("Accept-Encoding", " br ; q=1,\tgzip;q=0.5 ")])
    #expect(headers.containsToken("close", in: "connection"))
    #expect(headers.containsToken("keep-alive", in: "Connection"))
    #expect(headers.containsToken("gzip", in: "Accept-Encoding"))
    #expect(headers.containsToken("br", in: "Accept-Encoding"))
    #expect(!headers.containsToken("clos", in: "Connection"))
    #expect(!headers.containsToken("q=1", in: "Accept-Encoding"))
    #expect(!headers.containsToken("close", in: "Accept-Encoding"))
    #expect(!HTTPHeaders([("Connection", "closed,")]).containsToken("close", in: "Connection"))
    #expect(HTTPHeaders([("Connection", ",,close")]).containsToken("close", in: "Connection"))
}

@Test func pathParameters_LookUpByName_AndCompareLikeADictionary() {
    let parameters = HTTPPathParameters(captures: [("className", "Photo"[...]), ("objectId", "abc"[...])])
    #expect(parameters["className"] == "Photo")
    #expect(parameters["objectId"] == "abc")
    #expect(parameters["missing"] == nil)
    #expect(parameters == ["objectId": "abc", "className": "Photo"])
    #expect(parameters != ["objectId": "abd", "className": "Photo"])
    #expect(parameters != ["objectId": "abc"])
    #expect(parameters.names == ["className", "objectId"])
}

@Test func request_CopiesStayIndependent_AfterEitherChanges() {
    var a = HTTPRequest(method: .get, target: "/x?y=1", headers: ["Host": "h"])
    let b = a
    a.path = "/changed"
    a.headers.add("X-One", "1")
    a.pathParameters = ["key": "v"]
    a.body = .bytes([1, 2, 3])
    #expect(b.path == "/x")
    #expect(b.headers.count == 1)
    #expect(b.pathParameters["key"] == nil)
    #expect(b.body.count == 0)
    #expect(a.query == "y=1" && b.query == "y=1")
    var c = b
    c.routePattern = "/x"
    #expect(b.routePattern == "" && c.routePattern == "/x" && a.routePattern == "")
}

@Test
func gzip_FindsCompressibleTypes_IgnoringCaseParametersAndSpaces() {
    for type in [
        "text/html", "Text/Plain; charset=utf-8", " application/json ;charset=utf-8", "APPLICATION/XML",
        "application/javascript", "image/svg+xml", "application/vnd.api+json", "application/atom+XML",
        "application/wasm",
    ] {
        #expect(HTTPGzip.isCompressible(contentType: type), "\(type)")
    }
    for type in [
        "image/jpeg", "application/octet-stream", "application/jsonx", "application/jso", "text", "",
        "; text/html", "application/zip", "image/svg",
    ] {
        #expect(!HTTPGzip.isCompressible(contentType: type), "\(type)")
    }
}
