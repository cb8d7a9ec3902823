import Foundation
import GalleryTestSupport
import Testing

@testable import GalleryApp

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Private assets (`bucket_public = false`, the default): every asset URL handed out is signed in
/// its path, and the bucket serves only signed, unexpired URLs (in the path, or the query of URLs
/// handed out before), answering anything else 403 `AccessDenied`.
@Suite(.serialized) final class SignedAssetURLTests {
    let server: TestServer
    let jpeg: [UInt8]
    /// The signed URL of an uploaded original, as `POST /files` answered it.
    let url: URL

    init() throws {
        // The defaults, as a fresh install has them (TestServer opens the bucket for other suites).
        server = try TestServer(workers: 1, listening: true) { configuration in
            let defaults = GalleryConfiguration()
            configuration.bucketPublic = defaults.bucketPublic
            configuration.urlWindowSeconds = defaults.urlWindowSeconds
            configuration.urlValiditySeconds = defaults.urlValiditySeconds
            configuration.thumbnailSize = 32
            configuration.previewSize = 64
        }
        jpeg = try TestJPEG.make(width: 120, height: 90, seed: 57)
        let file = try server.request(
            "POST", "/parse/files/s.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
        #expect(file.status == 201)
        let text = try #require(file.json["url"] as? String)
        url = try #require(URL(string: text))
        #expect(file.header("Location") == url.absoluteString)
    }

    deinit { server.stop() }

    /// The signer the server uses, rebuilt from the same key (the tests sign as it would).
    var signer: AssetURLSigner {
        AssetURLSigner(key: TestServer.urlSigningKey, bucket: "bucket", windowSeconds: 86_400, validitySeconds: 604_800)
    }

    func get(_ target: String, headers: String = "", method: String = "GET") throws -> RawHTTPResponse {
        try RawHTTPClient.exchange(
            port: server.application.port,
            head: "\(method) \(target) HTTP/1.1\r\nHost: t\r\n\(headers)Connection: close\r\n\r\n")
    }

    /// The URL as requested: path only, the signature is in it.
    var target: String { url.path }

    /// The parts of a signed path: `/bucket/s/<expires>/<signature>/<key>`.
    static func parts(_ path: String) -> (expires: Int64, signature: String, key: String)? {
        let segments = path.split(separator: "/", maxSplits: 4, omittingEmptySubsequences: false)
        guard segments.count == 5, segments[1] == "bucket", segments[2] == "s", let expires = Int64(segments[3]) else {
            return nil
        }
        return (
            expires, String(segments[4].prefix(while: { $0 != "/" })),
            String(segments[4].drop(while: { $0 != "/" }).dropFirst())
        )
    }

    /// The URL's parts; the tests below rebuild or tamper with them.
    var signed: (expires: Int64, signature: String, key: String) { Self.parts(url.path)! }

    /// A path of the path form from its parts.
    static func path(_ key: String, expires: Int64, signature: String) -> String {
        "/bucket/s/\(expires)/\(signature)/\(key)"
    }

    /// A URL of the query form, as handed out before signatures moved into the path.
    func queryForm(_ key: String, expires: Int64, signer: AssetURLSigner? = nil) -> String {
        let signature = String(
            decoding: (signer ?? self.signer).signature(key: Array(key.utf8), expires: expires), as: UTF8.self)
        return
            "/bucket/\(key)?\(AssetURLSigner.expiresParameter)=\(expires)&\(AssetURLSigner.signatureParameter)=\(signature)"
    }

    func expectAccessDenied(_ response: RawHTTPResponse, _ message: String = "Access Denied", _ comment: Comment? = nil)
    {
        #expect(response.status == 403, comment)
        let body = String(decoding: response.body, as: UTF8.self)
        #expect(body.contains("<Code>AccessDenied</Code>"), comment)
        #expect(body.contains("<Message>\(message)</Message>"), comment)
        #expect(response.header("Content-Type") == "application/xml", comment)
        // Never the object's bytes, and never cached.
        #expect(!body.contains("JFIF"), comment)
        #expect(response.header("Cache-Control") == "no-store", comment)
    }

    /// A signed answer may be kept by the client alone, and only until its signature expires.
    func expectPrivateUntilExpiry(_ response: RawHTTPResponse, expires: Int64, _ comment: Comment? = nil) throws {
        let value = try #require(response.header("Cache-Control"), comment)
        #expect(value.hasPrefix("private, max-age="), comment)
        #expect(!value.contains("public") && !value.contains("immutable"), comment)
        let maxAge = try #require(Int64(value.dropFirst("private, max-age=".count)), comment)
        let left = expires - Int64(Date().timeIntervalSince1970)
        #expect(
            maxAge <= left + 1 && maxAge >= left - 5, "max-age \(maxAge), \(left) s left; \(comment?.description ?? "")"
        )
    }

