import Foundation
import GalleryTestSupport
import Testing
@testable import GalleryApp

/// Private assets (`bucket_public = false`, the default): every asset URL handed out is signed,
/// and the bucket serves only signed, unexpired URLs, answering anything else 403 `AccessDenied`.
@Suite(.serialized) final class SignedAssetURLTests {
    let server: TestServer
    let jpeg: [UInt8]
    /// The signed URL of an uploaded original, as `POST /files` answered it.
    let url: URL

    init() throws {
        // The defaults, as a fresh install has them (TestServer opens the bucket for other suites).
        server = try TestServer(workers: 1) { configuration in
            let defaults = GalleryConfiguration()
            configuration.bucketPublic = defaults.bucketPublic
            configuration.urlWindowSeconds = defaults.urlWindowSeconds
            configuration.urlValiditySeconds = defaults.urlValiditySeconds
            configuration.thumbnailSize = 32
            configuration.previewSize = 64
        }
        jpeg = try TestJPEG.make(width: 120, height: 90, seed: 57)
        let file = try server.request("POST", "/parse/files/s.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
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
            port: server.application.port, head: "\(method) \(target) HTTP/1.1\r\nHost: t\r\n\(headers)Connection: close\r\n\r\n")
    }

    var target: String { url.path + "?" + (url.query ?? "") }

    func query(_ target: String) -> [String: String] {
        var items: [String: String] = [:]
        for part in (target.split(separator: "?").last ?? "").split(separator: "&") {
            let pair = part.split(separator: "=", maxSplits: 1)
            items[String(pair[0])] = pair.count > 1 ? String(pair[1]) : ""
        }
        return items
    }

    func expectAccessDenied(_ response: RawHTTPResponse, _ message: String = "Access Denied", _ comment: Comment? = nil) {
        #expect(response.status == 403, comment)
        let body = String(decoding: response.body, as: UTF8.self)
        #expect(body.contains("<Code>AccessDenied</Code>"), comment)
        #expect(body.contains("<Message>\(message)</Message>"), comment)
        #expect(response.header("Content-Type") == "application/xml", comment)
        // Never the object's bytes, and never cached.
        #expect(!body.contains("JFIF"), comment)
        #expect(response.header("Cache-Control") == "no-store", comment)
    }

    @Test func defaults_AreAPrivateBucket_AUrlStableForADay_AndValidForSevenDays() {
        let defaults = GalleryConfiguration()
        #expect(defaults.bucketPublic == false)
        #expect(defaults.urlSigningKey == nil)
        #expect(defaults.urlWindowSeconds == 86_400)
        #expect(defaults.urlValiditySeconds == 604_800)
    }

    @Test func upload_AnswersASignedURL_ThatTheBucketServes() throws {
        let items = query(target)
        let expires = try #require(items[AssetURLSigner.expiresParameter].flatMap { Int64($0) })
        let signature = try #require(items[AssetURLSigner.signatureParameter])
        #expect(signature.count == 43, "base64url of 32 bytes, unpadded: \(signature)")
        #expect(signature.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        let now = Int64(Date().timeIntervalSince1970)
        #expect(expires >= now + 604_800 && expires <= now + 604_800 + 86_400 + 5)
        let r = try get(target)
        #expect(r.status == 200)
        #expect(r.body == jpeg)
    }

    @Test func missingSignature_Is403AccessDenied_ForAnExistingKeyAndAMissingOne() throws {
        expectAccessDenied(try get(url.path), "Access Denied", "no query")
        expectAccessDenied(try get(url.path + "?\(AssetURLSigner.expiresParameter)=\(query(target)[AssetURLSigner.expiresParameter]!)"))
        expectAccessDenied(try get(url.path + "?\(AssetURLSigner.signatureParameter)=\(query(target)[AssetURLSigner.signatureParameter]!)"))
        // A key that does not exist says no more than one that does: 403, not 404.
        expectAccessDenied(try get("/bucket/originals/" + String(repeating: "0", count: 64) + ".jpg"))
        let head = try get("/bucket/thumbnails/nosuchid00.jpg", method: "HEAD")
        #expect(head.status == 403)
        #expect(head.body.isEmpty)
    }

