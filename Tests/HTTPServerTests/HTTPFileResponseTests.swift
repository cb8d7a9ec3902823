import Foundation
import Testing

@testable import HTTPServer

private let modified = Date(timeIntervalSince1970: 1_700_000_000)
private let file = HTTPFileResponse.File(
    path: "/tmp/x.jpg", size: 1000, etag: "\"abc-3e8\"", lastModified: modified, contentType: "image/jpeg")

private func respond(_ headers: [(String, String)]) -> HTTPResponse {
    HTTPFileResponse.make(for: HTTPRequest(method: .get, target: "/b/x.jpg", headers: HTTPHeaders(headers)), file: file)
}

private func bodyRange(_ response: HTTPResponse) -> (Int, Int)? {
    if case .file(_, let offset, let length) = response.body { return (offset, length) }
    return nil
}

@Test func fileResponse_ServesWholeFile_WithValidators() {
    let r = respond([])
    #expect(r.status == .ok)
    #expect(r.headers["ETag"] == "\"abc-3e8\"")
    #expect(r.headers["Last-Modified"] == "Tue, 14 Nov 2023 22:13:20 GMT")
    #expect(r.headers["Accept-Ranges"] == "bytes")
    #expect(bodyRange(r)! == (0, 1000))
}

@Test func fileResponse_Ranges_FirstMiddleSuffixOpen() {
    #expect(bodyRange(respond([("Range", "bytes=0-99")]))! == (0, 100))
    #expect(bodyRange(respond([("Range", "bytes=500-599")]))! == (500, 100))
    #expect(bodyRange(respond([("Range", "bytes=-10")]))! == (990, 10))
    #expect(bodyRange(respond([("Range", "bytes=900-")]))! == (900, 100))
    #expect(bodyRange(respond([("Range", "bytes=900-5000")]))! == (900, 100))
    let r = respond([("Range", "bytes=500-599")])
    #expect(r.status == .partialContent)
    #expect(r.headers["Content-Range"] == "bytes 500-599/1000")
}

@Test func fileResponse_UnsatisfiableRange_Is416WithSize() {
    let r = respond([("Range", "bytes=1000-")])
    #expect(r.status == .rangeNotSatisfiable)
    #expect(r.headers["Content-Range"] == "bytes */1000")
    #expect(respond([("Range", "bytes=-0")]).status == .rangeNotSatisfiable)
}

@Test func fileResponse_IgnoresMalformedOrMultipleRanges() {
    for value in ["bytes=a-b", "items=0-1", "bytes=5-1", "bytes=0-1,5-6", "bytes=99999999999999999999-"] {
        #expect(respond([("Range", value)]).status == .ok, "\(value)")
    }
}

@Test func fileResponse_ConditionalRequests_Give304And412() {
    #expect(respond([("If-None-Match", "\"abc-3e8\"")]).status == .notModified)
    #expect(respond([("If-None-Match", "W/\"abc-3e8\", \"other\"")]).status == .notModified)
    #expect(respond([("If-None-Match", "*")]).status == .notModified)
    #expect(respond([("If-None-Match", "\"other\"")]).status == .ok)
    #expect(respond([("If-Modified-Since", "Tue, 14 Nov 2023 22:13:20 GMT")]).status == .notModified)
    #expect(respond([("If-Modified-Since", "Tue, 14 Nov 2023 22:13:19 GMT")]).status == .ok)
    // If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2).
    #expect(
        respond([("If-None-Match", "\"other\""), ("If-Modified-Since", "Tue, 14 Nov 2023 22:13:20 GMT")]).status == .ok)
    #expect(respond([("If-Match", "\"other\"")]).status == .preconditionFailed)
    #expect(respond([("If-Match", "\"abc-3e8\"")]).status == .ok)
    #expect(respond([("If-Unmodified-Since", "Tue, 14 Nov 2023 22:13:19 GMT")]).status == .preconditionFailed)
}

@Test func fileResponse_IfRange_SendsRangeOnlyWhenValidatorMatches() {
    #expect(respond([("Range", "bytes=0-9"), ("If-Range", "\"abc-3e8\"")]).status == .partialContent)
    #expect(respond([("Range", "bytes=0-9"), ("If-Range", "\"stale\"")]).status == .ok)
    #expect(respond([("Range", "bytes=0-9"), ("If-Range", "Tue, 14 Nov 2023 22:13:20 GMT")]).status == .partialContent)
    #expect(respond([("Range", "bytes=0-9"), ("If-Range", "Mon, 13 Nov 2023 22:13:20 GMT")]).status == .ok)
}

@Test func httpDate_RoundTrips_AndRejectsGarbage() {
    let d = Date(timeIntervalSince1970: 784_111_777)
    #expect(HTTPFileResponse.imfFixdate(d) == "Sun, 06 Nov 1994 08:49:37 GMT")
    #expect(HTTPFileResponse.parseHTTPDate("Sun, 06 Nov 1994 08:49:37 GMT") == d)
    #expect(HTTPFileResponse.parseHTTPDate("yesterday") == nil)
    #expect(HTTPFileResponse.parseHTTPDate("Sun, 32 Nov 1994 08:49:37 GMT") == nil)
}
