import Testing

@testable import HTTPServer

/// `HTTPHeaders`' lookups by name (decision 041: fields are told apart by their name's length
/// before any comparison): names match ignoring ASCII case only, never a field of another name of
/// the same length, and setting a field replaces every earlier one of that name.
@Suite struct HTTPHeadersTests {
    @Test func lookup_MatchesTheNameIgnoringCase_NotAnotherOfTheSameLength() {
        let headers: HTTPHeaders = ["Content-Type": "image/jpeg", "content-length": "3", "ETag": "\"a\""]
        #expect(headers["CONTENT-LENGTH"] == "3")
        #expect(headers["content-type"] == "image/jpeg")
        // Same length as "Content-Type", other bytes: no match.
        #expect(headers["Content-Tipe"] == nil)
        #expect(headers["Etag"] == "\"a\"")
        #expect(headers["ETa"] == nil)
        #expect(!headers.contains("X-Content-Type"))
        #expect(headers.contains("etag"))
        #expect(HTTPHeaders()["Host"] == nil)
    }

    @Test func lookup_GivesTheFirstOfRepeatedFields() {
        var headers = HTTPHeaders()
        headers.add("Vary", "Origin")
        headers.add("vary", "Accept-Encoding")
        #expect(headers["VARY"] == "Origin")
        #expect(headers.values("Vary") == ["Origin", "Accept-Encoding"])
    }

    @Test func set_ReplacesEveryEarlierField_AndKeepsTheOthersInOrder() {
        var headers: HTTPHeaders = ["A": "1", "Access-Control-Allow-Origin": "https://x", "B": "2"]
        headers.add("access-control-allow-origin", "https://y")
        headers["Access-Control-Allow-Origin"] = "*"
        #expect(headers.map { "\($0.name)=\($0.value)" } == ["A=1", "B=2", "Access-Control-Allow-Origin=*"])
        headers["B"] = nil
        headers.remove("Not-There")
        #expect(headers.map { "\($0.name)=\($0.value)" } == ["A=1", "Access-Control-Allow-Origin=*"])
    }
}