    @Test func tamperedPathExpiryOrSignature_Is403AccessDenied() throws {
        let items = query(target)
        let expires = items[AssetURLSigner.expiresParameter]!
        let signature = items[AssetURLSigner.signatureParameter]!
        let e = AssetURLSigner.expiresParameter, s = AssetURLSigner.signatureParameter
        var flipped = Array(signature)
        flipped[10] = flipped[10] == "A" ? "B" : "A"
        let cases: [(String, String)] = [
            ("another key, this signature", "/bucket/thumbnails/nosuchid00.jpg?\(e)=\(expires)&\(s)=\(signature)"),
            ("the path changed", url.path.replacingOccurrences(of: "originals/", with: "previews/") + "?\(e)=\(expires)&\(s)=\(signature)"),
            ("a later expiry", url.path + "?\(e)=\(Int64(expires)! + 1)&\(s)=\(signature)"),
            ("an earlier expiry", url.path + "?\(e)=\(Int64(expires)! - 86_400)&\(s)=\(signature)"),
            ("one character of the signature", url.path + "?\(e)=\(expires)&\(s)=\(String(flipped))"),
            ("a truncated signature", url.path + "?\(e)=\(expires)&\(s)=\(signature.dropLast())"),
            ("an empty signature", url.path + "?\(e)=\(expires)&\(s)="),
            ("a hex signature", url.path + "?\(e)=\(expires)&\(s)=" + String(repeating: "ab", count: 32)),
            ("expiry not digits", url.path + "?\(e)=\(expires)x&\(s)=\(signature)"),
            ("expiry negative", url.path + "?\(e)=-\(expires)&\(s)=\(signature)"),
            ("signature twice", target + "&\(s)=\(signature)"),
            ("signed with another key", url.path + "?" + String(decoding: AssetURLSigner(
                key: "another-signing-key-0123456789abcdef", bucket: "bucket", windowSeconds: 86_400, validitySeconds: 604_800
            ).query(forKey: String(url.path.dropFirst("/bucket/".count)), expires: Int64(expires)!).dropFirst(), as: UTF8.self)),
        ]
        for (name, target) in cases {
            expectAccessDenied(try get(target), "Access Denied", "\(name): \(target)")
        }
        // The untampered URL still works, and extra parameters (a client's cache buster) do no harm.
        #expect(try get(target).status == 200)
        #expect(try get(target + "&v=2").status == 200)
    }

    @Test func expiredSignature_Is403_RequestHasExpired() throws {
        let key = String(url.path.dropFirst("/bucket/".count))
        let past = Int64(Date().timeIntervalSince1970) - 10
        let expired = String(decoding: signer.query(forKey: key, expires: past), as: UTF8.self)
        expectAccessDenied(try get(url.path + expired), "Request has expired")
        // The same signer's current URL is the server's, byte for byte: the window makes it stable.
        let current = String(decoding: signer.query(forKey: key, expires: signer.expiresNow()), as: UTF8.self)
        #expect(url.path + current == target)
        #expect(try get(url.path + current).status == 200)
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
        // Conditional and range requests without a signature are refused like any other.
        expectAccessDenied(try get(url.path, headers: "If-None-Match: \(etag)\r\n"))
        expectAccessDenied(try get(url.path, headers: "Range: bytes=0-9\r\n"))
    }

