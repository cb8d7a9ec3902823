import Foundation
import Testing

@testable import HTTPServer

/// The head exactly as written, byte for byte: the handler's fields, then `Date`, `Server`, the
/// default headers, `X-Request-Id` and the framing fields, whether the server's lines come
/// pre-encoded (a response that sets none of them) or one by one (a response that sets one).
@Suite struct HTTPResponseEncoderTests {
    private let defaults: HTTPHeaders = ["X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"]

    /// The head as text, with its `Date` value replaced by `<date>` after checking it is now's.
    private func head(
        _ encoder: inout HTTPResponseEncoder, _ response: HTTPResponse, id: String,
        keepAlive: Bool = true, version: HTTPVersion = .http11
    ) throws -> String {
        var out: [UInt8] = []
        encoder.encodeHead(response, into: &out, requestID: id, keepAlive: keepAlive, clientVersion: version)
        var text = String(decoding: out, as: UTF8.self)
        let dateField = try #require(text.range(of: #"Date: [^\r]*\r\n"#, options: .regularExpression))
        let value = String(text[dateField].dropFirst(6).dropLast(1))  // CRLF is one Character
        let date = try #require(HTTPFileResponse.parseHTTPDate(value))
        #expect(abs(date.timeIntervalSinceNow) < 5)
        text.replaceSubrange(dateField, with: "Date: <date>\r\n")
        return text
    }

    @Test func encoder_WritesEveryHeadInTheServersOrder_FromItsPreEncodedLinesOrOneByOne() throws {
        var encoder = HTTPResponseEncoder(defaultHeaders: defaults)
        let file = HTTPResponse(
            status: .ok, headers: ["ETag": "\"t\"", "Content-Type": "image/jpeg"], body: .bytes([1, 2, 3]))
        let server = "Server: galleryd\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n"
        #expect(
            try head(&encoder, file, id: "ab-0.1")
                == "HTTP/1.1 200 OK\r\nETag: \"t\"\r\nContent-Type: image/jpeg\r\nDate: <date>\r\n\(server)"
                + "X-Request-Id: ab-0.1\r\nContent-Length: 3\r\n\r\n")
        // The same lines again (kept for the second), with the next id.
        #expect(
            try head(&encoder, file, id: "ab-0.2")
                == "HTTP/1.1 200 OK\r\nETag: \"t\"\r\nContent-Type: image/jpeg\r\nDate: <date>\r\n\(server)"
                + "X-Request-Id: ab-0.2\r\nContent-Length: 3\r\n\r\n")
        #expect(
            try head(&encoder, HTTPResponse(status: .notModified), id: "ab-0.3", keepAlive: false)
                == "HTTP/1.1 304 Not Modified\r\nDate: <date>\r\n\(server)X-Request-Id: ab-0.3\r\nConnection: close\r\n\r\n"
        )
        #expect(
            try head(&encoder, HTTPResponse(status: .notFound, body: .bytes([])), id: "ab-0.4", version: .http10)
                == "HTTP/1.1 404 Not Found\r\nDate: <date>\r\n\(server)X-Request-Id: ab-0.4\r\nContent-Length: 0\r\n"
                + "Connection: keep-alive\r\n\r\n")
        // A response that sets a default (any case) keeps its own, and the others follow one by one.
        let own = HTTPResponse(
            status: .ok, headers: ["referrer-policy": "origin"], body: .bytes(Array(repeating: 0, count: 1234)))
        #expect(
            try head(&encoder, own, id: "ab-0.5")
                == "HTTP/1.1 200 OK\r\nreferrer-policy: origin\r\nDate: <date>\r\nServer: galleryd\r\n"
                + "X-Content-Type-Options: nosniff\r\nX-Request-Id: ab-0.5\r\nContent-Length: 1234\r\n\r\n")
        // A response that sets Date or Server keeps its own and gets the rest.
        let dated = HTTPResponse(status: .ok, headers: ["Server": "other"], body: .bytes([]))
        #expect(
            try head(&encoder, dated, id: "ab-0.6")
                == "HTTP/1.1 200 OK\r\nServer: other\r\nDate: <date>\r\nX-Content-Type-Options: nosniff\r\n"
                + "Referrer-Policy: no-referrer\r\nX-Request-Id: ab-0.6\r\nContent-Length: 0\r\n\r\n")
        // And the pre-encoded lines are still whole after those.
        #expect(
            try head(&encoder, file, id: "ab-0.7")
                == "HTTP/1.1 200 OK\r\nETag: \"t\"\r\nContent-Type: image/jpeg\r\nDate: <date>\r\n\(server)"
                + "X-Request-Id: ab-0.7\r\nContent-Length: 3\r\n\r\n")
    }

    @Test func encoder_DropsAFieldWithALineBreak_AndTheFramingFieldsAHandlerSets() throws {
        var encoder = HTTPResponseEncoder()
        let response = HTTPResponse(
            status: HTTPStatus(200, "Fine"),
            headers: [
                "X-A": "1\r\nInjected: yes", "Content-Length": "99", "Connection": "upgrade", "X-B": "2",
                // A line break in a name, or in the last bytes of a long value (the scan's last word).
                "X-C\n": "3", "X-D": "a long value that ends in a line feed\n", "X-E": "\r",
                "X-F": "after the dropped ones",
            ],
            body: .bytes([7]))
        #expect(
            try head(&encoder, response, id: "ab-1.1")
                == "HTTP/1.1 200 Fine\r\nX-B: 2\r\nX-F: after the dropped ones\r\nDate: <date>\r\n"
                + "Server: galleryd\r\nX-Request-Id: ab-1.1\r\nContent-Length: 1\r\n\r\n")
    }

    @Test func encoder_TellsTheConnectionWhetherTheHandlersConnectionFieldListsClose() throws {
        var encoder = HTTPResponseEncoder()
        let cases: [(HTTPHeaders, Bool)] = [
            (["Connection": "keep-alive, Close"], true), (["Connection": "closed"], false), ([:], false),
            // A line break inside the value: no `close` token there (as `containsToken` reads it).
            (["Connection": "close\r\nX: y"], false),
            (HTTPHeaders([("Connection", "upgrade"), ("connection", "close")]), true),
        ]
        for (headers, expected) in cases {
            var told: Bool?
            var out: [UInt8] = []
            encoder.encodeHead(
                HTTPResponse(status: .ok, headers: headers), into: &out, requestID: "ab-2.1", clientVersion: .http11
            ) { closeRequested in
                told = closeRequested
                return !closeRequested
            }
            let text = String(decoding: out, as: UTF8.self)
            #expect(told == expected, "\(headers)")
            #expect(text.hasSuffix(expected ? "Connection: close\r\n\r\n" : "Content-Length: 0\r\n\r\n"))
            #expect(!text.contains("X: y"))
        }
    }
}