    @Test func defaults_AreAPrivateBucket_AUrlStableForADay_AndValidForSevenDays() {
        let defaults = GalleryConfiguration()
        #expect(defaults.bucketPublic == false)
        #expect(defaults.urlSigningKey == nil)
        #expect(defaults.urlWindowSeconds == 86_400)
        #expect(defaults.urlValiditySeconds == 604_800)
    }

    @Test func upload_AnswersAURLSignedInItsPath_ThatTheBucketServes_CachedPrivatelyUntilItExpires() throws {
        #expect(url.query == nil, "\(url)")
        let (expires, signature, key) = try #require(Self.parts(url.path), "\(url)")
        #expect(key.hasPrefix("originals/") && key.hasSuffix(".jpg"))
        #expect(signature.count == 43, "base64url of 32 bytes, unpadded: \(signature)")
        #expect(signature.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        let now = Int64(Date().timeIntervalSince1970)
        #expect(expires >= now + 604_800 && expires <= now + 604_800 + 86_400 + 5)
        let r = try get(target)
        #expect(r.status == 200)
        #expect(r.body == jpeg)
        try expectPrivateUntilExpiry(r, expires: expires)
    }

    /// `ParseFile.fetch()` of the Parse Swift SDK (API+Command.swift, `prepareURLRequest`) builds
    /// `URLComponents(url: url, resolvingAgainstBaseURL: false)`, sets `queryItems` to its
    /// parameters (nil for a download) and requests `components.url` with its Parse headers.
    @Test func parseSwiftFetch_RebuildsTheURLWithoutItsQuery_AndStillGetsTheImage() throws {
        func fetch(_ url: URL) throws -> TestServer.Response {
            var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
            components.queryItems = nil
            var request = URLRequest(url: try #require(components.url))
            request.allHTTPHeaderFields = [
                "X-Parse-Application-Id": TestServer.appID, "X-Parse-Client-Version": "swift5.11.0",
            ]
            request.httpMethod = "GET"
            return try TestServer.send(request)
        }
        let fetched = try fetch(url)
        #expect(fetched.status == 200)
        #expect([UInt8](fetched.body) == jpeg)
        // The same photo's derivatives, as a find hands them to the SDK.
        let photo = try server.uploadPhoto(try TestJPEG.make(width: 96, height: 64, seed: 59), name: "f.jpg")
        #expect(try server.waitForProcessing(photo) == "ready")
        let object = try server.request("GET", "/parse/classes/Photo/\(photo)").json
        for field in ["original", "thumbnail", "preview"] {
            let text = try #require((object[field] as? [String: Any])?["url"] as? String)
            let answer = try fetch(try #require(URL(string: text)))
            #expect(answer.status == 200, "\(field): \(text)")
            #expect(answer.header("Content-Type") == "image/jpeg", "\(field)")
        }
        // What the SDK got before: the query form loses its signature in the rebuild.
        let old = try #require(URL(string: server.baseURL + queryForm(signed.key, expires: signed.expires)))
        #expect(try fetch(old).status == 403)
    }

    @Test func queryForm_HandedOutBefore_IsStillServed_PrivatelyCached() throws {
        let (expires, _, key) = signed
        let old = queryForm(key, expires: expires)
        let r = try get(old)
        #expect(r.status == 200)
        #expect(r.body == jpeg)
        try expectPrivateUntilExpiry(r, expires: expires)
        // An extra parameter (a client's cache buster) does no harm, in either form.
        #expect(try get(old + "&v=2").status == 200)
        #expect(try get(target + "?v=2").status == 200)
    }

    @Test func missingSignature_Is403AccessDenied_ForAnExistingKeyAndAMissingOne() throws {
        let (expires, signature, key) = signed
        expectAccessDenied(try get("/bucket/" + key), "Access Denied", "no signature")
        expectAccessDenied(try get("/bucket/\(key)?\(AssetURLSigner.expiresParameter)=\(expires)"))
        expectAccessDenied(try get("/bucket/\(key)?\(AssetURLSigner.signatureParameter)=\(signature)"))
        // A key that does not exist says no more than one that does: 403, not 404.
        expectAccessDenied(try get("/bucket/originals/" + String(repeating: "0", count: 64) + ".jpg"))
        let head = try get("/bucket/thumbnails/nosuchid00.jpg", method: "HEAD")
        #expect(head.status == 403)
        #expect(head.body.isEmpty)
    }

    @Test func tamperedPathExpiryOrSignature_Is403AccessDenied() throws {
        let (expires, signature, key) = signed
        var flipped = Array(signature)
        flipped[10] = flipped[10] == "A" ? "B" : "A"
        let other = AssetURLSigner(
            key: "another-signing-key-0123456789abcdef", bucket: "bucket", windowSeconds: 86_400,
            validitySeconds: 604_800)
        let cases: [(String, String)] = [
            (
                "another key, this signature",
                Self.path("thumbnails/nosuchid00.jpg", expires: expires, signature: signature)
            ),
            (
                "the key changed",
                Self.path(
                    key.replacingOccurrences(of: "originals/", with: "previews/"), expires: expires,
                    signature: signature)
            ),
            ("a later expiry", Self.path(key, expires: expires + 1, signature: signature)),
            ("an earlier expiry", Self.path(key, expires: expires - 86_400, signature: signature)),
            ("one character of the signature", Self.path(key, expires: expires, signature: String(flipped))),
            ("a truncated signature", Self.path(key, expires: expires, signature: String(signature.dropLast()))),
            ("an empty signature", Self.path(key, expires: expires, signature: "")),
            ("a hex signature", Self.path(key, expires: expires, signature: String(repeating: "ab", count: 32))),
            ("expiry not digits", "/bucket/s/\(expires)x/\(signature)/\(key)"),
            ("expiry negative", "/bucket/s/-\(expires)/\(signature)/\(key)"),
            ("expiry too long", "/bucket/s/0000000000000000000\(expires)/\(signature)/\(key)"),
            ("no key", "/bucket/s/\(expires)/\(signature)/"),
            (
                "signed with another key",
                "/bucket/" + String(decoding: other.pathSegment(forKey: key, expires: expires), as: UTF8.self) + key
            ),
            (
                "query form, the key changed",
                queryForm(key.replacingOccurrences(of: "originals/", with: "previews/"), expires: expires)
                    .replacingOccurrences(of: "previews/", with: "originals/")
            ),
            (
                "query form, signature twice",
                queryForm(key, expires: expires) + "&\(AssetURLSigner.signatureParameter)=\(signature)"
            ),
            ("query form, signed with another key", queryForm(key, expires: expires, signer: other)),
        ]
        for (name, target) in cases {
            expectAccessDenied(try get(target), "Access Denied", "\(name): \(target)")
        }
        // The untampered URL still works.
        #expect(try get(target).status == 200)
    }

    @Test func expiryBeyondWhatTheServerIssues_IsRefused_WhateverItsSignature() throws {
        // Signed with the server's own key (as someone holding a leaked key, or a URL from a
        // misconfigured validity, would): an expiry past window + validity from now is refused.
        let key = signed.key
        let now = Int64(Date().timeIntervalSince1970)
        let latest = now + 86_400 + 604_800
        for expires in [latest + AssetURLSigner.clockSkewSeconds + 5, latest + 365 * 86_400, 999_999_999_999_999_999] {
            let segment = String(decoding: signer.pathSegment(forKey: key, expires: expires), as: UTF8.self)
            expectAccessDenied(try get("/bucket/" + segment + key), "Access Denied", "path form, \(expires)")
            expectAccessDenied(try get(queryForm(key, expires: expires)), "Access Denied", "query form, \(expires)")
        }
        #expect(throws: AssetURLError.expiryTooLate(latest + 3_600)) {
            _ = try signer.verify(
                captured: key, query: String(queryForm(key, expires: latest + 3_600).split(separator: "?")[1]), now: now
            )
        }
        // The latest expiry the server issues is served.
        let segment = String(decoding: signer.pathSegment(forKey: key, expires: signer.expires(at: now)), as: UTF8.self)
        #expect(try get("/bucket/" + segment + key).status == 200)
    }

    @Test func expiredSignature_Is403_RequestHasExpired() throws {
        let key = signed.key
        let past = Int64(Date().timeIntervalSince1970) - 10
        let expired = String(decoding: signer.pathSegment(forKey: key, expires: past), as: UTF8.self)
        expectAccessDenied(try get("/bucket/" + expired + key), "Request has expired")
        expectAccessDenied(try get(queryForm(key, expires: past)), "Request has expired")
        // The same signer's current URL is the server's, byte for byte: the window makes it stable.
        let current = String(decoding: signer.pathSegment(forKey: key, expires: signer.expiresNow()), as: UTF8.self)
        #expect("/bucket/" + current + key == target)
        #expect(try get("/bucket/" + current + key).status == 200)
    }

    @Test func rangeHeadAndNotModified_WorkWithAValidSignature() throws {
        let range = try get(target, headers: "Range: bytes=0-9\r\n")
        #expect(range.status == 206)
        #expect(range.body == Array(jpeg[0..<10]))
        let head = try get(target, method: "HEAD")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.header("Content-Length") == "\(jpeg.count)")
        let etag = try #require(head.header("ETag"))
        let cached = try get(target, headers: "If-None-Match: \(etag)\r\n")
        #expect(cached.status == 304)
        try expectPrivateUntilExpiry(cached, expires: signed.expires)
        // Conditional and range requests without a signature are refused like any other.
        expectAccessDenied(try get("/bucket/" + signed.key, headers: "If-None-Match: \(etag)\r\n"))
        expectAccessDenied(try get("/bucket/" + signed.key, headers: "Range: bytes=0-9\r\n"))
    }