    @Test func everyAnswerWithFiles_CarriesSignedURLs_StableAcrossRequests_ThatServe() throws {
        let photo = try server.uploadPhoto(try TestJPEG.make(width: 96, height: 64, seed: 58), name: "m.jpg")
        #expect(try server.waitForProcessing(photo) == "ready")
        let gallery = try #require(try server.json("POST", "/parse/classes/Gallery", ["name": "G"]).json["objectId"] as? String)
        let item = try server.json("POST", "/parse/classes/GalleryItem", [
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
            ((try server.request("GET", "/parse/classes/GalleryItem?include=photo").json["results"] as? [[String: Any]])?.first)?["photo"]
                as? [String: Any])
        let batch = try server.json("POST", "/parse/batch", ["requests": [
            ["method": "GET", "path": "/parse/classes/Photo/\(photo)"],
        ]])
        let batched = urls(((batch.jsonArray.first as? [String: Any])?["success"]) as? [String: Any])
        #expect(found.count == 3)
        // Byte-identical everywhere within the window: clients' URL-keyed caches keep hitting.
        #expect(fetched == found)
        #expect(included == found)
        #expect(batched == found)
        #expect(urls(try server.request("GET", "/parse/classes/Photo/\(photo)").json) == found)
        for text in found {
            let url = try #require(URL(string: text))
            #expect(url.query?.contains(AssetURLSigner.signatureParameter + "=") == true, "\(text)")
            #expect(try get(url.path + "?" + url.query!).status == 200, "\(text)")
            expectAccessDenied(try get(url.path), "Access Denied", "\(text) unsigned")
        }
    }

    @Test func liveQueryEvents_CarryTheSameSignedURLs() throws {
        // The WebSocket server renders events with the application's encoder, as the routes do.
        let key = String(url.path.dropFirst("/bucket/".count))
        let payload = #"{"className":"Photo","op":"insert","old":null,"new":{"object_id":"abc","created_at":"2026-11-23T06:00:00.123+00:00","original_key":"\#(key)"}}"#
        let event = try #require(LiveQueryEvent.decode(payload).event)
        let object = event.parseObject(event.new!, keys: nil, encoder: server.application.makeEncoder())
        #expect((object["original"] as? [String: Any])?["url"] as? String == url.absoluteString)
    }

    @Test func noSigningKey_RefusesEveryRequest_AndServeRefusesToStart() throws {
        var configuration = GalleryConfiguration()
        configuration.databaseURL = "postgresql://localhost/x"
        configuration.masterKey = TestServer.masterKey
        #expect(throws: ConfigurationError.self) { try configuration.validateForServing() }
        configuration.urlSigningKey = String(repeating: "k", count: AssetURLSigner.minimumKeyLength - 1)
        #expect(throws: ConfigurationError.self) { try configuration.validateForServing() }
        configuration.urlSigningKey = String(repeating: "k", count: AssetURLSigner.minimumKeyLength)
        try configuration.validateForServing()
        configuration.urlSigningKey = nil
        configuration.bucketPublic = true
        try configuration.validateForServing()
        // An embedding that skips the check gets a closed bucket, not an open one.
        let closed = try TestServer(workers: 0) { $0.bucketPublic = false; $0.urlSigningKey = nil }
        defer { closed.stop() }
        let file = try closed.request("POST", "/parse/files/c.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
        let text = try #require(file.json["url"] as? String)
        let r = try RawHTTPClient.exchange(
            port: closed.application.port, head: "GET \(URL(string: text)!.path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        #expect(r.status == 403)
    }

    @Test func signingKey_IsMaskedByCheckConfig_AndReadFromTheEnvironment() throws {
        let configuration = try GalleryConfiguration.load(
            file: nil, environment: ["GALLERYD_URL_SIGNING_KEY": "env-signing-key-0123456789abcdefghij", "GALLERYD_URL_WINDOW_SECONDS": "3600"])
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

/// The signer alone: windows, canonical string, encoding.
@Suite struct AssetURLSignerTests {
    let signer = AssetURLSigner(key: "unit-test-signing-key-0123456789abcdef", bucket: "bucket", windowSeconds: 86_400, validitySeconds: 604_800)

    @Test func expiry_IsTheSameInsideAWindow_AndMovesOnInTheNext() {
        let start: Int64 = 1_800_000_000 / 86_400 * 86_400
        let first = signer.expires(at: start)
        #expect(first == start + 86_400 + 604_800)
        for t in [start, start + 1, start + 43_200, start + 86_399] {
            #expect(signer.expires(at: t) == first, "\(t)")
            #expect(signer.expires(at: t) - t >= 604_800, "valid at least the validity from \(t)")
            #expect(signer.expires(at: t) - t <= 604_800 + 86_400)
        }
        #expect(signer.expires(at: start + 86_400) == first + 86_400)
        // Same key, same window: byte-identical queries (from the cache or not); another window: another.
        let a = signer.query(forKey: "thumbnails/Ab3dE5fG7h.jpg", expires: signer.expires(at: start + 5))
        let b = signer.query(forKey: "thumbnails/Ab3dE5fG7h.jpg", expires: signer.expires(at: start + 80_000))
        let next = signer.query(forKey: "thumbnails/Ab3dE5fG7h.jpg", expires: signer.expires(at: start + 86_400))
        #expect(a == b)
        #expect(a != next)
        // After the cache moved on to the next window, the earlier window's query is still the same bytes.
        #expect(signer.query(forKey: "thumbnails/Ab3dE5fG7h.jpg", expires: signer.expires(at: start)) == a)
    }

    @Test func encoder_SignsEveryFileURL_AlsoForACDN_AndTheyVerify() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_123)
        let encoder = ParseObjectEncoder(
            publicURL: "https://photos.example", bucket: "bucket", assetURL: "https://cdn.example.com/g/", signer: signer, now: now)
        let later = ParseObjectEncoder(
            publicURL: "https://photos.example", bucket: "bucket", assetURL: "https://cdn.example.com/g/", signer: signer,
            now: now.addingTimeInterval(60))
        let url = encoder.url(forKey: "thumbnails/AbCdEf1234.jpg")
        #expect(url.hasPrefix("https://cdn.example.com/g/thumbnails/AbCdEf1234.jpg?X-Gallery-Expires="))
        #expect(later.url(forKey: "thumbnails/AbCdEf1234.jpg") == url)
        let bytes = try encoder.object(ParseObjectEncoderTests.photoRow, projection: .all(.photo))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect((object["thumbnail"] as? [String: Any])?["url"] as? String == url)
        let original = try #require((object["original"] as? [String: Any])?["url"] as? String)
        let query = String(original.split(separator: "?")[1])
        try signer.verify(key: "originals/abc.jpg", query: query, now: 1_800_000_123)
        #expect(throws: AssetURLError.signatureMismatch) { try signer.verify(key: "originals/abd.jpg", query: query, now: 1_800_000_123) }
        #expect(throws: AssetURLError.self) { try signer.verify(key: "originals/abc.jpg", query: query, now: 1_800_000_123 + 700_000 + 86_400) }
        #expect(throws: AssetURLError.missing) { try signer.verify(key: "originals/abc.jpg", query: nil, now: 0) }
    }

    @Test func signature_IsHMACSHA256_OfTheDocumentedCanonicalString_Base64URL() {
        // RFC 4648 §10 vectors, base64url without padding.
        #expect(AssetURLSigner.base64URL(Array("foobar".utf8)) == Array("Zm9vYmFy".utf8))
        #expect(AssetURLSigner.base64URL(Array("fooba".utf8)) == Array("Zm9vYmE".utf8))
        #expect(AssetURLSigner.base64URL(Array("foob".utf8)) == Array("Zm9vYg".utf8))
        #expect(AssetURLSigner.base64URL([0xfb, 0xff]) == Array("-_8".utf8))
        // Computed independently: printf 'galleryd-asset-v1\n/bucket/thumbnails/x.jpg\n1800000000' |
        //   openssl dgst -sha256 -hmac unit-test-signing-key-0123456789abcdef -binary | basenc --base64url
        let signature = String(decoding: signer.signature(key: Array("thumbnails/x.jpg".utf8), expires: 1_800_000_000), as: UTF8.self)
        #expect(signature == Self.opensslSignature)
    }

    static let opensslSignature = "AIfoDCOuVS53Kqa_GPo7Bfne7SWpyj4D2q1UAo_l75Y"
}
