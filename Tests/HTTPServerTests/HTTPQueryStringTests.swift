import Testing

@testable import HTTPServer

@Suite struct HTTPQueryStringTests {
    @Test func decodesFormEncodingInOrder() throws {
        let items = try HTTPQueryString.decode("text=red+rose%21&extras=url_s%2Curl_m&empty=&bare&&a%2Bb=%E2%9C%93")
        #expect(items.map(\.name) == ["text", "extras", "empty", "bare", "a+b"])
        #expect(items.map(\.value) == ["red rose!", "url_s,url_m", "", "", "✓"])
    }

    @Test func refusesMalformedEscapesAndInvalidUTF8() {
        #expect(throws: HTTPQueryString.Failure.malformedPercentEncoding) { try HTTPQueryString.decode("a=%zz") }
        #expect(throws: HTTPQueryString.Failure.malformedPercentEncoding) { try HTTPQueryString.decode("a=%4") }
        #expect(throws: HTTPQueryString.Failure.invalidUTF8) { try HTTPQueryString.decode("a=%C3%28") }
        #expect(HTTPRequest(method: .get, target: "/x?a=%zz").queryItems() == nil)
    }

    @Test func requestQueryItemsAgreeWithTheDecoder() throws {
        let request = HTTPRequest(method: .get, target: "/services/rest/?method=flickr.test.echo&name=a%20b+c")
        let items = try #require(request.queryItems())
        #expect(items.map(\.value) == ["flickr.test.echo", "a b c"])
        #expect(HTTPRequest(method: .get, target: "/x").queryItems()?.isEmpty == true)
    }
}