    @Test func everyAnswerWithFiles_CarriesSignedURLs_StableAcrossRequests_ThatServe() throws {
        let photo = try server.uploadPhoto(try TestJPEG.make(width: 96, height: 64, seed: 58), name: "m.jpg")
        #expect(try server.waitForProcessing(photo) == "ready")
        let gallery = try #require(
            try server.json("POST", "/parse/classes/Gallery", ["name": "G"]).json["objectId"] as? String)
        let item = try server.json(
            "POST", "/parse/classes/GalleryItem",
            [
                "gallery": ["__type": "Pointer", "className": "Gallery", "objectId": gallery],
                "photo": ["__type": "Pointer", "className": "Photo", "objectId": photo],
            ])
        #expect(item.status == 201)
        func urls(_ object: [String: Any]?) -> [String] {
            ["original", "thumbnail", "preview"].compactMap { (object?[$0] as? [String: Any])?["url"] as? String }
        }
        let find = try server.request("GET", "/parse/classes/Photo?where=%7B%22objectId%22%3A%22\(photo)%22%7D")
        let found = urls((find.json["results"] as? [[String: Any]])?.first)
        let fetched = urls(try server.request("GET", "/parse/classes/Photo/\(photo)").json)
        let included = urls(
            ((try server.request("GET", "/parse/classes/GalleryItem?include=photo").json["results"] as? [[String: Any]])?
                .first)?["photo"]
                as? [String: Any])
        let batch = try server.json(
            "POST", "/parse/batch",
            [
                "requests": [
                    ["method": "GET", "path": "/parse/classes/Photo/\(photo)"]
                ]
            ])
        let batched = urls(((batch.jsonArray.first as? [String: Any])?["success"]) as? [String: Any])
        #expect(found.count == 3)
        // Byte-identical everywhere within the window: clients' URL-keyed caches keep hitting.
        #expect(fetched == found)
        #expect(included == found)
        #expect(batched == found)
        #expect(urls(try server.request("GET", "/parse/classes/Photo/\(photo)").json) == found)
        for text in found {
            let url = try #require(URL(string: text))
            #expect(url.query == nil, "\(text)")
            let parts = try #require(Self.parts(url.path), "\(text)")
            #expect(try get(url.path).status == 200, "\(text)")
            expectAccessDenied(try get("/bucket/" + parts.key), "Access Denied", "\(text) unsigned")
        }
    }

    @Test func liveQueryEvents_CarryTheSameSignedURLs() throws {
        // The WebSocket server renders events with the application's encoder, as the routes do.
        let key = signed.key
        let payload =
            #"{"className":"Photo","op":"insert","old":null,"new":{"object_id":"abc","created_at":"2026-11-23T06:00:00.123+00:00","original_key":"\#(key)"}}"#
        let event = try #require(LiveQueryEvent.decode(payload).event)
        let object = event.parseObject(event.new!, keys: nil, encoder: server.application.makeEncoder())
        #expect((object["original"] as? [String: Any])?["url"] as? String == url.absoluteString)
    }

    @Test func noSigningKey_RefusesEveryRequest_AndServeRefusesToStart() throws {
        var configuration = GalleryConfiguration()
        configuration.databaseURL = "postgresql://localhost/x"
        configuration.masterKey = TestServer.masterKey
        #expect(throws: ConfigurationError.self) { try configuration.validateForServing() }
        configuration.urlSigningKey = String(TestServer.urlSigningKey.prefix(AssetURLSigner.minimumKeyLength - 1))
        #expect(throws: ConfigurationError.self) { try configuration.validateForServing() }
        configuration.urlSigningKey = String(TestServer.urlSigningKey.prefix(AssetURLSigner.minimumKeyLength))
        try configuration.validateForServing()
        configuration.urlSigningKey = nil
        configuration.bucketPublic = true
        try configuration.validateForServing()
        // An embedding that skips the check gets a closed bucket, not an open one.
        let closed = try TestServer(workers: 0, listening: true) {
            $0.bucketPublic = false
            $0.urlSigningKey = nil
        }
        defer { closed.stop() }
        let file = try closed.request(
            "POST", "/parse/files/c.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
        let text = try #require(file.json["url"] as? String)
        let r = try RawHTTPClient.exchange(
            port: closed.application.port,
            head: "GET \(URL(string: text)!.path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        #expect(r.status == 403)
    }

    @Test func signingKey_IsMaskedByCheckConfig_AndReadFromTheEnvironment() throws {
        let configuration = try GalleryConfiguration.load(
            file: nil,
            environment: [
                "GALLERYD_URL_SIGNING_KEY": "env-signing-key-0123456789abcdefghij",
                "GALLERYD_URL_WINDOW_SECONDS": "3600",
            ])
        #expect(configuration.urlSigningKey == "env-signing-key-0123456789abcdefghij")
        #expect(configuration.urlWindowSeconds == 3600)
        let rendered = configuration.rendered()
        #expect(!rendered.contains("env-signing-key"))
        #expect(rendered.contains("url_signing_key = \"********\""))
        #expect(throws: ConfigurationError.self) {
            try GalleryConfiguration.load(file: nil, environment: ["GALLERYD_URL_WINDOW_SECONDS": "0"])
        }
    }
}
