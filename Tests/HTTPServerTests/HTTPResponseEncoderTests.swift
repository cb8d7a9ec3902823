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

    /// A response kept in memory and returned again (`/health`'s) has its field lines written once
    /// and copied after: the same bytes each time, its dropped fields still dropped and its
    /// `Connection: close` still told; a list changed in between is written anew.
    @Test func encoder_CopiesTheLinesOfAFieldListItWroteBefore_WithTheSameBytesAndVerdicts() throws {
        var encoder = HTTPResponseEncoder(defaultHeaders: defaults)
        let kept = HTTPResponse(
            status: .ok,
            headers: [
                "Content-Type": "application/json", "X-Bad": "a\r\nInjected: yes", "Connection": "close",
                "Content-Length": "99", "X-Good": "1",
            ],
            body: .bytes(Array("{}".utf8)))
        let server = "Server: galleryd\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n"
        func expected(_ id: String) -> String {
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Good: 1\r\nDate: <date>\r\n\(server)"
                + "X-Request-Id: \(id)\r\nContent-Length: 2\r\nConnection: close\r\n\r\n"
        }
        func written(_ response: HTTPResponse, _ id: String) throws -> (text: String, close: Bool) {
            var told = false
            var out: [UInt8] = []
            encoder.encodeHead(response, into: &out, requestID: id, clientVersion: .http11) { closeRequested in
                told = closeRequested
                return !closeRequested
            }
            var text = String(decoding: out, as: UTF8.self)
            let date = try #require(text.range(of: #"Date: [^\r]*\r\n"#, options: .regularExpression))
            text.replaceSubrange(date, with: "Date: <date>\r\n")
            return (text, told)
        }
        for round in 1...3 {
            let (text, close) = try written(kept, "ab-3.\(round)")
            #expect(text == expected("ab-3.\(round)"))
            #expect(close)
        }
        // Written for the first two, copied for the third.
        #expect(encoder.keptFieldLinesCopied == 1)
        // The same list changed (its storage is shared with the encoder's, so the change copies it).
        var changed = kept
        changed.headers["X-Good"] = "2"
        changed.headers["Connection"] = nil
        for round in 4...5 {
            let (text, close) = try written(changed, "ab-3.\(round)")
            #expect(
                text
                    == "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Good: 2\r\nDate: <date>\r\n\(server)"
                    + "X-Request-Id: ab-3.\(round)\r\nContent-Length: 2\r\n\r\n")
            #expect(!close)
        }
        #expect(encoder.keptFieldLinesCopied == 1)
        let (text, close) = try written(changed, "ab-3.6")
        #expect(text.contains("X-Good: 2\r\n") && !text.contains("Connection") && !close)
        #expect(encoder.keptFieldLinesCopied == 2)
        // A handler that sets a default still keeps its own when its lines are copied.
        let own = HTTPResponse(status: .ok, headers: ["Referrer-Policy": "origin"])
        for round in 7...9 {
            let (text, _) = try written(own, "ab-3.\(round)")
            #expect(
                text
                    == "HTTP/1.1 200 OK\r\nReferrer-Policy: origin\r\nDate: <date>\r\nServer: galleryd\r\n"
                    + "X-Content-Type-Options: nosniff\r\nX-Request-Id: ab-3.\(round)\r\nContent-Length: 0\r\n\r\n")
        }
        #expect(encoder.keptFieldLinesCopied == 3)
    }

    /// The `Date` line is made once a second and kept: a head written in the next second has that
    /// second's date, not the kept one.
    @Test func encoder_WritesTheDateOfTheSecondItIsIn() throws {
        var encoder = HTTPResponseEncoder(defaultHeaders: defaults)
        let response = HTTPResponse.json(Array("{}".utf8))
        func date() -> (value: String, second: Int) {
            var out: [UInt8] = []
            let before = time(nil)
            encoder.encodeHead(response, into: &out, requestID: "ab-4.1", keepAlive: true, clientVersion: .http11)
            let text = String(decoding: out, as: UTF8.self)
            let line = text.split(separator: "\r\n").first { $0.hasPrefix("Date: ") } ?? ""
            return (String(line.dropFirst(6)), before == time(nil) ? before : -1)
        }
        var first = date()
        while first.second < 0 { first = date() }
        #expect(first.value == HTTPDate.format(first.second))
        // Twice more within the second: the kept line.
        #expect(date().value == first.value || time(nil) != first.second)
        while time(nil) == first.second { usleep(10_000) }
        var next = date()
        while next.second < 0 { next = date() }
        #expect(next.value == HTTPDate.format(next.second))
        #expect(next.value != first.value)
    }
}
