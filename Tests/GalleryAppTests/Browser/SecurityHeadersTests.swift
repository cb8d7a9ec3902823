import Foundation
import Testing

@testable import GalleryApp

/// Every answer says `nosniff` and `no-referrer` and may not be framed; the web page's policy
/// allows what the page in `web/` loads and nothing inline.
@Suite(.serialized) struct SecurityHeadersTests {
    func expectSecurityHeaders(_ response: TestServer.Response, _ comment: Comment) {
        #expect(response.header("X-Content-Type-Options") == "nosniff", comment)
        #expect(response.header("Referrer-Policy") == "no-referrer", comment)
        #expect(response.header("Content-Security-Policy")?.contains("frame-ancestors 'none'") == true, comment)
    }

    @Test func everyAnswer_CarriesNosniffNoReferrerAndNoFraming() throws {
        let server = try TestServer(workers: 0) { $0.bucketPublic = false }
        defer { server.stop() }
        let file = try server.request(
            "POST", "/parse/files/h.jpg", body: Data(try TestJPEG.make(width: 8, height: 8, seed: 3)),
            headers: ["Content-Type": "image/jpeg"])
        let url = try #require(file.json["url"] as? String)
        let asset = try #require(URL(string: url))
        let answers: [(String, TestServer.Response)] = [
            ("upload", file),
            ("find", try server.request("GET", "/parse/classes/Photo")),
            ("parse error", try server.request("GET", "/parse/classes/Photo?where=nope")),
            ("unknown route", try server.request("GET", "/no/such/path", appID: nil)),
            ("signed asset", try server.request("GET", asset.path, appID: nil)),
            ("refused asset", try server.request("GET", "/bucket/thumbnails/nosuchid00.jpg", appID: nil)),
            ("health", try server.request("GET", "/health", appID: nil)),
            ("web config", try server.request("GET", "/web/config.json", appID: nil)),
            ("page", try server.request("GET", "/", appID: nil)),
        ]
        for (name, response) in answers {
            expectSecurityHeaders(response, "\(name): \(response.status)")
        }
        // An API answer is no document: it may load nothing.
        #expect(answers[1].1.header("Content-Security-Policy") == SecurityHeaders.apiPolicy)
    }

    @Test func page_HasAPolicyForWhatItLoads_AndNothingInline() throws {
        let server = try TestServer(workers: 0) { $0.publicAssetURL = "https://cdn.example.com/g/" }
        defer { server.stop() }
        let page = try server.request("GET", "/", appID: nil)
        #expect(page.status == 200)
        let policy = try #require(page.header("Content-Security-Policy"))
        var directives: [String: [String]] = [:]
        for directive in policy.split(separator: ";") {
            let words = directive.split(separator: " ").map(String.init)
            directives[words[0]] = Array(words.dropFirst())
        }
        #expect(directives["default-src"] == ["'none'"])
        #expect(directives["script-src"] == ["'self'"])
        #expect(directives["style-src"] == ["'self'"])
        #expect(directives["frame-ancestors"] == ["'none'"])
        #expect(directives["img-src"]?.contains("https://cdn.example.com") == true, "\(policy)")
        // The public URL (the photos' host when there is no CDN) and its WebSocket origin.
        let publicURL = server.application.publicURL
        #expect(publicURL.hasPrefix("http://"))
        #expect(directives["img-src"]?.contains(publicURL) == true, "\(policy)")
        // The grid's ThumbHash placeholders are data: PNGs.
        #expect(directives["img-src"]?.contains("data:") == true, "\(policy)")
        #expect(directives["connect-src"]?.contains("'self'") == true)
        #expect(
            directives["connect-src"]?.contains("ws://" + publicURL.dropFirst("http://".count)) == true, "\(policy)")
        #expect(!policy.contains("unsafe"))
        // The page keeps to it: scripts and styles are files, no inline handlers or style attributes.
        let html = page.text
        #expect(html.contains("<script type=\"module\" src=\"/web/app.js\"></script>"))
        let scripts = html.components(separatedBy: "<script").dropFirst()
        #expect(scripts.allSatisfy { $0.prefix(while: { $0 != ">" }).contains("src=") }, "an inline script")
        #expect(!html.contains("<style") && !html.contains(" style=\""))
        #expect(html.range(of: #"\son[a-z]+="#, options: .regularExpression) == nil, "an inline event handler")
        let web = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("web")
        for name in try FileManager.default.contentsOfDirectory(atPath: web.path) where name.hasSuffix(".js") {
            let code = try String(contentsOf: web.appendingPathComponent(name), encoding: .utf8)
            for blocked in [
                "eval(", "new Function", "setAttribute(\"style\"", "setAttribute('style'", ".innerHTML", "javascript:",
            ] {
                #expect(!code.contains(blocked), "web/\(name) uses \(blocked), which the page's policy blocks")
            }
        }
    }
}
